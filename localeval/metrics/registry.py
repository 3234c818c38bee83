"""Metrics by name: their steps, the sample fields they need, their options, and what reports need to know."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

from localeval.errors import LocalevalError
from localeval.metrics.agents import AGENTS_ALIASES, AGENTS_METRICS
from localeval.metrics.answer_correctness import answer_correctness, semantic_similarity
from localeval.metrics.answer_relevancy import answer_relevancy
from localeval.metrics.context_precision import context_precision, context_utilization, precision_at_k
from localeval.metrics.context_recall import context_recall
from localeval.metrics.criteria import criteria_specs
from localeval.metrics.definition import MetricDef, MetricSpec, Role, TraceKind  # noqa: F401 (re-exported)
from localeval.metrics.entity_recall import context_entity_recall
from localeval.metrics.factual_correctness import factual_correctness
from localeval.metrics.faithfulness import faithfulness
from localeval.metrics.judged_texts import JUDGED_TEXTS_ALIASES, JUDGED_TEXTS_METRICS
from localeval.metrics.noise_sensitivity import noise_sensitivity
from localeval.metrics.options import apply_options, did_you_mean, option_words  # noqa: F401 (re-exported)
from localeval.metrics.ratings import answer_accuracy, ragas_context_relevance, response_groundedness
from localeval.metrics.retrieval import hit_rate, id_context_precision, id_context_recall, mrr, ndcg
from localeval.metrics.string_contexts import non_llm_context_precision, non_llm_context_recall
from localeval.metrics.strings import (
    MEASURES,
    ROUGE_MODES,
    ROUGE_TYPES,
    bleu_score,
    chrf_score,
    exact_match,
    non_llm_string_similarity,
    quoted_spans_alignment,
    rouge_score,
    string_presence,
)
from localeval.metrics.tool_calls import TOOL_CALLS_ALIASES, TOOL_CALLS_METRICS

Q, CTX, RESP, REF = "user_input", "retrieved_contexts", "response", "reference"
IDS = ("retrieved_context_ids", "reference_context_ids")

FAITHFUL_WORDS = ("response statements checked against the contexts", "supported", "unsupported")
RECALL_WORDS = ("reference statements checked against the contexts", "attributed", "not in the contexts")
IDS_FACTS: dict[str, Any] = {"judge": False, "trace": "ids", "role": "retrieval"}
REF_CTX = "reference_contexts"
PAIR = (REF, RESP)
NO_MODEL: dict[str, Any] = {"judge": False}
STRING_CONTEXTS = {"distance_measure": "levenshtein", "threshold": 0.5}
QUOTE_WORDS = ("quoted spans of the response, looked up in the contexts", "found", "not in the contexts")
REF_CTX_WORDS = ("reference contexts, each against its closest retrieved context", "retrieved", "missed")

METRICS: dict[str, MetricDef] = {
    "context_precision": MetricDef(context_precision, (Q, CTX, REF), (CTX,),
                                   summary="average precision of chunks judged useful for the reference",
                                   trace="chunks", role="retrieval"),
    # judged against the response, not a reference: the diagnosis leaves it out
    "context_utilization": MetricDef(context_utilization, (Q, CTX, RESP), (CTX,),
                                     summary="context precision judged against the response", trace="chunks"),
    "precision_at_k": MetricDef(precision_at_k, (Q, CTX, REF), (CTX,), {"k": None},
                                summary="share of the top-k chunks judged useful", trace="chunks", role="retrieval"),
    "context_recall": MetricDef(context_recall, (Q, CTX, REF), (CTX,),
                                summary="share of reference statements the contexts support",
                                trace="statements", trace_words=RECALL_WORDS, role="retrieval"),
    "faithfulness": MetricDef(faithfulness, (Q, CTX, RESP), (CTX,),
                              summary="share of response statements the contexts support",
                              trace="statements", trace_words=FAITHFUL_WORDS, role="generation"),
    "answer_relevancy": MetricDef(answer_relevancy, (Q, RESP), (), {"strictness": 3, "empty": "zero"},
                                  {"empty": ("zero", "nan")}, embedder=True,
                                  summary="cosine of generated questions to the input", trace="questions",
                                  role="generation"),
    "factual_correctness": MetricDef(
        factual_correctness, (RESP, REF), (),
        {"mode": "f1", "beta": 1.0, "atomicity": "low", "coverage": "low", "empty": "zero"},
        {"mode": ("f1", "precision", "recall"), "atomicity": ("low", "high"), "coverage": ("low", "high"),
         "empty": ("zero", "nan")},
        summary="claim-level precision/recall/F-beta of response vs reference", trace="claims",
        verdicts_key="response_verdicts", role="generation"),
    "noise_sensitivity": MetricDef(noise_sensitivity, (Q, CTX, RESP, REF), (CTX,),
                                   {"mode": "relevant", "asks": "separate"},
                                   {"mode": ("relevant", "irrelevant"), "asks": ("separate", "merged")},
                                   summary="wrong statements supported by relevant chunks", trace="noise",
                                   higher_is_better=False, role="generation"),
    "context_entity_recall": MetricDef(context_entity_recall, (CTX, REF), (CTX,),
                                       summary="share of the reference's named entities the contexts name",
                                       role="retrieval"),
    "context_relevance": MetricDef(ragas_context_relevance, (Q, CTX), (CTX,),
                                   summary="two judges rate the contexts' relevance to the question (0-2)",
                                   role="retrieval"),
    "answer_accuracy": MetricDef(answer_accuracy, (Q, RESP, REF), (),
                                 summary="two judges rate the response against the reference (0/2/4)",
                                 role="generation"),
    "response_groundedness": MetricDef(response_groundedness, (RESP, CTX), (CTX,),
                                       summary="two judges rate how far the contexts support the response (0-2)",
                                       role="generation"),
    "answer_correctness": MetricDef(answer_correctness, (Q, RESP, REF), (), {"beta": 1.0, "weight": 0.25},
                                    embedder=True, trace="claims", verdicts_key="response_verdicts",
                                    summary="statement F-beta vs the reference, weighted with semantic similarity",
                                    role="generation"),
    "semantic_similarity": MetricDef(semantic_similarity, (RESP, REF), (), {"threshold": None}, judge=False,
                                     embedder=True, summary="cosine of response and reference embeddings"),
    "id_context_precision": MetricDef(id_context_precision, IDS, IDS, summary="retrieved ids that are reference ids",
                                      **IDS_FACTS),
    "id_context_recall": MetricDef(id_context_recall, IDS, IDS, summary="reference ids that were retrieved",
                                   **IDS_FACTS),
    "hit_rate": MetricDef(hit_rate, IDS, IDS, {"k": None}, summary="any reference id in top k", **IDS_FACTS),
    "mrr": MetricDef(mrr, IDS, IDS, {"k": None}, summary="1/rank of the first reference id", **IDS_FACTS),
    "ndcg": MetricDef(ndcg, IDS, IDS, {"k": None}, summary="NDCG at k, binary relevance", **IDS_FACTS),
    "exact_match": MetricDef(exact_match, PAIR, summary="1 when the response equals the reference", **NO_MODEL),
    "string_presence": MetricDef(string_presence, PAIR, summary="1 when the reference occurs in the response",
                                 **NO_MODEL),
    "non_llm_string_similarity": MetricDef(non_llm_string_similarity, PAIR, (), {"distance_measure": "levenshtein"},
                                           {"distance_measure": MEASURES},
                                           summary="1 minus the normalised edit distance to the reference",
                                           **NO_MODEL),
    "bleu_score": MetricDef(bleu_score, PAIR, summary="BLEU of the response against the reference (sacrebleu)",
                            **NO_MODEL),
    "rouge_score": MetricDef(rouge_score, PAIR, (), {"rouge_type": "rougeL", "mode": "fmeasure"},
                             {"rouge_type": ROUGE_TYPES, "mode": ROUGE_MODES},
                             summary="ROUGE of the response against the reference (rouge-score)", **NO_MODEL),
    "chrf_score": MetricDef(chrf_score, PAIR, summary="character n-gram F-score (chrF) against the reference "
                            "(sacrebleu)", **NO_MODEL),
    "quoted_spans_alignment": MetricDef(quoted_spans_alignment, (RESP, CTX), (), {"casefold": "true",
                                        "min_span_words": 3}, {"casefold": ("true", "false")},
                                        summary="share of the response's quoted spans found in the contexts",
                                        trace="statements", trace_words=QUOTE_WORDS, role="generation",
                                        **NO_MODEL),
    "non_llm_context_precision": MetricDef(
        non_llm_context_precision, (CTX, REF_CTX), (REF_CTX,), STRING_CONTEXTS,
        {"distance_measure": MEASURES}, summary="average precision of chunks similar to a reference context",
        trace="chunks", role="retrieval", **NO_MODEL),
    "non_llm_context_recall": MetricDef(
        non_llm_context_recall, (CTX, REF_CTX), (CTX, REF_CTX), STRING_CONTEXTS, {"distance_measure": MEASURES},
        summary="share of reference contexts similar to a retrieved chunk", trace="statements",
        trace_words=REF_CTX_WORDS, role="retrieval", **NO_MODEL),
    **JUDGED_TEXTS_METRICS,  # summary score, instance-specific rubrics, SQL semantic equivalence
    **TOOL_CALLS_METRICS,  # the agent metrics that compare tool calls, no model
    **AGENTS_METRICS,  # the agent metrics the judge reads a conversation for
}
ALIASES: dict[str, tuple[str, dict[str, Any]]] = {
    "response_relevancy": ("answer_relevancy", {}),
    "noise_sensitivity_irrelevant": ("noise_sensitivity", {"mode": "irrelevant"}),
    "noise_sensitivity_relevant": ("noise_sensitivity", {"mode": "relevant"}),
    "context_precision_without_reference": ("context_utilization", {}),
    "non_llm_context_precision_with_reference": ("non_llm_context_precision", {}),  # Ragas' name
    "string_present": ("string_presence", {}),  # Ragas' name for StringPresence's score
    **JUDGED_TEXTS_ALIASES,
    **TOOL_CALLS_ALIASES,
    **AGENTS_ALIASES,
}

CRITERIA_SUFFIXES = (".toml", ".py")  # a metric spec starting with such a path names a criteria file

DEFAULT_METRICS = (
    "context_precision",
    "context_recall",
    "faithfulness",
    "answer_relevancy",
    "factual_correctness",
    "noise_sensitivity",
)


def _unknown_metric(base: str) -> LocalevalError:
    if "(" in base and base.endswith(")"):  # a run's column name, e.g. factual_correctness(mode=precision)
        name, _, inside = base[:-1].partition("(")
        written = ":".join([name, *inside.split(",")])
        return LocalevalError(f"unknown metric {base!r}: write options after colons, e.g. {written!r}")
    if base.endswith((".yaml", ".yml", ".json")):
        return LocalevalError(f"{base}: criteria files are TOML (.toml) or Python (.py); write the criteria as "
                              "TOML tables, as in examples/criteria.toml")
    names = [*METRICS, *ALIASES]
    close = closest(base, names)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    return LocalevalError(f"unknown metric {base!r}{hint} (`localeval metrics` lists all {len(names)} names, what "
                          "each needs and its options)")


def closest(given: str, names: Sequence[str], most: int = 4) -> list[str]:
    """The few names ``given`` is likeliest to mean: close in spelling, or containing it (``bleu``: bleu_score).

    >>> closest("faithfullness", ["faithfulness", "context_recall"])
    ['faithfulness']
    >>> closest("bleu", ["bleu_score", "chrf_score"])
    ['bleu_score']
    """
    spelled = difflib.get_close_matches(given, list(names), n=most, cutoff=0.6)
    within = [n for n in names if len(given) >= 3 and given.lower() in n] if not spelled else []
    return list(dict.fromkeys([*spelled, *within]))[:most]


def parse_metric_items(text: str) -> list[MetricSpec]:
    """One spec, or one per criterion of a criteria file named without a criterion (``criteria.toml``)."""
    parts = [p.strip() for p in text.strip().split(":")]
    if parts[0].endswith(CRITERIA_SUFFIXES):
        return criteria_specs(parts, reserved=[*METRICS, *ALIASES])
    return [parse_metric(text)]


def parse_metric(text: str) -> MetricSpec:
    """``"factual_correctness:mode=precision:beta=0.5"``, ``"ndcg:k=5"`` or ``"criteria.toml:polite"`` -> a spec."""
    base, *parts = [p.strip() for p in text.strip().split(":")]
    if base.endswith(CRITERIA_SUFFIXES):
        specs = criteria_specs([base, *parts], reserved=[*METRICS, *ALIASES])
        if len(specs) > 1:
            raise LocalevalError(f"{base} defines {len(specs)} criteria; name one, e.g. {base}:{specs[0].name}")
        return specs[0]
    preset: dict[str, Any] = {}
    if base in ALIASES:
        base, preset = ALIASES[base]
    if base not in METRICS:
        raise _unknown_metric(base)
    definition = METRICS[base]
    options = apply_options(base, definition, preset, parts)
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
        for spec in parse_metric_items(item):
            first = specs.setdefault(spec.name, spec)
            if first.base != spec.base:
                raise LocalevalError(f"two metrics would share the column {spec.name!r}: {first.base} and "
                                     f"{spec.base}; rename one criterion")
    if not specs:
        raise LocalevalError("no metric chosen")
    return list(specs.values())


def base_name(metric: str) -> str:
    """A metric's name without its options, written either way: ``factual_correctness(mode=precision)`` or
    ``factual_correctness:mode=precision`` -> ``factual_correctness``."""
    return metric.split("(", 1)[0].split(":", 1)[0]


def spelling(column: str) -> str:
    """A run's column as ``--metrics`` writes it, a word a shell takes as it is (Ragas' column names hold
    parentheses, which a shell does not).

    >>> spelling("factual_correctness(mode=precision,beta=0.5)")
    'factual_correctness:mode=precision:beta=0.5'
    >>> spelling("faithfulness")
    'faithfulness'
    """
    base, paren, inside = column.partition("(")
    if not paren or not inside.endswith(")"):
        return column
    return ":".join([base, *inside[:-1].split(",")])


def column_of(name: str, columns: Sequence[str]) -> str | None:
    """The column of ``columns`` (a run's) that a metric name means: the column itself, or the metric as
    ``--metrics`` writes it (``factual_correctness:mode=precision``, options in any order, an alias); None when
    none is."""
    if name in columns:
        return name
    spelled = {spelling(c): c for c in columns}
    if name.strip() in spelled:
        return spelled[name.strip()]
    try:
        column = parse_metric(name).name
    except LocalevalError:
        return None
    return column if column in columns else None


# The names a run's columns start with: the metrics, and the aliases that parse_metric keeps as a column name.
COLUMN_BASES: dict[str, MetricDef] = {
    **METRICS,
    **{alias: METRICS[base] for alias, (base, _) in ALIASES.items() if parse_metric(alias).name == alias},
}


def definition_of(metric: str) -> MetricDef | None:
    """The definition behind a run's column name (``ndcg(k=5)``, ``noise_sensitivity_irrelevant``), None if unknown."""
    return COLUMN_BASES.get(base_name(metric))


def metrics_in_role(role: Role) -> tuple[str, ...]:
    """The column base names the diagnosis reads as ``role``, in registry order."""
    return tuple(name for name, d in COLUMN_BASES.items() if d.role == role)
