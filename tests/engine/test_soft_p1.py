"""p(1) at a binary decision, from logits and the grammar's bitmask; and from the bundled judge."""

from __future__ import annotations

import json
import math

import pytest
import torch

from localeval.engine.base import Request
from localeval.engine.soft import LeadTable, binary_p1, token_leads
from localeval.metrics.soft import binary_paths

TEXTS = ["0", "1", "0}", "1,", "a", '"', "10"]  # a toy vocabulary
WORDS = 1


def _mask(*allowed: int) -> torch.Tensor:
    bits = sum(1 << t for t in allowed)
    return torch.tensor([bits], dtype=torch.int64).to(torch.int32)


def test_token_leads_read_the_first_character() -> None:
    assert token_leads(TEXTS).tolist() == [0, 1, 0, 1, -1, -1, 1]


def test_p1_is_the_allowed_ones_mass_over_all_allowed() -> None:
    table = LeadTable.from_texts(TEXTS, WORDS)
    logits = torch.tensor([1.0, 2.0, 0.5, -1.0, 9.0, 9.0, 3.0])
    p = binary_p1(logits, _mask(0, 1, 2, 3), table)
    e = [math.exp(v) for v in (1.0, 2.0, 0.5, -1.0)]
    assert p == pytest.approx((e[1] + e[3]) / sum(e))  # tokens 4-6 are not allowed: left out


def test_masked_logits_give_the_same_p1() -> None:
    table = LeadTable.from_texts(TEXTS, WORDS)
    logits = torch.tensor([1.0, 2.0, float("-inf"), float("-inf"), float("-inf"), float("-inf"), float("-inf")])
    assert binary_p1(logits, _mask(0, 1), table) == pytest.approx(math.exp(2) / (math.exp(1) + math.exp(2)))


def test_a_step_that_is_not_a_binary_decision_has_none() -> None:
    table = LeadTable.from_texts(TEXTS, WORDS)
    logits = torch.zeros(2, len(TEXTS))
    assert binary_p1(logits[0], _mask(0, 1, 4), table) is None  # another token is allowed too
    assert binary_p1(logits[0], _mask(1, 3), table) is None  # only ones: no choice
    assert binary_p1(logits[0], _mask(0), table) is None
    both = torch.stack([_mask(0, 1), _mask(5)])
    assert [binary_p1(logits[k], both[k], table) for k in range(2)] == [0.5, None]


REQUESTS = [
    Request((("system", "Answer with JSON."), ("user", "Is Paris in France? Give a verdict.")),
            {"type": "object", "properties": {"reason": {"type": "string", "maxLength": 40},
                                              "verdict": {"type": "integer", "enum": [0, 1]}},
             "required": ["reason", "verdict"], "additionalProperties": False}, max_tokens=80, soft=True),
    Request((("system", "Answer with JSON."), ("user", "Judge: 1. Paris is in France. 2. Paris is in Peru.")),
            {"type": "object", "properties": {"verdicts": {"type": "array", "minItems": 2, "maxItems": 2, "items": {
                "type": "object", "properties": {"verdict": {"type": "integer", "enum": [0, 1]}},
                "required": ["verdict"], "additionalProperties": False}}},
             "required": ["verdicts"], "additionalProperties": False}, max_tokens=60, soft=True),
]


def _verdicts(value: object) -> list[int]:
    if isinstance(value, dict):
        return [v for k, item in value.items() for v in ([item] if k == "verdict" else _verdicts(item))]
    if isinstance(value, list):
        return [v for item in value for v in _verdicts(item)]
    return []


@pytest.mark.model
def test_the_bundled_judge_records_p1_at_every_verdict(judge_engine, monkeypatch) -> None:
    import localeval.engine.transformers.decode as decode
    import localeval.engine.transformers.stepper as stepper

    steps: list[tuple[float, float]] = []  # (p(1), p(0)) at each binary decision, from the allowed mask
    real = decode.note_p1

    def recording(table, logits, bitmask, rows) -> None:
        for k in range(logits.shape[0]):
            p = binary_p1(logits[k], bitmask[k], table)
            if p is not None:
                allowed = ((bitmask[k].long().unsqueeze(0) >> torch.arange(32).unsqueeze(1)) & 1).T.reshape(-1)
                probs = torch.softmax(logits[k].float(), dim=0)[: allowed.numel()] * allowed[: logits.shape[1]]
                zeros = [t for t in range(allowed.numel()) if allowed[t] and not bool(table.ones[t])]
                steps.append((p, float(probs[zeros].sum())))
        real(table, logits, bitmask, rows)

    monkeypatch.setattr(decode, "note_p1", recording)  # fixed batches (models with sliding-window layers)
    monkeypatch.setattr(stepper, "note_p1", recording)  # continuous batching (every plain model)
    results = judge_engine.generate(REQUESTS)
    for request, result in zip(REQUESTS, results, strict=True):
        choice = result.choices[0]
        data = json.loads(choice.text)
        verdicts = _verdicts(data)
        assert choice.verdict_probs is not None
        assert len(choice.verdict_probs) == len(binary_paths(data, request.schema)) == len(verdicts)
        for verdict, p in zip(verdicts, choice.verdict_probs, strict=True):
            assert 0.0 <= p <= 1.0
            assert verdict == int(p > 0.5)  # greedy takes the more probable side
    assert len(steps) == sum(len(r.choices[0].verdict_probs or ()) for r in results)
    for p1, p0 in steps:
        assert p1 + p0 == pytest.approx(1.0, abs=1e-5)  # the two sides hold all the allowed mass
    hard = judge_engine.generate([Request(**{**r.__dict__, "soft": False}) for r in REQUESTS])
    assert [h.choices[0].text for h in hard] == [r.choices[0].text for r in results]
    assert all(h.choices[0].verdict_probs is None for h in hard)


@pytest.mark.model
def test_every_verdict_of_the_real_prompts_gets_its_p1(judge_engine) -> None:
    from pathlib import Path

    from localeval.api import as_samples
    from localeval.embed import HashEmbedder
    from localeval.metrics.registry import parse_metrics
    from localeval.prompts.base import Settings
    from localeval.scheduler import Scheduler

    seen: list[tuple[Request, object]] = []

    class Recording:
        fingerprint, context_window = judge_engine.fingerprint, judge_engine.context_window
        count_prompt_tokens = staticmethod(judge_engine.count_prompt_tokens)

        def generate(self, requests, on_result=None):
            results = judge_engine.generate(requests, on_result)
            seen.extend(zip(requests, results, strict=True))
            return results

    demo = as_samples(Path(__file__).resolve().parents[2] / "examples" / "rag_demo.jsonl")[:2]
    metrics = parse_metrics(["faithfulness", "context_recall", "answer_relevancy"])
    out = Scheduler(Recording(), HashEmbedder(), settings=Settings(soft=True), progress=False).run(demo, metrics)
    counted = 0
    for request, result in seen:
        for choice in result.choices:  # type: ignore[attr-defined]
            paths = binary_paths(json.loads(choice.text), request.schema)
            assert choice.verdict_probs is not None and len(choice.verdict_probs) == len(paths)
            counted += len(paths)
    assert counted > 0
    assert all("soft_score" in t for t in out.traces["faithfulness"] if t.get("verdicts"))
