"""(being written)"""

from __future__ import annotations

from typing import Any

from localeval.metrics.definition import MetricDef

TOOL_CALLS_METRICS: dict[str, MetricDef] = {}
TOOL_CALLS_ALIASES: dict[str, tuple[str, dict[str, Any]]] = {}
