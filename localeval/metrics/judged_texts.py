"""The last judged single-turn metrics of Ragas 0.4.3: summary score, instance-specific rubrics and SQL
semantic equivalence (their steps live in ``summary_score.py``, ``instance_rubrics.py`` and
``sql_equivalence.py``); the registry merges these definitions into its table."""

from __future__ import annotations

from typing import Any

from localeval.metrics.definition import MetricDef
from localeval.metrics.instance_rubrics import instance_rubrics
from localeval.metrics.sql_equivalence import sql_semantic_equivalence
from localeval.metrics.summary_score import summary_score

JUDGED_TEXTS_METRICS: dict[str, MetricDef] = {
    "summary_score": MetricDef(summary_score, ("reference_contexts", "response"), ("reference_contexts",),
                               {"length_penalty": "true", "coeff": 0.5}, {"length_penalty": ("true", "false")},
                               summary="key-fact questions the summary answers, blended with its brevity",
                               trace="summary", role="generation"),
    "instance_specific_rubrics": MetricDef(instance_rubrics, ("rubrics",),
                                           summary="the level the judge picks on the sample's own rubric",
                                           trace="rubric"),
    "sql_semantic_equivalence": MetricDef(sql_semantic_equivalence, ("response", "reference"),
                                          summary="1 when the judge finds both SQL queries return the same",
                                          trace="sql"),
}
JUDGED_TEXTS_ALIASES: dict[str, tuple[str, dict[str, Any]]] = {
    "instance_rubrics": ("instance_specific_rubrics", {}),  # Ragas' legacy name
}
