"""Summary score, instance-specific rubrics and SQL semantic equivalence: Ragas 0.4.3's values on its own
classes' scripted runs (``vectors/ragas-0.4.3-judged-texts.jsonl``), replayed through the scheduler; the
schemas' bounds, options, NaN cases and traces."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from localeval.data.messages import Message, rubric_levels
from localeval.data.sample import Sample
from localeval.embed import HashEmbedder
from localeval.engine.scripted import ScriptedEngine
from localeval.errors import LocalevalError
from localeval.metrics import parse_metric, parse_metrics
from localeval.metrics.registry import METRICS
from localeval.metrics.summary_score import blend, conciseness, qa_score
from localeval.nan import Nan
from localeval.prompts.base import Settings
from localeval.prompts.rubrics import RUBRIC_SCORE, RubricInput
from localeval.prompts.summary import SUMMARY_ANSWERS, SUMMARY_QUESTIONS, AnswersInput, QuestionsInput
from localeval.scheduler import Scheduler

VECTORS = Path(__file__).parent / "vectors" / "ragas-0.4.3-judged-texts.jsonl"
CASES = [json.loads(line) for line in VECTORS.read_text().splitlines() if line.strip()]
FIVE = {f"score{n}_description": f"level {n}" for n in range(1, 6)}


def _run(metric: str, sample: Sample, script: Any) -> tuple[Any, dict, ScriptedEngine]:
    def checked(label: str, data: dict, request: Any) -> Any:
        answer = script(label, data, request)
        jsonschema.validate(answer, request.schema)  # every scripted answer is one the schema allows
        return answer

    engine = ScriptedEngine(checked)
    specs = parse_metrics(metric)
    out = Scheduler(engine, HashEmbedder(), progress=False).run([sample], specs)
    name = specs[0].name
    return out.outcomes[name][0], out.traces[name][0], engine


def _replay(case: dict[str, Any]) -> tuple[str, Sample, Any]:
    metric, params, x = case["metric"], case["params"], case["inputs"]
    name = ":".join([metric, *(f"{k}={v}" for k, v in params.items())])
    if metric == "summary_score":
        sample = Sample(id="case", reference_contexts=tuple(x["reference_contexts"]), response=x["response"])
        answers = {"summary_keyphrases": {"keyphrases": x["keyphrases"]},
                   "summary_questions": {"questions": x["questions"]},
                   "summary_answers": {"answers": [str(a) for a in x["answers"]]}}
        return name, sample, lambda label, data, request: answers[label]
    if metric == "instance_specific_rubrics":
        fields = {k: tuple(v) if isinstance(v, list) else v for k, v in x["fields"].items()}
        sample = Sample(id="case", rubrics=x["rubrics"], **fields)

        def rubric(label: str, data: dict, request: Any) -> Any:
            enum = request.schema["properties"]["score"]["enum"]
            assert enum == sorted(int("".join(c for c in k if c.isdigit())) for k in x["rubrics"])
            assert {k: v for k, v in data.items() if k != "rubrics"} == x["fields"]  # absent fields not shown
            return {"reason": "scripted", "score": x["score"]}

        return name, sample, rubric
    assert metric == "sql_semantic_equivalence", metric
    schema = x["reference_contexts"]
    sample = Sample(id="case", response=x["response"], reference=x["reference"],
                    reference_contexts=None if schema is None else tuple(schema))

    def sql(label: str, data: dict, request: Any) -> Any:
        assert data["database_schema"] == "\n".join(schema or [])
        return {"response_explanation": "r", "reference_explanation": "f", "equivalent": x["equivalent"]}

    return name, sample, sql


@pytest.mark.parametrize("case", CASES, ids=[f"{c['metric']}-{i}" for i, c in enumerate(CASES)])
def test_reproduces_ragas(case: dict[str, Any]) -> None:
    name, sample, script = _replay(case)
    value, trace, _ = _run(name, sample, script)
    if case["expected"] is None:
        assert isinstance(value, Nan), value
    else:
        assert not isinstance(value, Nan), (value, trace)
        assert value == case["expected"] or math.isclose(value, case["expected"], rel_tol=1e-12, abs_tol=1e-12)


def test_the_vectors_cover_the_edges() -> None:
    summary = [c for c in CASES if c["metric"] == "summary_score"]
    assert len(CASES) >= 300 and {c["params"]["length_penalty"] for c in summary} == {"true", "false"}
    assert len({c["params"]["coeff"] for c in summary}) >= 5
    longer = [c for c in summary if len(c["inputs"]["response"]) >= len("\n".join(c["inputs"]["reference_contexts"]))]
    assert longer and len(longer) < len(summary)  # summaries as long as the text or longer, and shorter ones
    assert any(not c["inputs"]["questions"] for c in summary) and any(not c["inputs"]["keyphrases"] for c in summary)
    rubrics = {tuple(sorted(c["inputs"]["rubrics"])) for c in CASES if c["metric"] == "instance_specific_rubrics"}
    assert len(rubrics) >= 5


def test_summary_arithmetic_and_trace() -> None:
    assert qa_score(["1", "0", "1", "1"]) == 0.75
    assert conciseness("abcd", "ab") == pytest.approx(0.5)
    assert conciseness("ab", "abcdef") == pytest.approx(0.0, abs=1e-9)
    assert blend(0.75, 0.5, 0.2) == 0.75 * 0.8 + 0.5 * 0.2 and blend(0.75, None, 0.2) == 0.75
    sample = Sample(id="s", reference_contexts=("The Rhine is long.", "It ends in the North Sea."), response="Rhine.")
    answers = {"summary_keyphrases": {"keyphrases": ["Rhine", "North Sea"]},
               "summary_questions": {"questions": ["Is the Rhine long?", "Does it end in the North Sea?"]},
               "summary_answers": {"answers": ["1", "0"]}}
    value, trace, engine = _run("summary_score", sample, lambda label, data, request: answers[label])
    text = "The Rhine is long.\nIt ends in the North Sea."
    assert value == pytest.approx(0.5 * 0.5 + (1 - 6 / len(text)) * 0.5)
    assert trace == {"keyphrases": ["Rhine", "North Sea"], "questions": answers["summary_questions"]["questions"],
                     "answers": [1, 0], "qa_score": 0.5, "conciseness": trace["conciseness"]}
    assert trace["conciseness"] == pytest.approx(1 - 6 / len(text))
    json.dumps(trace)
    assert [r.label for r in engine.requests] == ["summary_keyphrases", "summary_questions", "summary_answers"]
    value, trace, _ = _run("summary_score:length_penalty=false", sample, lambda label, data, request: answers[label])
    assert value == 0.5 and trace["conciseness"] is None


@pytest.mark.parametrize(("sample", "reason", "asks"), [
    (Sample(id="s", reference_contexts=("text",), response="  "), "missing_field", 0),
    (Sample(id="s", reference_contexts=(" ", ""), response="summary"), "missing_field", 0),
    (Sample(id="s", reference_contexts=("text",), response="summary"), "no_questions", 2),
])
def test_summary_nan_cases(sample: Sample, reason: str, asks: int) -> None:
    answers = {"summary_keyphrases": {"keyphrases": []}, "summary_questions": {"questions": []}}
    value, trace, engine = _run("summary_score", sample, lambda label, data, request: answers[label])
    assert value == Nan(reason) and len(engine.requests) == asks
    if asks:
        assert trace["questions"] == [] and trace["qa_score"] is None


def test_summary_schemas_bound_the_lists() -> None:
    questions = ["a?", "b?", "c?"]
    answers = SUMMARY_ANSWERS.schema(AnswersInput(summary="s", questions=questions), Settings())
    items = answers["properties"]["answers"]
    assert (items["minItems"], items["maxItems"], items["items"]["enum"]) == (3, 3, ["0", "1"])
    asked = SUMMARY_QUESTIONS.schema(QuestionsInput(text="t", keyphrases=["x"] * 5), Settings())
    assert asked["properties"]["questions"]["maxItems"] == 12
    # every example of these prompts fits its schema: tests/test_prompts.py checks every prompt's


def test_rubric_schema_is_the_samples_levels_and_the_score_is_raw() -> None:
    rubrics = {"level 10": "great", "level 0": "bad", "level 4": "fine"}
    assert rubric_levels(rubrics) == (0, 4, 10)
    schema = RUBRIC_SCORE.schema(RubricInput(rubrics=rubrics), Settings())
    assert schema["properties"]["score"]["enum"] == [0, 4, 10]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"reason": "", "score": 5}, schema)
    sample = Sample(id="s", user_input="q", response="r", rubrics=FIVE)
    value, trace, engine = _run("instance_rubrics", sample, lambda *_: {"reason": "why", "score": 4})
    assert value == 4.0 and trace == {"levels": [1, 2, 3, 4, 5], "score": 4, "reason": "why"}
    shown = json.loads(engine.requests[0].messages[-1][1])
    assert list(shown) == ["user_input", "response", "rubrics"]  # absent fields are not shown
    assert METRICS["instance_specific_rubrics"].higher_is_better


def test_rubric_shows_a_conversation_as_its_transcript() -> None:
    talk = (Message("human", "Book a table for two."), Message("ai", "Booked for 19:00."))
    sample = Sample(id="s", conversation=talk, reference="A table for two is booked.", rubrics=FIVE)
    _, _, engine = _run("instance_specific_rubrics", sample, lambda *_: {"reason": "", "score": 5})
    shown = json.loads(engine.requests[0].messages[-1][1])
    assert shown["user_input"] == "Human: Book a table for two.\nAI: Booked for 19:00."
    assert shown["reference"] == "A table for two is booked."


def test_rubric_nan_without_usable_rubrics() -> None:
    for rubrics in ({}, {"good": "no number"}, {"score1_to_5": "two numbers"}):
        value, trace, engine = _run("instance_specific_rubrics", Sample(id="s", response="r", rubrics=rubrics),
                                    lambda *_: {"reason": "", "score": 1})
        assert value == Nan("missing_field") and not engine.requests
        assert "nan_detail" in trace or not rubrics


def test_sql_verdict_trace_and_blank_queries() -> None:
    sample = Sample(id="s", response="SELECT 1", reference="SELECT 1;", reference_contexts=("Table t: a INT",))
    verdict = {"response_explanation": "one", "reference_explanation": "one too", "equivalent": True}
    value, trace, engine = _run("sql_semantic_equivalence", sample, lambda *_: verdict)
    assert value == 1.0 and trace == {"equivalent": True, "response_explanation": "one",
                                      "reference_explanation": "one too"}
    assert engine.requests[0].schema["properties"]["equivalent"] == {"type": "boolean"}
    blank = Sample(id="s", response=" ", reference="SELECT 1")
    value, _, engine = _run("sql_semantic_equivalence", blank, lambda *_: verdict)
    assert value == Nan("missing_field") and not engine.requests


@pytest.mark.parametrize(("spec", "words"), [
    ("summary_score:length_penalty=maybe", ["length_penalty='maybe'", "true | false"]),
    ("summary_score:coef=0.2", ["did you mean 'coeff'"]),
    ("summary_score:coeff=1.5", ["coeff", "from 0"]),
    ("summary_score:coeff=lots", ["coeff", "from 0"]),
    ("sql_semantic_equivalence:strict=true", ["takes no options"]),
])
def test_option_errors(spec: str, words: list[str]) -> None:
    with pytest.raises(LocalevalError) as error:  # checked when parsed, before any model loads
        parse_metric(spec)
    assert all(w in str(error.value) for w in words), str(error.value)


def test_definitions() -> None:
    summary = METRICS["summary_score"]
    assert summary.required == ("reference_contexts", "response") and summary.nonempty == ("reference_contexts",)
    assert summary.options == {"length_penalty": "true", "coeff": 0.5} and summary.role == "generation"
    assert (summary.trace, METRICS["instance_specific_rubrics"].trace, METRICS["sql_semantic_equivalence"].trace) == (
        "summary", "rubric", "sql")
    assert METRICS["instance_specific_rubrics"].required == ("rubrics",)
    assert METRICS["sql_semantic_equivalence"].required == ("response", "reference")
    assert parse_metric("instance_rubrics").base == "instance_specific_rubrics"
    assert parse_metric("summary_score:length_penalty=false:coeff=0.3").name == (
        "summary_score(length_penalty=false,coeff=0.3)")
