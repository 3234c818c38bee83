"""The options several commands share (judge, engine, progress, cache), declared once, and the Shared values a
command receives (``cli.command`` builds the commands)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Annotated, Any, Literal

import typer

from localeval.config import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_BATCH_TOKENS,
    JudgeOptions,
    OptionError,
    RunConfig,
    build_config,
)
from localeval.errors import LocalevalError


@dataclass(frozen=True)
class Shared:
    """The shared options' values, as one command received them (a group it lacks keeps its defaults)."""

    judge: str | None = None
    embedder: str | None = None
    no_reasons: bool = False
    max_examples: int | None = None
    votes: int = 1
    temperature: float = 0.7
    soft: bool = False
    judge_every_copy: bool = False
    judge_mode: str = "ragas"
    grammar: str = "xgrammar"
    batch_size: int = DEFAULT_BATCH_SIZE
    batch_tokens: int = DEFAULT_BATCH_TOKENS
    threads: int | None = None
    trust_remote_code: bool = False
    engine: str = "transformers"
    replicas: int = 1
    ray_address: str | None = None
    tensor_parallel_size: int = 1
    gpu_memory_utilization: float = 0.9
    max_model_len: int | None = None
    dtype: str = "auto"
    quantization: str | None = None
    enforce_eager: bool | None = None
    deterministic: bool = False
    stop_repeats: bool = False
    drafts: int | None = None
    server_url: list[str] | None = None
    server_kind: str = "auto"
    server_model: str | None = None
    server_api_key_env: str | None = None
    server_api_key_file: str | None = None
    server_ca_file: str | None = None
    server_concurrency: int | None = None
    server_timeout: float = 600.0
    server_retries: int = 5
    no_progress: bool = False
    cache: str | None = None
    no_cache: bool = False

    def settings(self) -> Any:
        """What the judge is asked: reasons, few-shot examples, votes."""
        from localeval.prompts.base import Settings

        try:
            return Settings(reasons=not self.no_reasons, max_examples=self.max_examples, votes=self.votes,
                            temperature=self.temperature, soft=self.soft,
                            merge_repeats=not self.judge_every_copy, judge_mode=self.judge_mode)
        except ValueError as error:
            raise OptionError(str(error)) from None

    def judge_options(self, seed: int) -> JudgeOptions:
        """How the judge is loaded and run."""
        if self.engine == "server" or self.server_url:
            return self.server_options()
        extra: dict[str, object] = {"dtype": self.dtype} if self.dtype != "auto" else {}
        if self.stop_repeats:
            if self.engine != "transformers":
                raise OptionError("--stop-repeats works on the transformers engine only")
            extra["stop_repeats"] = True
        if self.drafts is not None:
            if self.engine != "transformers":
                raise OptionError("--drafts works on the transformers engine only (vLLM schedules its own decoding)")
            if self.drafts < 0:
                raise OptionError(f"--drafts takes 0 (off) or more draft tokens, not {self.drafts}")
            extra["drafts"] = self.drafts
        if self.engine != "transformers":
            extra = {
                "tensor_parallel_size": self.tensor_parallel_size,
                "gpu_memory_utilization": self.gpu_memory_utilization,
                "max_model_len": self.max_model_len,
                "dtype": self.dtype,
                "quantization": self.quantization,
                "enforce_eager": self.enforce_eager,
                "seed": seed,
                **({"deterministic": True} if self.deterministic else {}),  # transformers: so always, not recorded
            }
        return JudgeOptions(engine=self.engine, grammar=self.grammar, batch_size=self.batch_size,
                            batch_tokens=self.batch_tokens or None, threads=self.threads,
                            trust_remote_code=self.trust_remote_code, replicas=self.replicas,
                            ray_address=self.ray_address, extra=extra)

    def server_options(self) -> JudgeOptions:
        """The judge a server runs (--engine server): its URLs and the options of the server engine."""
        if self.engine != "server":
            raise OptionError("--server-url takes --engine server")
        if not self.server_url:
            raise OptionError("--engine server needs --server-url http://HOST:PORT/v1, the judge server's OpenAI "
                                 "base URL (once per server)")
        schemeless = [url for url in self.server_url if not url.strip().startswith(("http://", "https://"))]
        if schemeless:
            raise OptionError(f"--server-url takes http:// or https:// URLs, not {schemeless[0]!r}")
        wrong = [flag for flag, given in (("--judge", self.judge), ("--deterministic", self.deterministic),
                                          ("--stop-repeats", self.stop_repeats), ("--drafts", self.drafts is not None))
                 if given]
        if wrong:
            raise OptionError(f"{', '.join(wrong)} cannot work with a judge server: it serves its own model (name "
                                 "it with --server-model) and batches asks as it likes (to compare runs, give them "
                                 "one --cache)")
        return JudgeOptions.server(*self.server_url, kind=self.server_kind, model=self.server_model,
                                   api_key_env=self.server_api_key_env, api_key_file=self.server_api_key_file,
                                   ca_file=self.server_ca_file, concurrency=self.server_concurrency,
                                   timeout=self.server_timeout, retries=self.server_retries,
                                   max_model_len=self.max_model_len)

    def judge_config(self, seed: int = 0) -> RunConfig:
        """The judge settings, seed and engine options as a run configuration (no metrics)."""
        return RunConfig(settings=self.settings(), seed=seed, engine=self.judge_options(seed),
                         judge=self.judge, embedder=self.embedder)

    def run_config(self, metrics: str | None = None, seed: int = 0, chunk_size: int | None = None,
                   **policies: str) -> RunConfig:
        """The run configuration these options, the metrics, the seed, the chunk size and the policies ask for."""
        try:
            return build_config(metrics, self.judge, self.embedder, settings=self.settings(), seed=seed,
                                judge_options=self.judge_options(seed), chunk_size=chunk_size, **policies)
        except LocalevalError as error:  # --metrics: a name, an option or a criteria file that cannot work
            raise OptionError(str(error)) from None


# Each shared option: (parameter name, its type with the option's declaration). Defaults come from Shared.
Option = tuple[str, Any]


def interval_level(value: float) -> float:
    """--level: an interval's level, strictly between 0 and 1 (a usage error otherwise)."""
    if not 0 < value < 1:
        raise typer.BadParameter(f"give a level between 0 and 1, e.g. 0.95, not {value}")
    return value


METAVARS = {"server_url": "URL"}  # where the type's own name would read badly (list[str])


def options(*rows: tuple[str, Any, str]) -> tuple[Option, ...]:
    """Declarations from (parameter name, type, help) rows; each flag is the name in kebab case (``--batch-size``)."""
    return tuple((name, Annotated[kind, typer.Option("--" + name.replace("_", "-"), help=text,
                                                     metavar=METAVARS.get(name))])
                 for name, kind, text in rows)


JUDGE = options(
    ("judge", str | None, "judge: a model folder, a name in the models folder (default: smollm2-135m-instruct), "
                          "or a GGUF file (converted once)"),
    ("embedder", str | None, "embedder: a model folder, or a name in the models folder (default: all-minilm-l6-v2)"),
    ("no_reasons", bool, "ask for verdicts without free-text reasons"),
    ("max_examples", int | None, "at most N few-shot examples per prompt (default: all of them)"),
    ("votes", int, "verdict asks: sample N answers and take each verdict's majority (1: greedy)"),
    ("temperature", float, "sampling temperature of --votes"),
    ("soft", bool, "soft verdicts: also record the judge's p(1) at every 0/1 verdict and report each metric's "
                   "soft score (p(1) in place of 0/1) beside its score"),
    ("judge_every_copy", bool, "NLI asks: judge every copy of a statement the judge listed twice, as Ragas does "
                               "(default: each distinct statement once, its copies take its verdict)"),
    ("judge_mode", Literal["ragas", "small"], "ragas: Ragas' prompts; small: prompts a small judge can follow "
                                              "(faithfulness: each statement against its closest context sentences; "
                                              "docs/trusting-the-judge.md)"),
)
ENGINE = (*options(
    ("grammar", Literal["xgrammar", "outlines"], "grammar backend for constrained decoding"),
    ("batch_size", int, "most asks decoded together by the transformers engine"),
    ("batch_tokens", int, "transformers engine, models decoded in padded batches (sliding-window layers): "
                          "token budget of a batch, rows x (longest prompt tail + longest answer); 0: no budget"),
    ("threads", int | None, "CPU threads for torch (default: all cores, waiting passively; docs/cpu.md: Threads)"),
    ("trust_remote_code", bool, "allow the model folder's own code"),
    ("engine", Literal["transformers", "vllm", "ray-vllm", "server"],
     "judge engine: transformers (CPU/GPU), vllm (GPU), ray-vllm (vLLM replicas on Ray), server (a judge server "
     "you run: --server-url)"),
    ("replicas", int, "ray-vllm: engine replicas (one per GPU if the judge fits)"),
    ("ray_address", str | None, "ray-vllm: cluster address (default: local, or a new one)"),
    ("tensor_parallel_size", int, "vllm: GPUs per engine, for a judge too big for one"),
    ("gpu_memory_utilization", float, "vllm: share of GPU memory vLLM may take"),
    ("max_model_len", int | None, "vllm: context window (default: the model's); server: a cap on the server's "
                                  "window (Ollama: the num_ctx sent, default the model's num_ctx or 4096)"),
    ("dtype", str, "weights dtype: auto (transformers on a CPU: bfloat16 where the CPU has AVX512_BF16 "
                   "or AMX, else float32; vllm: the model's), float32, bfloat16 (transformers: bf16 weights, "
                   "attention in float32), float16"),
    ("quantization", str | None, "vllm: awq, gptq, fp8, ... (default: from the model folder)"),
    ("deterministic", bool, "answers that do not depend on what shares their batch. vllm: its batch-invariant mode "
                            "(beta; NVIDIA GPUs of compute capability 8.0 or higher), or an error before the model "
                            "loads that says what to use instead where the installed vLLM or the GPU has none (the "
                            "CPU build); transformers: accepted, changes nothing (its answers are so always)"),
    ("stop_repeats", bool, "transformers engine: end a list the moment the judge repeats an earlier item of it "
                           "(fewer tokens from a judge that loops; only such answers change; "
                           "docs/cpu.md: Speed knobs)"),
    ("drafts", int | None, "transformers engine: most draft tokens a greedy row has checked per forward pass "
                           "(the grammar's forced text, prompt lookup; the same answers; 0: off; default 8)"),
    ("server_url", list[str] | None, "server: the judge server's OpenAI base URL, e.g. http://gpu-box:8000/v1; "
                                     "give it once per server (each serving the same model) to share the rounds"),
    ("server_kind", Literal["auto", "vllm", "vllm-legacy", "sglang", "llamacpp", "ollama", "openai"],
     "server: how it takes a JSON schema (auto: read from the server; vllm-legacy: guided_json)"),
    ("server_model", str | None, "server: the served model's id (default: the only one it lists)"),
    ("server_api_key_env", str | None, "server: the environment variable holding its API key (default: "
                                       "LOCALEVAL_SERVER_API_KEY, when set)"),
    ("server_api_key_file", str | None, "server: a file whose first line is its API key"),
    ("server_ca_file", str | None, "server: a CA bundle to verify its TLS certificate (an internal CA)"),
    ("server_concurrency", int | None, "server: most asks in flight on each server (default: vllm and sglang 128, "
                                       "llamacpp 2 a slot, ollama 4, openai 16)"),
    ("server_timeout", float, "server: seconds one request may take before it is tried again"),
    ("server_retries", int, "server: most retries, with backoff, of a request after a dropped connection, a 429 "
                            "or a 5xx"),
), ("enforce_eager", Annotated[bool | None, typer.Option(
    "--enforce-eager/--compile",
    help="vllm: run the model eagerly, or compile it (CUDA graphs); default: eager on a CPU build, compiled on a GPU",
)]))
PROGRESS = options(("no_progress", bool, "no progress, loading bars or warnings"))
CACHE_FILE = options(("cache", str | None, "a judge cache file shared between runs"))
NO_CACHE = options(("no_cache", bool, "neither read nor write a judge cache"))
DEFAULTS = {f.name: f.default for f in fields(Shared)}
