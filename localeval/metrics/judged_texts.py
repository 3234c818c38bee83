"""(being written)"""

from __future__ import annotations

from typing import Any

from localeval.metrics.definition import MetricDef

JUDGED_TEXTS_METRICS: dict[str, MetricDef] = {}
JUDGED_TEXTS_ALIASES: dict[str, tuple[str, dict[str, Any]]] = {}
