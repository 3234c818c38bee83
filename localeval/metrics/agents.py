"""(being written)"""

from __future__ import annotations

from typing import Any

from localeval.metrics.definition import MetricDef

AGENTS_METRICS: dict[str, MetricDef] = {}
AGENTS_ALIASES: dict[str, tuple[str, dict[str, Any]]] = {}
