"""Metrics by name: their steps, the sample fields they need, and their options."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from localeval.errors import LocalevalError
from localeval.metrics.answer_relevancy import answer_relevancy
from localeval.metrics.context_precision import context_precision, context_utilization, precision_at_k
from localeval.metrics.context_recall import context_recall
from localeval.metrics.factual_correctness import factual_correctness
from localeval.metrics.faithfulness import faithfulness
from localeval.metrics.noise_sensitivity import noise_sensitivity
from localeval.metrics.retrieval import hit_rate, id_context_precision, id_context_recall, mrr, ndcg
from localeval.steps import Steps


@dataclass(frozen=True)
class MetricDef:
    """A metric as the registry knows it."""

    steps: Callable[..., Steps]
    required: tuple[str, ...]  # sample fields that must be present
    nonempty: tuple[str, ...] = ()  # list fields that must not be empty
    options: dict[str, Any] = field(default_factory=dict)  # name -> default
    choices: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    judge: bool = True
    embedder: bool = False
    summary: str = ""


Q, CTX, RESP, REF = "user_input", "retrieved_contexts", "response", "reference"
IDS = ("retrieved_context_ids", "reference_context_ids")

METRICS: dict[str, MetricDef] = {
    "context_precision": MetricDef(context_precision, (Q, CTX, REF), (CTX,),
                                   summary="average precision of chunks judged useful for the reference"),
    "context_utilization": MetricDef(context_utilization, (Q, CTX, RESP), (CTX,),
                                     summary="context precision judged against the response"),
    "precision_at_k": MetricDef(precision_at_k, (Q, CTX, REF), (CTX,), {"k": None},
                                summary="share of the top-k chunks judged useful"),
    "context_recall": MetricDef(context_recall, (Q, CTX, REF), (CTX,),
                                summary="share of reference statements the contexts support"),
    "faithfulness": MetricDef(faithfulness, (Q, CTX, RESP), (CTX,),
                              summary="share of response statements the contexts support"),
    "answer_relevancy": MetricDef(answer_relevancy, (Q, RESP), (), {"strictness": 3, "empty": "zero"},
                                  {"empty": ("zero", "nan")}, embedder=True,
                                  summary="cosine of generated questions to the input"),
    "factual_correctness": MetricDef(
        factual_correctness, (RESP, REF), (),
        {"mode": "f1", "beta": 1.0, "atomicity": "low", "coverage": "low", "empty": "zero"},
        {"mode": ("f1", "precision", "recall"), "atomicity": ("low", "high"), "coverage": ("low", "high"),
         "empty": ("zero", "nan")},
        summary="claim-level precision/recall/F-beta of response vs reference"),
    "noise_sensitivity": MetricDef(noise_sensitivity, (Q, CTX, RESP, REF), (CTX,),
                                   {"mode": "relevant", "asks": "separate"},
                                   {"mode": ("relevant", "irrelevant"), "asks": ("separate", "merged")},
                                   summary="wrong statements supported by relevant chunks"),
    "id_context_precision": MetricDef(id_context_precision, IDS, IDS, judge=False,
                                      summary="retrieved ids that are reference ids"),
    "id_context_recall": MetricDef(id_context_recall, IDS, IDS, judge=False,
                                   summary="reference ids that were retrieved"),
    "hit_rate": MetricDef(hit_rate, IDS, IDS, {"k": None}, judge=False, summary="any reference id in top k"),
    "mrr": MetricDef(mrr, IDS, IDS, {"k": None}, judge=False, summary="1/rank of the first reference id"),
    "ndcg": MetricDef(ndcg, IDS, IDS, {"k": None}, judge=False, summary="NDCG at k, binary relevance"),
}
ALIASES: dict[str, tuple[str, dict[str, Any]]] = {
    "response_relevancy": ("answer_relevancy", {}),
    "noise_sensitivity_irrelevant": ("noise_sensitivity", {"mode": "irrelevant"}),
    "noise_sensitivity_relevant": ("noise_sensitivity", {"mode": "relevant"}),
    "context_precision_without_reference": ("context_utilization", {}),
}

DEFAULT_METRICS = (
    "context_precision",
    "context_recall",
    "faithfulness",
    "answer_relevancy",
    "factual_correctness",
    "noise_sensitivity",
)


@dataclass(frozen=True)
class MetricSpec:
    """A metric chosen for a run: its definition and the option values in force."""

    name: str  # the column name: the metric's name, plus any option that differs from its default
    base: str
    definition: MetricDef
    options: dict[str, Any]

    def canonical(self) -> str:
        """A string ``parse_metric`` turns back into this spec (options that differ from defaults)."""
        changed = [f"{k}={v}" for k, v in self.options.items() if v != self.definition.options[k]]
        return ":".join([self.base, *changed])

    def steps(self, sample: Any, trace: dict) -> Steps:
        """Start this metric's generator for one sample."""
        return self.definition.steps(sample, trace, **self.options)


def _convert(metric: str, key: str, raw: str, default: Any) -> Any:
    if raw.lower() in ("none", "all") and key == "k":
        return None
    try:
        if key in ("k", "strictness"):
            value: Any = int(raw)
            if value < 1:
                raise ValueError
            return value
        if key == "beta":
            return float(raw)
    except ValueError:
        kind = "a positive integer" if key in ("k", "strictness") else "a number"
        raise LocalevalError(f"metric {metric}: option {key}={raw!r} must be {kind}") from None
    return raw


def parse_metric(text: str) -> MetricSpec:
    """``"factual_correctness:mode=precision:beta=0.5"`` or ``"ndcg:k=5"`` -> a MetricSpec."""
    base, *parts = [p.strip() for p in text.strip().split(":")]
    preset: dict[str, Any] = {}
    if base in ALIASES:
        base, preset = ALIASES[base]
    if base not in METRICS:
        known = ", ".join([*METRICS, *ALIASES])
        raise LocalevalError(f"unknown metric {base!r}; known metrics: {known}")
    definition = METRICS[base]
    options = {**definition.options, **preset}
    for part in parts:
        key, sep, raw = part.partition("=")
        if not sep or key not in definition.options:
            allowed = ", ".join(definition.options) or "none"
            raise LocalevalError(f"metric {base}: bad option {part!r}; options: {allowed}")
        value = _convert(base, key, raw, definition.options[key])
        if key in definition.choices and value not in definition.choices[key]:
            raise LocalevalError(
                f"metric {base}: {key} must be one of {', '.join(map(str, definition.choices[key]))}"
            )
        options[key] = value
    changed = {k: v for k, v in options.items() if v != definition.options[k]}
    name = base
    if base == "noise_sensitivity" and changed.get("mode") == "irrelevant":
        name, changed = "noise_sensitivity_irrelevant", {k: v for k, v in changed.items() if k != "mode"}
    if changed:
        name += "(" + ",".join(f"{k}={v}" for k, v in changed.items()) + ")"
    return MetricSpec(name, base, definition, options)


def parse_metrics(items: str | Sequence[str] | None) -> list[MetricSpec]:
    """A comma-separated string or a list of metric names with options; duplicates removed."""
    if items is None:
        items = DEFAULT_METRICS
    if isinstance(items, str):
        items = [i for i in items.split(",") if i.strip()]
    specs: dict[str, MetricSpec] = {}
    for item in items:
        spec = parse_metric(item)
        specs.setdefault(spec.name, spec)
    if not specs:
        raise LocalevalError("no metric chosen")
    return list(specs.values())
