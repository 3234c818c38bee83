"""The vLLM engine against a fake ``vllm`` module (no GPU): what each ask carries, one call per round,
order, token accounting, both structured-output spellings, and asks too long for the context."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import localeval
from localeval.embed import HashEmbedder
from localeval.engine.base import Request
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.engine.transformers.slots import shared_length
from localeval.engine.vllm_engine import VLLMEngine
from localeval.errors import LocalevalError

SPELLINGS = {  # SamplingParams field -> the params class the fake vllm.sampling_params offers
    "structured_outputs": "StructuredOutputsParams",
    "guided_decoding": "GuidedDecodingParams",
}


Answer = Callable[[list[dict[str, str]], Any, dict[str, Any]], list[str]]  # the fake model's texts for one ask


class FakeTokenizer:
    """A word tokenizer with a ChatML-like template: every word and every marker is one token."""

    def apply_chat_template(
        self, chat: list[dict[str, str]], tokenize: bool = False, add_generation_prompt: bool = False, **kwargs: Any
    ) -> str:
        assert tokenize is False
        text = "".join(f"<|{m['role']}|> {m['content']} <|end|> " for m in chat)
        return text + ("<|assistant|> " if add_generation_prompt else "")

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return [hash(word) % 50_000 for word in text.split()]


def _label(schema: dict[str, Any]) -> str:
    """Which localeval prompt a schema belongs to, from its top-level properties."""
    keys = set(schema["properties"])
    for label, key in (
        ("statements", "statements"),
        ("nli", "verdicts"),
        ("attribution", "classifications"),
        ("question", "noncommittal"),
        ("claims", "claims"),
        ("context_usefulness", "verdict"),
    ):
        if key in keys:
            return label
    raise AssertionError(f"unknown schema {keys}")


def rule_answers(conversation: list[dict[str, str]], params: Any, schema: dict[str, Any]) -> list[str]:
    """The fake model: rule_script on the ask's input, the prompt recognised by its schema."""
    data = json.loads(conversation[-1]["content"])
    request = Request(messages=(), schema=schema, n=params.n, label=_label(schema))
    answer = rule_script(request.label, data, request)
    answers = answer if isinstance(answer, list) else [answer]
    return [json.dumps(a) for a in answers]


class FakeLLM:
    """Records every chat call; answers with ``answer`` and simulates a prefix cache over earlier prompts."""

    def __init__(self, spelling: str, answer: Answer = rule_answers, context_window: int = 4096, **kwargs: Any) -> None:
        self.spelling = spelling
        self.answer = answer
        self.init_kwargs = kwargs
        self.calls: list[dict[str, Any]] = []
        self.seen: list[list[int]] = []
        self.tokenizer = FakeTokenizer()
        self.llm_engine = types.SimpleNamespace(
            model_config=types.SimpleNamespace(max_model_len=context_window, dtype="torch.bfloat16")
        )

    def get_tokenizer(self) -> FakeTokenizer:
        return self.tokenizer

    def chat(
        self,
        messages: list[list[dict[str, str]]],
        sampling_params: list[Any] | None = None,
        use_tqdm: bool = True,
        **kwargs: Any,
    ) -> list[Any]:
        assert isinstance(sampling_params, list) and len(sampling_params) == len(messages)
        self.calls.append({"messages": messages, "params": sampling_params, "use_tqdm": use_tqdm, **kwargs})
        outputs = []
        for conversation, params in zip(messages, sampling_params, strict=True):
            text = self.tokenizer.apply_chat_template(conversation, add_generation_prompt=True)
            ids = self.tokenizer.encode(text, add_special_tokens=False)
            cached = max((shared_length(ids, seen) for seen in self.seen), default=0)
            self.seen.append(ids)
            schema = getattr(params, self.spelling).json
            completions = [
                types.SimpleNamespace(index=k, text=t, token_ids=list(range(len(t.split()))), finish_reason="stop")
                for k, t in enumerate(self.answer(conversation, params, schema))
            ]
            outputs.append(
                types.SimpleNamespace(
                    prompt_token_ids=ids,
                    num_cached_tokens=cached or None,
                    outputs=completions[::-1],
                )
            )
        return outputs


def fake_vllm_module(spelling: str) -> tuple[types.ModuleType, types.ModuleType]:
    """A ``vllm`` package whose sampling_params offers only one structured-output spelling."""
    params_class = dataclasses.make_dataclass(SPELLINGS[spelling], [("json", Any)])
    sampling = dataclasses.make_dataclass(
        "SamplingParams",
        [
            ("n", int, 1),
            ("temperature", float, 1.0),
            ("max_tokens", int, 16),
            ("seed", Any, None),
            ("logprobs", Any, None),
            (spelling, Any, None),
        ],
    )
    module = types.ModuleType("vllm")
    sampling_module = types.ModuleType("vllm.sampling_params")
    sampling_module.SamplingParams = sampling  # type: ignore[attr-defined]
    setattr(sampling_module, SPELLINGS[spelling], params_class)
    module.SamplingParams = sampling  # type: ignore[attr-defined]
    module.sampling_params = sampling_module  # type: ignore[attr-defined]
    module.built = []  # type: ignore[attr-defined]

    def llm(**kwargs: Any) -> FakeLLM:
        built = FakeLLM(spelling, **kwargs)
        module.built.append(built)
        return built

    module.LLM = llm  # type: ignore[attr-defined]
    return module, sampling_module


@pytest.fixture(params=list(SPELLINGS))
def fake_vllm(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    module, sampling_module = fake_vllm_module(request.param)
    monkeypatch.setitem(sys.modules, "vllm", module)
    monkeypatch.setitem(sys.modules, "vllm.sampling_params", sampling_module)
    return module


def _request(text: str, *, max_tokens: int = 64, temperature: float = 0.0, n: int = 1, seed: int = 0) -> Request:
    schema = {
        "type": "object",
        "properties": {"statements": {"type": "array", "items": {"type": "string"}}},
        "required": ["statements"],
    }
    messages = (("system", "Split the answer into statements."), ("user", json.dumps({"answer": text})))
    return Request(
        messages=messages,
        schema=schema,
        max_tokens=max_tokens,
        temperature=temperature,
        n=n,
        seed=seed,
        label="statements",
    )


def test_the_llm_is_built_with_prefix_caching_and_the_grammar_settings(
    fake_vllm: types.ModuleType, tmp_path: Path
) -> None:
    engine = VLLMEngine(
        tmp_path,
        tensor_parallel_size=2,
        gpu_memory_utilization=0.8,
        max_model_len=2048,
        dtype="bfloat16",
        quantization="awq",
        seed=7,
    )
    kwargs = fake_vllm.built[0].init_kwargs
    assert kwargs["model"] == str(tmp_path) and kwargs["enable_prefix_caching"] is True
    assert engine.engine_args == kwargs  # what it keeps is what LLM(...) was given
    assert (kwargs["tensor_parallel_size"], kwargs["gpu_memory_utilization"], kwargs["max_model_len"]) == (2, 0.8, 2048)
    assert (kwargs["dtype"], kwargs["quantization"], kwargs["seed"]) == ("bfloat16", "awq", 7)
    if engine.api.field == "structured_outputs":
        assert kwargs["structured_outputs_config"] == {"backend": "xgrammar", "disable_any_whitespace": True}
    else:
        assert kwargs["guided_decoding_backend"] == "xgrammar"
        assert kwargs["guided_decoding_disable_any_whitespace"] is True
    assert engine.fingerprint.startswith(f"vllm:{tmp_path.name}@") and engine.fingerprint.endswith(":bfloat16:awq")


def test_the_grammar_settings_use_vllms_config_class_where_it_has_one(
    fake_vllm: types.ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = types.ModuleType("vllm.config")
    config.StructuredOutputsConfig = dataclasses.make_dataclass(  # type: ignore[attr-defined]
        "StructuredOutputsConfig", [("backend", str), ("disable_any_whitespace", bool)]
    )
    monkeypatch.setitem(sys.modules, "vllm.config", config)
    engine = VLLMEngine(tmp_path)
    if engine.api.field == "structured_outputs":
        built = fake_vllm.built[0].init_kwargs["structured_outputs_config"]
        assert isinstance(built, config.StructuredOutputsConfig)
        assert (built.backend, built.disable_any_whitespace) == ("xgrammar", True)


def test_each_ask_carries_its_budget_schema_and_sampling(fake_vllm: types.ModuleType, tmp_path: Path) -> None:
    engine = VLLMEngine(tmp_path)
    greedy, sampled = _request("A. B.", max_tokens=300), _request("C.", max_tokens=90, temperature=0.7, n=3, seed=5)
    engine.generate([greedy, sampled])
    params = fake_vllm.built[0].calls[0]["params"]
    assert (params[0].temperature, params[0].max_tokens, params[0].n, params[0].seed) == (0.0, 300, 1, None)
    assert (params[1].temperature, params[1].max_tokens, params[1].n, params[1].seed) == (0.7, 90, 3, 5)
    for p, r in zip(params, (greedy, sampled), strict=True):
        structured = getattr(p, engine.api.field)
        assert type(structured).__name__ == SPELLINGS[engine.api.field] and structured.json == r.schema


def test_one_chat_call_per_round_and_answers_in_order(fake_vllm: types.ModuleType, tmp_path: Path) -> None:
    engine = VLLMEngine(tmp_path, progress=False)
    texts = [f"Fact number {i} holds." for i in range(7)]
    seen: list[int] = []
    results = engine.generate([_request(t) for t in texts], on_result=lambda i, r: seen.append(i))
    llm = fake_vllm.built[0]
    assert len(llm.calls) == 1 and llm.calls[0]["use_tqdm"] is False
    assert [json.loads(r.choices[0].text)["statements"] for r in results] == [[t] for t in texts]
    assert sorted(seen) == list(range(7))
    assert [c[0]["role"] for c in llm.calls[0]["messages"]] == ["system"] * 7


def test_n_choices_come_back_in_index_order(fake_vllm: types.ModuleType, tmp_path: Path) -> None:
    def numbered(conversation: list[dict[str, str]], params: Any, schema: dict[str, Any]) -> list[str]:
        return [json.dumps({"statements": [f"sample {k}"]}) for k in range(params.n)]

    engine = VLLMEngine(tmp_path, llm=FakeLLM(engine_field(), answer=numbered))
    (result,) = engine.generate([_request("x", temperature=0.7, n=3)])
    assert [json.loads(c.text)["statements"][0] for c in result.choices] == ["sample 0", "sample 1", "sample 2"]


def engine_field() -> str:
    return (
        "structured_outputs"
        if hasattr(sys.modules["vllm.sampling_params"], "StructuredOutputsParams")
        else ("guided_decoding")
    )


def test_token_accounting_and_prefix_cache_hit_rate(fake_vllm: types.ModuleType, tmp_path: Path) -> None:
    engine = VLLMEngine(tmp_path)
    first, second = engine.generate([_request("One two three."), _request("One two four.")])
    prompt = len(
        FakeTokenizer().encode(
            FakeTokenizer().apply_chat_template(
                [{"role": r, "content": c} for r, c in _request("One two three.").messages], add_generation_prompt=True
            )
        )
    )
    assert first.prompt_tokens == second.prompt_tokens == prompt == engine.count_prompt_tokens(_request("x y z."))
    assert first.cached_prompt_tokens == 0  # vLLM's None becomes 0
    assert 0 < second.cached_prompt_tokens < prompt
    assert first.choices[0].completion_tokens == len(first.choices[0].text.split())
    assert first.choices[0].finish_reason == "stop"
    assert engine.prefix_cache_hit_rate == pytest.approx(second.cached_prompt_tokens / (2 * prompt))


def test_finish_reasons_map_to_the_engine_boundary(fake_vllm: types.ModuleType, tmp_path: Path) -> None:
    llm = FakeLLM(engine_field())
    engine = VLLMEngine(tmp_path, llm=llm)
    original = llm.chat

    def chat(*args: Any, **kwargs: Any) -> list[Any]:
        outputs = original(*args, **kwargs)
        outputs[0].outputs[0].finish_reason = "length"
        outputs[1].outputs[0].finish_reason = "abort"
        return outputs

    llm.chat = chat  # type: ignore[method-assign]
    cut, aborted, fine = engine.generate([_request("a."), _request("b."), _request("c.")])
    assert cut.choices[0].finish_reason == "length" and cut.error is None
    assert aborted.choices[0].finish_reason == "error" and "abort" in (aborted.error or "")
    assert fine.choices[0].finish_reason == "stop"


def test_an_ask_too_long_for_the_context_is_never_sent(fake_vllm: types.ModuleType, tmp_path: Path) -> None:
    llm = FakeLLM(engine_field(), context_window=120)
    engine = VLLMEngine(tmp_path, llm=llm)
    long = _request(" ".join(["word"] * 100), max_tokens=40)
    tight = _request("Short one.", max_tokens=120)  # the prompt fits, its answer budget does not
    results = engine.generate([_request("Short."), long, tight, _request("Also short.")])
    assert [r.choices[0].finish_reason for r in results] == ["stop", "context_too_long", "context_too_long", "stop"]
    assert results[1].prompt_tokens == engine.count_prompt_tokens(long) > 100
    sent = llm.calls[0]["messages"]
    assert len(sent) == 2 and all("word word" not in c[-1]["content"] for c in sent)
    only_long = engine.generate([long])
    assert only_long[0].choices[0].finish_reason == "context_too_long" and len(llm.calls) == 1  # no empty call


def test_chat_template_kwargs_reach_the_chat_call(fake_vllm: types.ModuleType, tmp_path: Path) -> None:
    engine = VLLMEngine(tmp_path, chat_template_kwargs={"enable_thinking": False})
    engine.generate([_request("x.")])
    assert fake_vllm.built[0].calls[0]["chat_template_kwargs"] == {"enable_thinking": False}


def test_without_vllm_the_error_says_how_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "vllm", None)
    with pytest.raises(LocalevalError, match=r"pip install 'localeval\[vllm\]'"):
        VLLMEngine(tmp_path)


@pytest.mark.slow  # a fresh interpreter imports localeval
def test_importing_localeval_never_imports_vllm_or_ray() -> None:
    code = (
        "import sys, localeval, localeval.api, localeval.engine.vllm_engine, localeval.engine.ray_engine\n"
        "assert 'vllm' not in sys.modules and 'ray' not in sys.modules, sorted(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


ROWS = [
    {
        "id": "a",
        "user_input": "Where does the river Alpha flow?",
        "response": "The river Alpha flows into the northern sea. It is very long.",
        "retrieved_contexts": ["The river Alpha flows into the northern sea.", "Cats sleep a lot."],
        "reference": "The river Alpha flows into the northern sea.",
    },
    {
        "id": "b",
        "user_input": "What colour are bananas?",
        "response": "I don't know.",
        "retrieved_contexts": ["Bananas are yellow when ripe."],
        "reference": "Bananas are yellow when ripe.",
    },
]
METRICS = ["faithfulness", "context_precision", "answer_relevancy", "context_recall"]


def test_a_whole_evaluation_through_the_vllm_engine_matches_the_scripted_judge(
    fake_vllm: types.ModuleType, tmp_path: Path
) -> None:
    engine = VLLMEngine(tmp_path, progress=False)
    result = localeval.evaluate(ROWS, metrics=METRICS, judge=engine, embedder=HashEmbedder(), progress=False)
    expected = localeval.evaluate(
        ROWS, metrics=METRICS, judge=ScriptedEngine(rule_script), embedder=HashEmbedder(), progress=False
    )
    assert result.to_pandas().equals(expected.to_pandas())
    assert result.output.engine_calls == len(fake_vllm.built[0].calls) >= 2
    usage = result.usage()
    assert sum(u.prompt_tokens for u in usage.values()) == engine.prompt_tokens
    assert sum(u.cached_prompt_tokens for u in usage.values()) == engine.cached_prompt_tokens > 0


def _platform(monkeypatch: pytest.MonkeyPatch, cpu: bool) -> None:
    platforms = types.ModuleType("vllm.platforms")
    platforms.current_platform = types.SimpleNamespace(is_cpu=lambda: cpu)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vllm.platforms", platforms)


@pytest.mark.parametrize("cpu", [True, False])
def test_eager_by_default_on_a_cpu_build_only(
    fake_vllm: types.ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cpu: bool
) -> None:
    _platform(monkeypatch, cpu)
    monkeypatch.delenv("VLLM_CPU_KVCACHE_SPACE", raising=False)
    engine = VLLMEngine(tmp_path)
    kwargs = fake_vllm.built[0].init_kwargs
    assert engine.on_cpu is cpu and kwargs["enforce_eager"] is cpu
    assert kwargs.get("kv_cache_memory_bytes") == (2 * 2**30 if cpu else None)  # not a share of all memory
    # a CPU generator cannot be rewound after a partial prefill: whole prompts per step there
    assert kwargs.get("enable_chunked_prefill") == (False if cpu else None)
    VLLMEngine(tmp_path, enforce_eager=not cpu)  # the user's choice wins either way
    assert fake_vllm.built[1].init_kwargs["enforce_eager"] is (not cpu)


def test_a_cpu_kv_cache_size_set_in_the_environment_is_left_to_vllm(
    fake_vllm: types.ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _platform(monkeypatch, True)
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "6")
    VLLMEngine(tmp_path)
    assert "kv_cache_memory_bytes" not in fake_vllm.built[0].init_kwargs


def test_close_stops_the_engine_process_once_asked(fake_vllm: types.ModuleType, tmp_path: Path) -> None:
    engine = VLLMEngine(tmp_path)
    stopped: list[bool] = []
    engine.llm.llm_engine.engine_core = types.SimpleNamespace(shutdown=lambda: stopped.append(True))
    engine.close()
    assert stopped == [True]
