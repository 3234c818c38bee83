"""Soft verdicts: a scripted judge with known p(1) gives each metric the hand-computed soft score."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from localeval.api import evaluate
from localeval.data.sample import Sample
from localeval.embed import HashEmbedder
from localeval.engine.base import Request
from localeval.engine.scripted import ScriptedEngine, soft_choice
from localeval.metrics.soft import SoftBit, binary_paths, note_soft
from localeval.prompts.base import Settings
from localeval.store.cache import JudgeCache

RESPONSE, REFERENCE, JOINED = "R1. R2.", "G1. G2.", "C1.\nC2."
# p(1) of each (context, statement) NLI verdict; the hard verdict is p >= 0.5.
NLI_P = {
    (JOINED, "R1."): 0.9, (JOINED, "R2."): 0.2,
    ("C1.", "G1."): 0.8, ("C1.", "G2."): 0.3, ("C2.", "G1."): 0.1, ("C2.", "G2."): 0.4,
    ("C1.", "R1."): 0.7, ("C1.", "R2."): 0.6, ("C2.", "R1."): 0.2, ("C2.", "R2."): 0.9,
    (REFERENCE, "R1."): 0.95, (REFERENCE, "R2."): 0.25,
    (RESPONSE, "G1."): 0.6, (RESPONSE, "G2."): 0.1,
}
USEFUL_P = {("C1.", REFERENCE): 0.7, ("C2.", REFERENCE): 0.4, ("C1.", RESPONSE): 0.3, ("C2.", RESPONSE): 0.8}
ATTRIBUTED_P = {"G1.": 0.85, "G2.": 0.45}
NONCOMMITTAL_P = (0.9, 0.8, 0.4)
QUESTIONS = ("Q1?", "Q2?", "Q3?")
VECTORS = {"Q?": [1.0, 0.0], "Q1?": [1.0, 0.0], "Q2?": [0.6, 0.8], "Q3?": [0.0, 1.0],
           RESPONSE: [1.0, 0.0], REFERENCE: [0.6, 0.8]}
POLITE_P = 0.7


def _bit(p: float) -> int:
    return int(p >= 0.5)


def script(label: str, data: dict[str, Any], request: Request) -> Any:
    """Every prompt the verdict metrics ask, answered with the p(1) of the tables above."""
    if label == "statements":
        return {"statements": data["answer"].split(" ")}
    if label.startswith("claims"):
        return {"claims": data["response"].split(" ")}
    if label == "nli":
        ps = [NLI_P[(data["context"], s)] for s in data["statements"]]
        return soft_choice({"verdicts": [{"reason": "r", "verdict": _bit(p)} for p in ps]}, ps)
    if label == "context_usefulness":
        p = USEFUL_P[(data["context"], data["answer"])]
        return soft_choice({"reason": "r", "verdict": _bit(p)}, [p])
    if label == "attribution":
        ps = [ATTRIBUTED_P[s] for s in data["answer"].split(" ")]
        items = [{"statement": s, "reason": "r", "attributed": _bit(p)}
                 for s, p in zip(data["answer"].split(" "), ps, strict=True)]
        return soft_choice({"classifications": items}, ps)
    if label == "question":
        return [soft_choice({"question": q, "noncommittal": _bit(p)}, [p])
                for q, p in zip(QUESTIONS, NONCOMMITTAL_P, strict=True)]
    if label.startswith("criterion:"):
        return soft_choice({"reason": "r", "verdict": _bit(POLITE_P)}, [POLITE_P])
    raise ValueError(label)


SAMPLE = Sample(id="s", user_input="Q?", response=RESPONSE, reference=REFERENCE, retrieved_contexts=("C1.", "C2."))
# metric -> (hard score, soft score), each worked out by hand from the tables.
EXPECTED = {
    "faithfulness": (0.5, (0.9 + 0.2) / 2),
    "context_recall": (0.5, (0.85 + 0.45) / 2),
    # useful [1, 0] -> AP 1; soft (0.7 * 0.7 + (1.1 / 2) * 0.4) / 1.1
    "context_precision": (1.0, (0.49 + 0.22) / 1.1),
    "context_utilization": (0.5, (0.3 * 0.3 + (1.1 / 2) * 0.8) / 1.1),
    "precision_at_k": (0.5, 0.55),
    # relevant chunks C1 0.8, C2 0.4; from relevant R1 0.56, R2 0.48; incorrect 0.05, 0.75
    "noise_sensitivity": (0.5, (0.56 * 0.05 + 0.48 * 0.75) / 2),
    # tp 1.2, fp 0.8, fn 1.3: precision 0.6, recall 0.48, F1 0.5333 rounded as Ragas does
    "factual_correctness": (0.5, 0.53),
    # 0.75 * F1 + 0.25 * cosine 0.6
    "answer_correctness": (0.75 * 0.5 + 0.25 * 0.6, 0.75 * (2 * 0.6 * 0.48 / 1.08) + 0.25 * 0.6),
    # mean cosine (1 + 0.6 + 0) / 3, times 1 - 0.9 * 0.8 * 0.4 when soft
    "answer_relevancy": (1.6 / 3, 1.6 / 3 * (1 - 0.9 * 0.8 * 0.4)),
}


def _criteria(tmp_path: Path) -> str:
    path = tmp_path / "c.toml"
    path.write_text('[polite]\ndefinition = "The response is polite."\nscale = "binary"\n')
    return f"{path}:polite"


def _run(tmp_path: Path, soft: bool, engine: ScriptedEngine | None = None, cache: Any = False) -> Any:
    metrics = [*EXPECTED, _criteria(tmp_path)]
    return evaluate([SAMPLE], metrics, judge=engine or ScriptedEngine(script),
                    embedder=HashEmbedder(dim=2, fixed=VECTORS), soft=soft, cache=cache, progress=False)


def test_each_metric_gets_the_hand_computed_soft_score(tmp_path: Path) -> None:
    result = _run(tmp_path, soft=True)
    for name, (hard, soft) in EXPECTED.items():
        trace = result.output.traces[name][0]
        assert result.scores(name)[0] == pytest.approx(hard), name
        assert trace["soft_score"] == pytest.approx(soft), name
        assert result.summary()[name].soft_mean == pytest.approx(soft), name
    polite = result.output.traces["polite"][0]
    assert result.scores("polite")[0] == 1.0 and polite["soft_score"] == pytest.approx(POLITE_P)
    assert result.output.traces["faithfulness"][0]["p1"] == [0.9, 0.2]  # beside the verdicts, in order
    assert result.output.traces["faithfulness"][0]["verdicts"] == [1, 0]
    assert "soft" in result.table().splitlines()[0]


def test_a_hard_run_has_the_same_scores_and_no_soft_ones(tmp_path: Path) -> None:
    engine = ScriptedEngine(script)
    result = _run(tmp_path, soft=False, engine=engine)
    assert not any(r.soft for r in engine.requests)
    for name, (hard, _) in EXPECTED.items():
        assert result.scores(name)[0] == pytest.approx(hard), name
        assert "soft_score" not in result.output.traces[name][0] and "p1" not in result.output.traces[name][0]
        assert result.summary()[name].soft_mean is None
    assert "soft" not in result.table().splitlines()[0]


def test_soft_answers_are_cached_with_their_probabilities(tmp_path: Path) -> None:
    cache = tmp_path / "judge.sqlite"
    first = _run(tmp_path, soft=True, cache=cache)
    again = ScriptedEngine(lambda *a: pytest.fail("a soft rerun must come from the cache"))
    second = _run(tmp_path, soft=True, engine=again, cache=cache)
    assert again.calls == []
    for name in EXPECTED:
        assert second.output.traces[name][0]["soft_score"] == first.output.traces[name][0]["soft_score"]
    hard = ScriptedEngine(script)
    _run(tmp_path, soft=False, engine=hard, cache=cache)  # a hard run keeps its own keys: not the soft answers
    assert hard.requests
    with JudgeCache(cache) as store:
        assert store.stats()["answers"] == 2 * len(hard.requests)


def test_probabilities_that_do_not_pair_with_the_verdicts_give_no_soft_score(tmp_path: Path) -> None:
    def wrong(label: str, data: dict[str, Any], request: Request) -> Any:
        answer = script(label, data, request)
        if label == "nli":
            return soft_choice({"verdicts": [{"reason": "r", "verdict": 1} for _ in data["statements"]]}, [0.5])
        return answer

    result = evaluate([SAMPLE], ["faithfulness", "context_recall"], judge=ScriptedEngine(wrong), soft=True,
                      cache=False, progress=False)
    assert "soft_score" not in result.output.traces["faithfulness"][0]
    assert result.output.traces["context_recall"][0]["soft_score"] == pytest.approx(0.65)
    assert result.summary()["faithfulness"].soft_valid == 0 and result.summary()["context_recall"].soft_valid == 1


def test_binary_paths_follow_the_text_order_and_skip_other_integers() -> None:
    schema = {"type": "object", "properties": {
        "items": {"type": "array", "items": {"type": "object", "properties": {
            "rating": {"type": "integer", "enum": [0, 1, 2]}, "ok": {"type": "integer", "enum": [0, 1]}}}},
        "flag": {"type": "integer", "enum": [0, 1]}}}
    value = {"flag": 1, "items": [{"ok": 0, "rating": 1}, {"rating": 2, "ok": 1}]}
    assert binary_paths(value, schema) == [("flag",), ("items", 0, "ok"), ("items", 1, "ok")]


def test_note_soft_needs_a_probability_for_every_verdict() -> None:
    trace: dict[str, Any] = {}
    assert note_soft(trace, sum, [SoftBit(1, 0.75), 0]) is None and trace == {}
    assert note_soft(trace, sum, []) is None and trace == {}  # no verdict: no soft score
    assert note_soft(trace, sum, [SoftBit(1, 0.75), SoftBit(0, 0.125)]) == 0.875
    assert trace == {"p1": [0.75, 0.125], "soft_score": 0.875}


def test_the_settings_carry_soft_into_the_request() -> None:
    from localeval.prompts import NLI, NLIInput
    from localeval.scheduler.requests import RequestMaker
    from localeval.steps import Ask

    ask = Ask(NLI, NLIInput(context="c", statements=["s"]))
    hard = RequestMaker(None, Settings(), 0, "skip")
    soft = RequestMaker(None, Settings(soft=True), 0, "skip")
    assert not hard.request(ask).soft and soft.request(ask).soft
    assert hard.key(hard.request(ask)) != soft.key(soft.request(ask))
    old = JudgeCache.key("answer", "no-engine", *(getattr(hard.request(ask), f) for f in
                                                  ("messages", "schema", "temperature", "n", "seed")))
    assert hard.key(hard.request(ask)) == old  # hard keys are what they were before soft verdicts


def test_a_rescore_of_a_soft_run_gets_the_soft_scores_from_the_cache(tmp_path: Path) -> None:
    import json

    from localeval.rescore import rescore

    run = tmp_path / "run"
    first = evaluate([SAMPLE], ["faithfulness", "context_recall"], judge=ScriptedEngine(script), soft=True,
                     out=run, progress=False, report=True)
    summary = json.loads((run / "summary.json").read_text())
    assert summary["metrics"]["faithfulness"]["soft_mean"] == pytest.approx(0.55)
    assert summary["run"]["config"]["settings"]["soft"] is True
    assert "soft 0.550" in (run / "report.html").read_text()
    again = rescore(run)
    assert again.info["rescore_misses"] == 0
    for name in ("faithfulness", "context_recall"):
        assert again.summary()[name].soft_mean == first.summary()[name].soft_mean is not None


def test_a_chunked_soft_run_summarizes_the_soft_scores_it_wrote(tmp_path: Path) -> None:
    samples = [replace(SAMPLE, id=f"s{i}") for i in range(5)]
    metrics = ["faithfulness", "context_precision"]
    whole = evaluate(samples, metrics, judge=ScriptedEngine(script), soft=True, cache=False, progress=False)
    chunked = evaluate(samples, metrics, judge=ScriptedEngine(script), soft=True, out=tmp_path / "run",
                       chunk_size=2, progress=False, report=False)
    saved = json.loads((tmp_path / "run" / "summary.json").read_text())["metrics"]
    for name in metrics:
        assert chunked.summary()[name].soft_mean == pytest.approx(whole.summary()[name].soft_mean)
        assert saved[name]["soft_mean"] == pytest.approx(EXPECTED[name][1]) and saved[name]["soft_valid"] == 5
