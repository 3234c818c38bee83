"""Soft verdicts on the vLLM engine (a fake vllm): p(1) from the top log-probabilities at each binary decision."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import pytest
from test_vllm_engine import FakeLLM, FakeTokenizer, fake_vllm_module

from localeval.engine.base import Request
from localeval.engine.soft import ONE, OTHER, ZERO, p1_from_logprobs
from localeval.engine.vllm_engine import VLLMEngine

TOKENS = {0: "0", 1: "1", 2: "1}", 3: '{"verdict":', 4: "}"}
SCHEMA = {"type": "object", "properties": {"verdict": {"type": "integer", "enum": [0, 1]}},
          "required": ["verdict"], "additionalProperties": False}


class Logprob:
    def __init__(self, logprob: float) -> None:
        self.logprob = logprob


def _step(**probs: float) -> dict[int, Logprob]:
    return {int(t[1:]): Logprob(math.log(p) if p > 0 else float("-inf")) for t, p in probs.items()}


# The answer {"verdict":1} in three steps: the key (one token), the verdict, the closing brace.
STEPS = [_step(t3=1.0, t4=0.0), _step(t1=0.5, t2=0.3, t0=0.2, t4=0.0), _step(t4=1.0)]


class SoftTokenizer(FakeTokenizer):
    def decode(self, ids: list[int]) -> str:
        return "".join(TOKENS[i] for i in ids)


class SoftLLM(FakeLLM):
    """Answers every ask {"verdict":1}, with the steps' log-probabilities when the ask wants them."""

    def __init__(self, spelling: str, **kwargs: Any) -> None:
        super().__init__(spelling, answer=lambda *a: ['{"verdict":1}'], **kwargs)
        self.tokenizer = SoftTokenizer()

    def chat(self, messages: list[Any], sampling_params: list[Any] | None = None, **kwargs: Any) -> list[Any]:
        outputs = super().chat(messages, sampling_params, **kwargs)
        for output, params in zip(outputs, sampling_params or [], strict=True):
            for completion in output.outputs:
                completion.logprobs = STEPS if params.logprobs else None
        return outputs


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> VLLMEngine:
    module, sampling = fake_vllm_module("structured_outputs")
    monkeypatch.setitem(sys.modules, "vllm", module)
    monkeypatch.setitem(sys.modules, "vllm.sampling_params", sampling)
    return VLLMEngine(tmp_path, llm=SoftLLM("structured_outputs"))


def _ask(soft: bool) -> Request:
    return Request((("user", '{"q": "?"}'),), SCHEMA, max_tokens=16, soft=soft)


def test_a_soft_ask_asks_for_logprobs_and_gets_p1(engine: VLLMEngine) -> None:
    soft, hard = engine.generate([_ask(True), _ask(False)])
    assert soft.choices[0].verdict_probs == pytest.approx((0.8,))  # ("1" + "1}") over all allowed
    assert hard.choices[0].verdict_probs is None
    params = engine.llm.calls[0]["params"]
    assert params[0].logprobs == 20 and params[1].logprobs is None


def test_only_steps_whose_mass_is_all_on_0_and_1_are_decisions() -> None:
    lead = {0: ZERO, 1: ONE, 2: ONE, 3: OTHER, 4: OTHER}.__getitem__
    steps = [{0: math.log(0.3), 1: math.log(0.5)},  # 0.2 of the mass outside the top k: not known whole
             {0: math.log(0.5), 1: math.log(0.4), 3: math.log(0.1)},  # another token allowed
             {1: 0.0, 0: float("-inf")},  # only "1" allowed: no choice
             {0: math.log(0.25), 2: math.log(0.75), 4: float("-inf")}]
    assert p1_from_logprobs(steps, lead) == pytest.approx((0.75,))

