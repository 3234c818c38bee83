"""The model-free string metrics: Ragas 0.4.3's own scores reproduced (``vectors/ragas-0.4.3-strings.jsonl``,
made by ``vectors/make_string_vectors.py``), their traces, options and the errors of rows that lack a field."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

import localeval
from localeval.data import DataError
from localeval.data.sample import Sample
from localeval.errors import LocalevalError
from localeval.metrics import parse_metric
from localeval.metrics.registry import METRICS
from localeval.nan import Nan
from localeval.scheduler import Scheduler

VECTORS = Path(__file__).parent / "vectors" / "ragas-0.4.3-strings.jsonl"
CASES = [json.loads(line) for line in VECTORS.read_text(encoding="utf-8").splitlines() if line.strip()]
STRING_METRICS = ("exact_match", "string_presence", "non_llm_string_similarity", "bleu_score", "rouge_score",
                  "chrf_score", "quoted_spans_alignment", "non_llm_context_precision",
                  "non_llm_context_recall")


def _word(value: Any) -> str:
    """An option value as localeval spells it (Ragas' True is true)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _spec_text(case: dict[str, Any]) -> str:
    return ":".join([case["metric"], *(f"{k}={_word(v)}" for k, v in case["params"].items())])


def _score(spec_text: str, **fields: Any) -> tuple[Any, dict[str, Any]]:
    """One sample through the scheduler with no judge and no embedder: the outcome and the trace."""
    spec = parse_metric(spec_text)
    sample = Sample(id="s", **{k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()})
    out = Scheduler(None, None, progress=False).run([sample], [spec])
    assert out.engine_calls == 0 and out.embed_calls == 0
    return out.outcomes[spec.name][0], out.traces[spec.name][0]


@pytest.mark.parametrize("case", CASES, ids=[f"{c['metric']}-{i}" for i, c in enumerate(CASES)])
def test_reproduces_ragas(case: dict[str, Any]) -> None:
    value, _ = _score(_spec_text(case), **case["inputs"])
    expected = case["expected"]
    if expected is None:
        assert isinstance(value, Nan), f"Ragas gave NaN, localeval {value}"
    else:
        assert isinstance(value, float), f"Ragas gave {expected}, localeval {value}"
        assert math.isclose(value, expected, rel_tol=0, abs_tol=1e-9), (value, expected)


def test_vectors_cover_every_metric_and_option_value() -> None:
    seen: dict[str, set[tuple[str, Any]]] = {m: set() for m in STRING_METRICS}
    for case in CASES:
        seen[case["metric"]].update(case["params"].items())
    for metric in STRING_METRICS:
        definition = METRICS[metric]
        assert not definition.judge and not definition.embedder
        for key, values in definition.choices.items():
            given = {_word(v) for k, v in seen[metric] if k == key}
            assert given == set(values), (metric, key, given)
    assert {v for k, v in seen["non_llm_context_recall"] if k == "threshold"} >= {0.0, 0.5, 1.0}
    assert {v for k, v in seen["quoted_spans_alignment"] if k == "min_span_words"} >= {0, 1, 3}
    # the edge cases: empty and blank texts, unicode, NaN from Ragas, several contexts
    pairs = [c["inputs"] for c in CASES if c["metric"] == "exact_match"]
    assert {"reference": "", "response": ""} in pairs and any(not p["response"].strip() for p in pairs)
    assert any(not p["reference"].isascii() for p in pairs)
    recall = [c for c in CASES if c["metric"] == "non_llm_context_recall"]
    assert any(c["expected"] is None for c in recall)
    assert any(len(c["inputs"]["retrieved_contexts"]) > 3 for c in recall)


RAGAS_DEFAULTS = {
    "non_llm_string_similarity": {"distance_measure": "levenshtein"},
    "rouge_score": {"rouge_type": "rougeL", "mode": "fmeasure"},
    "quoted_spans_alignment": {"casefold": "true", "min_span_words": 3},
    "non_llm_context_precision": {"distance_measure": "levenshtein", "threshold": 0.5},
    "non_llm_context_recall": {"distance_measure": "levenshtein", "threshold": 0.5},
}


@pytest.mark.parametrize("metric", STRING_METRICS)
def test_defaults_are_ragas_defaults_and_score_as_spelled_out(metric: str) -> None:
    defaults = RAGAS_DEFAULTS.get(metric, {})
    assert parse_metric(metric).options == defaults
    explicit = ":".join([metric, *(f"{k}={v}" for k, v in defaults.items())])
    assert parse_metric(explicit).name == metric
    cases = [c for c in CASES if c["metric"] == metric and _spec_text(c) == explicit and c["expected"] is not None]
    assert len({c["expected"] for c in cases}) >= 2
    for case in cases:
        assert _score(metric, **case["inputs"])[0] == pytest.approx(case["expected"], abs=1e-9)


def test_similarity_at_the_threshold_counts_for_precision_but_not_for_recall() -> None:
    fields = {"retrieved_contexts": ["abcd"], "reference_contexts": ["abxy"]}  # Levenshtein similarity 0.5
    precision, trace = _score("non_llm_context_precision:threshold=0.5", **fields)
    recall, recall_trace = _score("non_llm_context_recall:threshold=0.5", **fields)
    assert precision == pytest.approx(1.0, abs=1e-9) and recall == 0.0
    assert trace == {"verdicts": [1], "reasons": ["closest reference context: 1, similarity 0.5000 >= 0.5"]}
    assert recall_trace["statements"] == ["abxy"] and recall_trace["reasons"] == [
        "closest retrieved context: 1, similarity 0.5000 <= 0.5"]


def test_context_traces_name_the_closest_context() -> None:
    fields = {"retrieved_contexts": ["Bananas are yellow.", "The tower is in Paris."],
              "reference_contexts": ["x" * 200, "The tower is in Paris!"]}
    _, precision = _score("non_llm_context_precision", **fields)
    assert precision["verdicts"] == [0, 1] and precision["reasons"][1].startswith("closest reference context: 2,")
    _, recall = _score("non_llm_context_recall:distance_measure=jaro", **fields)
    assert recall["statements"] == ["x" * 120 + "…", "The tower is in Paris!"]
    assert recall["verdicts"] == [0, 1] and recall["reasons"][1].startswith("closest retrieved context: 2,")


def test_quoted_spans_trace_and_options() -> None:
    response = 'He wrote "the Results are  significant" and "ok".'
    contexts = ["THE RESULTS ARE SIGNIFICANT, it says."]
    value, trace = _score("quoted_spans_alignment", response=response, retrieved_contexts=contexts)
    assert value == 1.0 and trace == {"statements": ["the Results are  significant"], "verdicts": [1]}
    value, trace = _score("quoted_spans_alignment:casefold=false:min_span_words=1", response=response,
                          retrieved_contexts=contexts)
    assert value == 0.0 and trace["statements"] == ["the Results are  significant", "ok"]
    value, trace = _score("quoted_spans_alignment", response="Nothing quoted.", retrieved_contexts=[])
    assert value == 1.0 and trace["statements"] == []


@pytest.mark.parametrize("spec, words", [
    ("quoted_spans_alignment:min_span_words=two", ["min_span_words", "whole number"]),
    ("quoted_spans_alignment:min_span_words=-1", ["min_span_words", "0 or more"]),
    ("quoted_spans_alignment:casefold=no", ["true | false"]),
    ("non_llm_context_recall:threshold=none", ["threshold", "must be a number"]),
    ("non_llm_context_precision:threshold=high", ["threshold", "number"]),
    ("non_llm_string_similarity:distance_measure=jaro_winkle", ["levenshtein | hamming", "jaro_winkler"]),
    ("rouge_score:rouge_type=rouge2", ["rouge1 | rougeL"]),
    ("rouge_score:mode=f1", ["fmeasure | precision | recall"]),
    ("bleu_score:tokenize=intl", ["bleu_score takes no options"]),
])
def test_option_errors_say_what_the_option_takes(spec: str, words: list[str]) -> None:
    with pytest.raises(LocalevalError) as caught:
        parse_metric(spec)
    assert all(w in str(caught.value) for w in words), str(caught.value)


def test_option_values_name_the_column_and_parse_back() -> None:
    spec = parse_metric("quoted_spans_alignment:min_span_words=2:casefold=false")
    assert spec.name == "quoted_spans_alignment(casefold=false,min_span_words=2)"  # the definition's order
    assert spec.options == {"casefold": "false", "min_span_words": 2}
    assert parse_metric(spec.canonical()) == spec
    assert parse_metric("quoted_spans_alignment:min_span_words=3").name == "quoted_spans_alignment"
    assert parse_metric("string_present").name == "string_presence"  # Ragas' name for its score
    ragas_name = parse_metric("non_llm_context_precision_with_reference:threshold=0.7")
    assert ragas_name == parse_metric("non_llm_context_precision:threshold=0.7")


ROW = {"user_input": "q", "response": "The tower is in Paris.", "reference": "The tower is in Paris.",
       "retrieved_contexts": ["The tower is in Paris."], "reference_contexts": ["The tower is in Paris."]}


@pytest.mark.parametrize("metric, field", [
    ("exact_match", "reference"), ("string_presence", "response"), ("non_llm_string_similarity", "reference"),
    ("bleu_score", "response"), ("rouge_score", "reference"), ("chrf_score", "response"),
    ("quoted_spans_alignment", "retrieved_contexts"),
    ("non_llm_context_precision", "reference_contexts"),
    ("non_llm_context_recall", "retrieved_contexts"),
])
def test_a_row_without_a_needed_field_is_an_error_naming_row_field_and_metric(metric: str, field: str) -> None:
    rows = [dict(ROW, id="a"), {**{k: v for k, v in ROW.items() if k != field}, "id": "b"}]
    with pytest.raises(DataError) as caught:
        localeval.evaluate(rows, metrics=metric, progress=False, report=False)
    [problem] = caught.value.problems
    assert (problem.row, problem.field) == (2, field) and metric in problem.message


@pytest.mark.parametrize("metric, field", [
    ("non_llm_context_precision", "reference_contexts"),
    ("non_llm_context_recall", "reference_contexts"),
    ("non_llm_context_recall", "retrieved_contexts"),
])
def test_an_empty_context_list_ragas_cannot_score_is_an_error(metric: str, field: str) -> None:
    with pytest.raises(DataError) as caught:
        localeval.evaluate([dict(ROW, **{field: []})], metrics=metric, progress=False, report=False)
    [problem] = caught.value.problems
    assert problem.field == field and "empty list" in problem.message


def _values(result: Any) -> list[dict[str, Any]]:
    return [{name: m["value"] for name, m in row["metrics"].items()} for row in result.rows()]


def test_precision_scores_no_retrieved_context_zero_as_ragas_does() -> None:
    result = localeval.evaluate([dict(ROW, retrieved_contexts=[])], metrics="non_llm_context_precision",
                                progress=False, report=False)
    assert _values(result) == [{"non_llm_context_precision": 0.0}]


def test_on_missing_nan_scores_the_rest_without_any_model() -> None:
    rows = [dict(ROW, id="a"), {**{k: v for k, v in ROW.items() if k != "reference"}, "id": "b"}]
    result = localeval.evaluate(rows, metrics="exact_match,rouge_score,non_llm_context_recall", on_missing="nan",
                                progress=False, report=False)
    assert _values(result) == [{"exact_match": 1.0, "rouge_score": 1.0, "non_llm_context_recall": 1.0},
                               {"exact_match": None, "rouge_score": None, "non_llm_context_recall": 1.0}]
    reasons = [m["nan_reason"] for m in result.rows()[1]["metrics"].values()]
    assert reasons == ["missing_field", "missing_field", None]


def test_empty_texts_are_scored_not_rejected() -> None:
    result = localeval.evaluate([dict(ROW, response="", reference="")], metrics="exact_match,chrf_score,bleu_score",
                                progress=False, report=False)
    assert _values(result) == [{"exact_match": 1.0, "chrf_score": 0.0, "bleu_score": 0.0}]


def test_report_shows_each_string_metric_with_its_verdicts_or_says_no_judge_was_asked(tmp_path: Path) -> None:
    from localeval.report.html import render_report

    row = dict(ROW, response='It says "the tower is in Paris".',
               retrieved_contexts=["Bananas.", "The tower is in Paris."],
               reference_contexts=["The tower is in Paris.", "Reference <script>two</script>."])
    localeval.evaluate([row], metrics=",".join(STRING_METRICS), out=tmp_path / "run", progress=False)
    page = render_report(tmp_path / "run")
    assert "No judge is asked for this metric" in page and "The judge recorded no verdicts" not in page
    assert "quoted spans of the response, looked up in the contexts" in page  # the statements table
    assert "reference contexts, each against its closest retrieved context" in page
    assert "<th>reason</th>" in page and "judge&#x27;s reason" not in page and "judge's reason" not in page
    assert "closest reference context: 1, similarity 1.0000 &gt;= 0.5" in page  # beside the retrieved context
    assert "<dt>reference contexts</dt>" in page and "Reference &lt;script&gt;two" in page
    assert "<script>two" not in page


def test_the_option_words_say_what_a_string_metric_option_takes() -> None:
    from localeval.metrics.options import option_words

    threshold = option_words(METRICS["non_llm_context_precision"], "threshold")
    assert "string similarity" in threshold and "cosine" not in threshold and "none" not in threshold
    assert "whole number, 0 or more" in option_words(METRICS["quoted_spans_alignment"], "min_span_words")
    assert "cosine" in option_words(METRICS["semantic_similarity"], "threshold")  # the cosine threshold, as before
