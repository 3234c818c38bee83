"""Criteria as data: the example file, the checks while loading, the spec syntax, and a run end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import localeval
from localeval.engine.scripted import ScriptedEngine
from localeval.errors import LocalevalError
from localeval.metrics import parse_metric, parse_metrics
from localeval.metrics.criteria_file import load_criteria
from localeval.prompts.base import DEFAULT_SETTINGS, Settings
from localeval.report.metric_list import metric_rows

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "criteria.toml"
DEMO = ROOT / "examples" / "rag_demo.jsonl"


def _write(tmp_path: Path, text: str, name: str = "c.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_example_file_defines_three_criteria_with_their_scales() -> None:
    criteria = {c.name: c for c in load_criteria(EXAMPLE)}
    assert list(criteria) == ["polite", "cites_context", "answers_in_question_language"]
    assert criteria["polite"].binary and len(criteria["polite"].examples) == 2
    assert criteria["cites_context"].points == 5 and criteria["cites_context"].fields == ("retrieved_contexts",
                                                                                         "response")
    assert [score for score, _ in criteria["cites_context"].rubric] == [1, 3, 5]


def test_the_scale_bounds_the_answer_schema() -> None:
    binary, rated = parse_metric(f"{EXAMPLE}:polite"), parse_metric(f"{EXAMPLE}:cites_context")
    for spec, values in ((binary, [0, 1]), (rated, [1, 2, 3, 4, 5])):
        prompt = spec.definition.steps.keywords["prompt"]
        inp = prompt.input_model(**{f: ["c"] if f == "retrieved_contexts" else "t" for f in spec.definition.required})
        props = prompt.schema(inp, DEFAULT_SETTINGS)["properties"]
        key = "verdict" if values == [0, 1] else "rating"
        assert props[key]["enum"] == values and list(props) == ["reason", key]
        assert list(prompt.schema(inp, Settings(reasons=False))["properties"]) == [key]
    rubric = rated.definition.steps.keywords["prompt"].instruction
    assert "Rating 3: about half of the facts are in the contexts" in rubric and "from 1 (not at all) to 5" in rubric


def test_a_file_without_a_name_gives_every_criterion_and_options_follow_the_name() -> None:
    assert [s.name for s in parse_metrics(f"faithfulness,{EXAMPLE}")] == [
        "faithfulness", "polite", "cites_context", "answers_in_question_language"]
    spec = parse_metric(f"{EXAMPLE}:polite:strictness=3")
    assert spec.name == "polite(strictness=3)" and spec.options == {"strictness": 3}
    assert parse_metric(spec.canonical()).name == spec.name  # the run config re-parses it
    assert spec.canonical().startswith(str(EXAMPLE.resolve()))  # absolute: a rescore elsewhere finds it
    assert spec.definition.required == ("user_input", "response")


@pytest.mark.parametrize(("spec", "words"), [
    ("{f}:polit", ["no criterion 'polit'", "did you mean 'polite'", "it defines: polite"]),
    ("{f}:polite:strictnes=3", ["unknown option 'strictnes'", "did you mean 'strictness'"]),
    ("{f}:polite:strictness=0", ["strictness=", "1 or more"]),
    ("{f}", ["defines 3 criteria; name one"]),
    ("missing/criteria.toml:polite", ["criteria file", "not found"]),
    ("my_criteria.yaml:polite", ["criteria files are TOML (.toml) or Python (.py)"]),
])
def test_spec_errors_name_the_file_the_criterion_and_the_fix(spec: str, words: list[str]) -> None:
    with pytest.raises(LocalevalError) as error:
        parse_metric(spec.format(f=EXAMPLE))
    assert all(w in str(error.value) for w in words), str(error.value)


@pytest.mark.parametrize(("toml", "words"), [
    ('[a]\ndefinition = "x"\nfields = ["respnse"]', ["criterion 'a'", "unknown sample field 'respnse'",
                                                      "did you mean 'response'"]),
    ('[a]\ndefinition = "x"\nfields = ["answer"]', ["current name for 'answer' is 'response'"]),
    ('[a]\nfields = ["response"]', ["criterion 'a'", "needs a definition"]),
    ('[a]\ndefinition = "x"\nscale = 1', ["'scale' = 1", "\"binary\"", "from 2 to 10"]),
    ('[a]\ndefinition = "x"\ndefinitoin = "y"', ["unknown key 'definitoin'", "did you mean 'definition'"]),
    ('[a]\ndefinition = "x"\nrubric = { 1 = "bad" }', ["describes the ratings of a 1-to-N scale"]),
    ('[a]\ndefinition = "x"\nscale = 3\nrubric = { 4 = "?" }', ["rubric entry '4'", "from 1 to 3"]),
    ('[a]\ndefinition = "x"\n[[a.examples]]\nuser_input = "q"\nresponse = "r"\nrating = 1',
     ["example 1", "needs verdict = one of 0, 1", "it has 'rating'"]),
    ('[a]\ndefinition = "x"\n[[a.examples]]\nuser_input = "q"\nverdict = 1', ["lacks the field 'response'"]),
    ('[a]\ndefinition = "x"\n[[a.examples]]\nuser_input = "q"\nresponse = "r"\nreferense = "s"\nverdict = 1',
     ["has 'referense'", "not one of the criterion's fields"]),
    ('[Polite]\ndefinition = "x"', ["lower-case letters"]),
    ('[faithfulness]\ndefinition = "x"', ["built-in metric's", "rename the criterion"]),
    ('[a\ndefinition = "x"', ["not valid TOML"]),
    ("# nothing here\n", ["defines no criterion"]),
])
def test_file_errors_name_the_file_the_criterion_and_the_field(tmp_path: Path, toml: str, words: list[str]) -> None:
    path = _write(tmp_path, toml)
    with pytest.raises(LocalevalError) as error:
        parse_metrics(str(path))
    message = str(error.value)
    assert str(path) in message and all(w in message for w in words), message


def test_two_files_with_the_same_criterion_name_are_refused(tmp_path: Path) -> None:
    one, two = (_write(tmp_path, '[polite]\ndefinition = "x"', n) for n in ("one.toml", "two.toml"))
    with pytest.raises(LocalevalError, match="share the column 'polite'"):
        parse_metrics([str(one), str(two)])


def test_a_python_file_defines_criteria_too(tmp_path: Path) -> None:
    path = _write(tmp_path, "from localeval.metrics.criteria_file import Criterion\n"
                            "short = Criterion('short', 'The response has one sentence.', ('response',))\n"
                            "graded = Criterion('graded', 'Overall quality.', points=4)\n", "mine.py")
    specs = parse_metrics(str(path))
    assert [s.name for s in specs] == ["short", "graded"]
    assert specs[1].definition.steps.keywords["criterion"].values == (1, 2, 3, 4)
    broken = _write(tmp_path, "from localeval.metrics.criteria_file import Criterion\n"
                              "bad = Criterion('bad', 'x', ('respons',))\n", "broken.py")
    with pytest.raises(LocalevalError, match=r"broken\.py: raised while loading"):
        parse_metrics(str(broken))


def criteria_script(label: str, data: dict[str, Any], request: Any) -> Any:
    """Impolite on the Eiffel Tower question, else polite; a rating of 4; the language criterion always met."""
    assert label.startswith("criterion:"), label
    if label == "criterion:cites_context":
        assert request.schema["properties"]["rating"]["enum"] == [1, 2, 3, 4, 5]
        answer: dict[str, Any] = {"reason": "most facts are there", "rating": 4}
    else:
        answer = {"reason": "scripted", "verdict": int("Eiffel" not in data.get("user_input", ""))}
    return [answer] * request.n if request.n > 1 else answer


def test_the_example_criteria_run_through_evaluate_into_summary_report_and_traces(tmp_path: Path) -> None:
    out = tmp_path / "run"
    metrics = f"faithfulness,{EXAMPLE},{EXAMPLE}:polite:strictness=3"
    engine_calls: list[int] = []

    def script(label: str, data: dict[str, Any], request: Any) -> Any:
        if label.startswith("criterion:"):
            engine_calls.append(request.n)
            return criteria_script(label, data, request)
        from localeval.engine.scripted import rule_script

        return rule_script(label, data, request)

    engine = ScriptedEngine(script)
    result = localeval.evaluate(str(DEMO), metrics=metrics, judge=engine, out=out, progress=False)
    rows = len(DEMO.read_text().splitlines())
    assert sorted(engine_calls) == [1] * 3 * rows + [3] * rows  # every criterion once a sample, votes sampled
    summary = json.loads((out / "summary.json").read_text())
    names = json.dumps(summary)
    for name in ("polite", "cites_context", "answers_in_question_language", "polite(strictness=3)"):
        assert name in names
    by_id = {r["id"]: {m: v["value"] for m, v in r["metrics"].items()} for r in result.rows()}
    assert by_id["q1"]["polite"] == 0.0 and by_id["q2"]["polite"] == 1.0 and by_id["q1"]["cites_context"] == 4.0
    html = (out / "report.html").read_text()
    assert "criterion <b>cites_context</b> (1-5, reads retrieved_contexts, response)" in html
    assert "the judge&#x27;s ratings" in html and "does not" in html
    again = ScriptedEngine(script)  # the same run again: every criterion ask comes from the cache
    engine_calls.clear()
    localeval.evaluate(str(DEMO), metrics=metrics, judge=again, out=tmp_path / "again", progress=False,
                       cache=out / "judge.sqlite")
    assert engine_calls == []


def test_identical_asks_of_a_criterion_are_sent_once(tmp_path: Path) -> None:
    engine = ScriptedEngine(criteria_script)
    rows = [{"id": f"s{i}", "user_input": "Where is it?", "response": "Here."} for i in range(3)]
    result = localeval.evaluate(rows, metrics=f"{EXAMPLE}:polite", judge=engine, progress=False)
    assert len(engine.requests) == 1
    assert [r["metrics"]["polite"]["value"] for r in result.rows()] == [1.0, 1.0, 1.0]


def test_localeval_metrics_lists_how_to_pass_a_criterion() -> None:
    rows = {name: (summary, needs, options) for name, summary, needs, options in metric_rows()}
    assert "FILE.toml:NAME" in rows
    summary, needs, options = rows["FILE.toml:NAME"]
    assert needs == "the fields it names"
    assert "criterion" in summary and "strictness" in options


@pytest.mark.model
def test_the_bundled_judge_answers_the_example_criteria_within_their_scales(small_judge, tmp_path: Path) -> None:
    rows = [json.loads(line) for line in DEMO.read_text().splitlines()[:2]]
    result = localeval.evaluate(rows, metrics=str(EXAMPLE), judge=small_judge, out=tmp_path / "run", progress=False)
    allowed = {"polite": {0.0, 1.0}, "answers_in_question_language": {0.0, 1.0}, "cites_context": {1.0, 2.0, 3.0,
                                                                                                   4.0, 5.0}}
    for row in result.rows():
        for name, values in allowed.items():
            score = row["metrics"][name]
            assert score["value"] in values, (name, score)
            assert score["trace"]["criterion"]["name"] == name and len(score["trace"]["votes"]) == 1
    assert "criterion <b>cites_context</b>" in (tmp_path / "run" / "report.html").read_text()


def test_a_criteria_run_rescores_from_its_cache_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from localeval.rescore import rescore

    out = tmp_path / "run"
    first = localeval.evaluate(str(DEMO), metrics=f"{EXAMPLE}:polite,{EXAMPLE}:cites_context", out=out,
                               judge=ScriptedEngine(criteria_script), progress=False)
    monkeypatch.chdir(tmp_path)  # the run recorded the file's absolute path: found from anywhere
    again = rescore(out)
    assert again.rows() == first.rows()
