"""Ragas 0.4.3's own scores on scripted verdicts, reproduced through the scheduler.

Two files: the 250 shared vectors, and the wide ones (``vectors/make_wide_vectors.py``: more
statements, chunks and claims, beta 0.3 to 3, strictness 1 to 5, zero vectors, ID-based metrics).
Each case becomes one sample; a scripted judge returns exactly the case's verdicts and the fake
embedder the case's vectors, so the whole path (prompts, schema, scheduler, parsing, score) runs.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import ragas_more_cases

from localeval.data.sample import Sample
from localeval.embed import HashEmbedder
from localeval.engine.scripted import ScriptedEngine
from localeval.metrics import parse_metric
from localeval.nan import Nan
from localeval.scheduler import Scheduler

VECTORS = Path(__file__).parent / "vectors" / "ragas-0.4.3-vectors.jsonl"
WIDE = Path(__file__).parent / "vectors" / "ragas-0.4.3-wide.jsonl"


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


CASES = _read(VECTORS)
WIDE_CASES = _read(WIDE)


def _names(prefix: str, n: int) -> list[str]:
    return [f"{prefix} {i}" for i in range(n)]


def _case_setup(case: dict[str, Any]) -> tuple[str, Sample, Any, Any]:
    metric, params, x = case["metric"], case["params"], case["inputs"]
    contexts: list[str] = []
    embedder = None
    name = ":".join([metric, *(f"{k}={v}" for k, v in params.items())])

    def lookup(verdicts: list[int], key: str, data: dict) -> dict:
        return {"reason": "scripted", "verdict": verdicts[int(data[key].split()[-1])]}

    if metric == "faithfulness":
        contexts = ["ctx 0"]

        def script(label: str, data: dict, request: Any) -> Any:
            if label == "statements":
                return {"statements": _names("statement", x["statements"])}
            return {"verdicts": [{"reason": "", "verdict": v} for v in x["verdicts"]]}

    elif metric in ("context_precision", "context_utilization"):
        contexts = _names("ctx", len(x["verdicts"]))

        def script(label: str, data: dict, request: Any) -> Any:
            return lookup(x["verdicts"], "context", data)

    elif metric == "context_recall":
        contexts = ["ctx 0", "ctx 1"]

        def script(label: str, data: dict, request: Any) -> Any:
            items = [{"statement": f"s{i}", "reason": "", "attributed": a} for i, a in enumerate(x["attributed"])]
            return {"classifications": items}

    elif metric == "answer_relevancy":
        questions, flags = x["generated_questions"], x["noncommittal"]
        table = {"the user input": x["question_vector"]}
        table.update({q: v for q, v in zip(questions, x["generated_vectors"], strict=True) if q})
        embedder = HashEmbedder(dim=len(x["question_vector"]), fixed=table)

        def script(label: str, data: dict, request: Any) -> Any:
            assert request.n == params["strictness"] and request.temperature > 0
            return [{"question": q, "noncommittal": f} for q, f in zip(questions, flags, strict=True)]

    elif metric == "factual_correctness":
        resp_v, ref_v = x["response_claim_verdicts"], x["reference_claim_verdicts"]

        def script(label: str, data: dict, request: Any) -> Any:
            if label.startswith("claims"):
                if data["response"] == "the response":
                    return {"claims": _names("response claim", len(resp_v))}
                assert ref_v is not None, "Ragas does not decompose the reference in precision mode"
                return {"claims": _names("reference claim", len(ref_v))}
            verdicts = resp_v if data["context"] == "the reference" else ref_v
            assert len(data["statements"]) == len(verdicts)
            return {"verdicts": [{"reason": "", "verdict": v} for v in verdicts]}

    elif metric == "noise_sensitivity":
        by_ref, by_resp = x["reference_statements_by_context"], x["response_statements_by_context"]
        in_ref = x["response_statements_in_reference"]
        contexts = _names("ctx", len(by_ref))

        def script(label: str, data: dict, request: Any) -> Any:
            if label == "statements":
                source = by_ref if data["answer"] == "the reference" else by_resp
                prefix = "ref" if data["answer"] == "the reference" else "resp"
                return {"statements": _names(prefix, len(source[0]))}
            if data["context"] == "the reference":
                verdicts = in_ref
            else:  # one ask per list and chunk
                k = int(data["context"].split()[-1])
                verdicts = [(by_ref if s.startswith("ref") else by_resp)[k][int(s.split()[-1])]
                            for s in data["statements"]]
            return {"verdicts": [{"reason": "", "verdict": v} for v in verdicts]}

    elif metric in ("id_context_precision", "id_context_recall"):

        def script(label: str, data: dict, request: Any) -> Any:
            raise AssertionError("ID-based metrics ask no judge")

    else:  # pragma: no cover - a new metric in the file
        raise AssertionError(metric)

    sample = Sample(
        id="case",
        user_input="the user input",
        response="the response",
        reference="the reference",
        retrieved_contexts=tuple(contexts) or ("ctx 0",),
        retrieved_context_ids=tuple(x.get("retrieved_context_ids", ())),
        reference_context_ids=tuple(x.get("reference_context_ids", ())),
    )
    return name, sample, script, embedder


def _check(case: dict[str, Any], suffix: str = "") -> ScriptedEngine:
    name, sample, script, embedder = _case_setup(case)
    engine = ScriptedEngine(script)
    spec = parse_metric(name + suffix)
    out = Scheduler(engine, embedder, progress=False).run([sample], [spec])
    value = out.outcomes[spec.name][0]
    expected = case["expected"]
    if expected is None:
        assert isinstance(value, Nan), f"expected NaN, got {value}"
    else:
        assert isinstance(value, float), f"expected {expected}, got {value}"
        assert math.isclose(value, expected, rel_tol=0, abs_tol=1e-9), (value, expected)
    return engine


@pytest.mark.parametrize("case", CASES, ids=[f"{c['metric']}-{i}" for i, c in enumerate(CASES)])
def test_reproduces_ragas(case: dict[str, Any]) -> None:
    _check(case)


WIDE_JUDGED = [c for c in WIDE_CASES if c["metric"] != "noise_sensitivity"]


@pytest.mark.parametrize("case", WIDE_JUDGED, ids=[f"wide-{c['metric']}-{i}" for i, c in enumerate(WIDE_JUDGED)])
def test_reproduces_ragas_wide(case: dict[str, Any]) -> None:
    engine = _check(case)
    if case["metric"].startswith("id_"):
        assert not engine.calls  # judge-free


NOISE_CASES = [c for c in CASES if c["metric"] == "noise_sensitivity" and c["expected"] is not None]
WIDE_NOISE = [c for c in WIDE_CASES if c["metric"] == "noise_sensitivity"]


def _nli_asks(engine: ScriptedEngine) -> int:
    return sum(1 for r in engine.requests if r.label == "nli")


@pytest.mark.parametrize("case", NOISE_CASES, ids=[f"noise-{i}" for i in range(len(NOISE_CASES))])
def test_noise_sensitivity_reproduces_ragas(case: dict[str, Any]) -> None:
    """Ragas' one ask per statement list and chunk (2N + 1 NLI asks)."""
    engine = _check(case, "")
    n = len(case["inputs"]["reference_statements_by_context"])
    assert _nli_asks(engine) == 2 * n + 1


@pytest.mark.parametrize("case", WIDE_NOISE, ids=[f"wide-noise-{i}" for i in range(len(WIDE_NOISE))])
def test_noise_sensitivity_reproduces_ragas_wide(case: dict[str, Any]) -> None:
    """Up to 12 chunks and 12 statements a side, both modes, empty statement lists (NaN, no NLI ask)."""
    engine = _check(case, "")
    n = len(case["inputs"]["reference_statements_by_context"])
    assert _nli_asks(engine) == (2 * n + 1 if case["expected"] is not None else 0)


def test_covers_all_250_cases() -> None:
    assert len(CASES) == 250


def test_wide_vectors_cover_what_they_claim() -> None:
    """Every metric and option the wide file is meant to reach is in it."""
    seen = {(c["metric"], json.dumps(c["params"], sort_keys=True)) for c in WIDE_CASES}
    metrics = {m for m, _ in seen}
    assert metrics >= {"faithfulness", "context_precision", "context_utilization", "context_recall",
                       "answer_relevancy", "factual_correctness", "noise_sensitivity",
                       "id_context_precision", "id_context_recall"}
    params = [c["params"] for c in WIDE_CASES]
    assert {p["strictness"] for p in params if "strictness" in p} == {1, 2, 3, 4, 5}
    modes = {(c["metric"], c["params"]["mode"]) for c in WIDE_CASES if "mode" in c["params"]}
    assert modes == {("factual_correctness", m) for m in ("f1", "precision", "recall")} | {
        ("noise_sensitivity", m) for m in ("relevant", "irrelevant")}
    assert {c["metric"] for c in WIDE_CASES if "empty" in c["params"]} == {"answer_relevancy", "factual_correctness"}
    betas = [p["beta"] for p in params if "beta" in p]
    assert min(betas) == 0.3 and max(betas) == 3.0
    halves = [c for c in WIDE_CASES if c["metric"] == "factual_correctness" and c["expected"] == 0.88
              and c["params"]["beta"] in (0.3, 1.0)]
    assert len(halves) >= 2
    zero = [c for c in WIDE_CASES if c["metric"] == "answer_relevancy"
            and not any(c["inputs"]["question_vector"])]
    assert zero and all(c["expected"] is None for c in zero)


# -- the metrics after the first seven, and criteria (``vectors/make_more_vectors.py``) --------------

MORE_CASES = ragas_more_cases.CASES


@pytest.mark.parametrize("case", MORE_CASES, ids=[f"more-{c['metric']}-{i}" for i, c in enumerate(MORE_CASES)])
def test_reproduces_ragas_more(case: dict[str, Any], tmp_path: Path) -> None:
    name, sample, script, embedder = ragas_more_cases.setup(case, tmp_path)
    engine = ScriptedEngine(script)
    spec = parse_metric(name)
    out = Scheduler(engine, embedder, progress=False).run([sample], [spec])
    value, expected = out.outcomes[spec.name][0], case["expected"]
    if expected is None:
        assert isinstance(value, Nan), f"expected NaN, got {value}"
    else:
        assert isinstance(value, float), f"expected {expected}, got {value}"
        assert math.isclose(value, expected, rel_tol=0, abs_tol=1e-9), (value, expected)
    if case["metric"] == "criterion" and case["params"]["scale"] == "binary":
        n = len(case["inputs"]["votes"])  # Ragas' strictness, made odd: that many sampled verdicts
        assert [r.n for r in engine.requests] == [n]
        assert (engine.requests[0].temperature > 0) == (n > 1)
    if case["metric"] == "semantic_similarity":
        assert not engine.calls  # judge-free


def test_more_vectors_cover_what_they_claim() -> None:
    """Every new metric, the edge cases Ragas treats specially, and both kinds of criterion are in the file."""
    metrics = {c["metric"] for c in MORE_CASES}
    assert metrics == {"context_entity_recall", "answer_accuracy", "context_relevance", "response_groundedness",
                       "answer_correctness", "semantic_similarity", "criterion"}
    scales = {c["params"]["scale"] for c in MORE_CASES if c["metric"] == "criterion"}
    assert scales == {"binary", 5}
    strictness = {c["params"]["strictness"] for c in MORE_CASES if "strictness" in c["params"]}
    assert {2, 4} & strictness and {1, 3, 5} & strictness  # even ones are made odd
    edge = [c for c in MORE_CASES if c["metric"] == "context_relevance"
            and c["inputs"]["retrieved_contexts"] in (["the user input"], ["user"], [" ", ""])]
    assert edge and all(c["expected"] == 0.0 for c in edge)
    zero = [c for c in MORE_CASES if c["metric"] == "semantic_similarity" and not any(c["inputs"]["response_vector"])]
    assert zero
    weights = {c["params"]["weight"] for c in MORE_CASES if c["metric"] == "answer_correctness"}
    assert {0.0, 0.25, 1.0} <= weights
