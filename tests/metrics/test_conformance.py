"""All 250 of Ragas 0.4.3's own scores on scripted verdicts, reproduced through the scheduler.

Each case becomes one sample; a scripted judge returns exactly the case's verdicts and a table
embedder the case's vectors, so the whole path (prompts, schema, scheduler, parsing, score) runs.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from localeval.data.sample import Sample
from localeval.engine.scripted import ScriptedEngine
from localeval.metrics import parse_metric
from localeval.nan import Nan
from localeval.scheduler import Scheduler

VECTORS = Path(__file__).parent / "vectors" / "ragas-0.4.3-vectors.jsonl"
CASES = [json.loads(line) for line in VECTORS.read_text().splitlines() if line.strip()]


class TableEmbedder:
    fingerprint = "table"

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.array([self.table[t] for t in texts], dtype=np.float64)


def _names(prefix: str, n: int) -> list[str]:
    return [f"{prefix} {i}" for i in range(n)]


def _case_setup(case: dict[str, Any]) -> tuple[str, Sample, Any, Any]:
    metric, params, x = case["metric"], case["params"], case["inputs"]
    contexts: list[str] = []
    embedder = None
    name = metric

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
        embedder = TableEmbedder(table)

        def script(label: str, data: dict, request: Any) -> Any:
            assert request.n == params["strictness"] and request.temperature > 0
            return [{"question": q, "noncommittal": f} for q, f in zip(questions, flags, strict=True)]

    elif metric == "factual_correctness":
        name = f"factual_correctness:mode={params['mode']}:beta={params['beta']}"
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
        name = f"noise_sensitivity:mode={params['mode']}"
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
            else:  # one ask per list and chunk, or one per chunk with both lists (merged)
                k = int(data["context"].split()[-1])
                verdicts = [(by_ref if s.startswith("ref") else by_resp)[k][int(s.split()[-1])]
                            for s in data["statements"]]
            return {"verdicts": [{"reason": "", "verdict": v} for v in verdicts]}

    else:  # pragma: no cover - a new metric in the file
        raise AssertionError(metric)

    sample = Sample(
        id="case",
        user_input="the user input",
        response="the response",
        reference="the reference",
        retrieved_contexts=tuple(contexts) or ("ctx 0",),
    )
    return name, sample, script, embedder


@pytest.mark.parametrize("case", CASES, ids=[f"{c['metric']}-{i}" for i, c in enumerate(CASES)])
def test_reproduces_ragas(case: dict[str, Any]) -> None:
    name, sample, script, embedder = _case_setup(case)
    engine = ScriptedEngine(script)
    spec = parse_metric(name)
    out = Scheduler(engine, embedder, progress=False).run([sample], [spec])
    value = out.outcomes[spec.name][0]
    expected = case["expected"]
    if expected is None:
        assert isinstance(value, Nan), f"expected NaN, got {value}"
    else:
        assert isinstance(value, float), f"expected {expected}, got {value}"
        assert math.isclose(value, expected, rel_tol=0, abs_tol=1e-9), (value, expected)


NOISE_CASES = [c for c in CASES if c["metric"] == "noise_sensitivity" and c["expected"] is not None]


@pytest.mark.parametrize("layout", ["merged", "separate"])
@pytest.mark.parametrize("case", NOISE_CASES, ids=[f"noise-{i}" for i in range(len(NOISE_CASES))])
def test_noise_sensitivity_ask_layouts_reproduce_ragas(case: dict[str, Any], layout: str) -> None:
    """Both lists per chunk in one ask (N + 1 NLI asks), or Ragas' one ask per list and chunk (2N + 1)."""
    name, sample, script, embedder = _case_setup(case)
    nli_asks: list[int] = []

    def counting(label: str, data: dict, request: Any) -> Any:
        if label == "nli":
            nli_asks.append(len(data["statements"]))
        return script(label, data, request)

    spec = parse_metric(f"{name}:asks={layout}")
    out = Scheduler(ScriptedEngine(counting), embedder, progress=False).run([sample], [spec])
    value = out.outcomes[spec.name][0]
    assert isinstance(value, float) and math.isclose(value, case["expected"], abs_tol=1e-9)
    n = len(sample.retrieved_contexts or ())
    assert len(nli_asks) == (n + 1 if layout == "merged" else 2 * n + 1)


def test_covers_all_250_cases() -> None:
    assert len(CASES) == 250
