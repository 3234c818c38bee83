"""Each judge engine's options as one typed model: the one place that says which option belongs to which engine.

The CLI's engine flags and their help (``cli.shared``), the Python API's keyword arguments (``evaluate(...,
threads=1)``), their validation (before any model loads), the arguments ``engine.build`` gives an engine and the
``extra`` record of summary.json all come from these models. A field's keyword is its alias where it has one
(``server_url``), else its name; its flag is the keyword in kebab case unless the field says otherwise.
"""

from __future__ import annotations

import importlib
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.fields import FieldInfo

from localeval.engine.base import Engine
from localeval.errors import OptionError

DEFAULT_BATCH_SIZE = 16  # most rows decoding at once
DEFAULT_BATCH_TOKENS = 16384  # token budget of a padded batch
# The weight dtypes a judge folder loads in, by name; vLLM also takes its own spellings of two of them.
DTYPES = ("auto", "float32", "bfloat16", "float16")
VLLM_DTYPES = (*DTYPES, "half", "float")
# The options summary.json keeps beside "extra" in its engine record, with the value an engine without them records.
RECORD_FIELDS: dict[str, Any] = {"grammar": "xgrammar", "batch_size": DEFAULT_BATCH_SIZE,
                                 "batch_tokens": DEFAULT_BATCH_TOKENS, "threads": None, "trust_remote_code": False,
                                 "replicas": 1, "ray_address": None}


def option(default: Any, help: str, *, flag: str | None = None, alias: str | None = None, **checks: Any) -> Any:
    """A field with its CLI help; ``flag``: its flag where not the keyword in kebab case ("" for none)."""
    extra: Any = {"flag": flag} if flag is not None else None
    return Field(default, description=help, alias=alias, json_schema_extra=extra, **checks)


def web_url(url: str) -> str:
    """``url`` where it is http:// or https:// (the one check of a judge server's URL), else an OptionError."""
    if not str(url).strip().startswith(("http://", "https://")):
        raise OptionError(f"--server-url takes http:// or https:// URLs, not {url!r}")
    return url


def _dtype(engine: str, value: str, known: tuple[str, ...]) -> str:
    if value not in known:
        raise ValueError(f"--dtype {value}: the {engine} engine loads weights as {', '.join(known[:-1])} or "
                         f"{known[-1]}; give one of those (auto: the engine chooses)")
    return value


def _problem(error: Any, takes: str) -> str:
    """One validation error as a line that names the option and what the engine takes."""
    name = ".".join(map(str, error["loc"]))
    if error["type"] == "value_error":  # our own checks say it whole
        return str(error["msg"]).removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        return f"{name}: no such option ({takes})"
    return f"{name} {error['input']!r}: {error['msg'].lower()} ({takes})"


class EngineOptions(BaseModel):
    """What every engine's options model has: its engine's name, how it is given and recorded."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    engine: ClassVar[str] = ""
    engine_class: ClassVar[str] = ""  # module:class of the engine these options build
    NOT_PASSED: ClassVar[tuple[str, ...]] = ()  # fields the engine's constructor does not take

    @classmethod
    def engine_type(cls) -> type[Engine]:
        """The engine class these options build (imported only when asked: it may import torch)."""
        module, name = cls.engine_class.split(":")
        engine: type[Engine] = getattr(importlib.import_module(module), name)
        return engine

    @classmethod
    def keywords(cls) -> dict[str, str]:
        """Each option's keyword (the API's argument, the CLI flag's stem) and its field name."""
        return {field.alias or name: name for name, field in cls.model_fields.items()}

    @classmethod
    def from_keywords(cls, given: dict[str, Any]) -> EngineOptions:
        """The options ``given`` names (keywords or field names); an unknown name or a bad value is an OptionError
        that names this engine and the options it takes."""
        try:
            return cls(**given)
        except ValidationError as error:
            takes = f"the {cls.engine} engine takes {', '.join(cls.keywords())}"
            raise OptionError("; ".join(_problem(e, takes) for e in error.errors())) from None

    def recorded(self) -> dict[str, Any]:
        """The options summary.json's engine record keeps under "extra": those given, bar ``RECORD_FIELDS``."""
        return {k: v for k, v in self.model_dump(exclude_unset=True).items() if k not in RECORD_FIELDS}

    def arguments(self) -> dict[str, Any]:
        """The engine constructor's arguments: the recorded options and this engine's ``RECORD_FIELDS``."""
        held = {k: getattr(self, k) for k in RECORD_FIELDS if k in type(self).model_fields}
        return {k: v for k, v in {**held, **self.recorded()}.items() if k not in self.NOT_PASSED}


class TransformersOptions(EngineOptions):
    """How the transformers engine loads and runs the judge (``TransformersEngine``'s arguments)."""

    engine: ClassVar[str] = "transformers"
    engine_class: ClassVar[str] = "localeval.engine.transformers.engine:TransformersEngine"
    NOT_PASSED: ClassVar[tuple[str, ...]] = ("deterministic",)

    grammar: Literal["xgrammar", "outlines"] = option("xgrammar", "grammar backend for constrained decoding")
    batch_size: int = option(DEFAULT_BATCH_SIZE, "most asks decoded together by the transformers engine", ge=1)
    batch_tokens: int | None = option(
        DEFAULT_BATCH_TOKENS, "transformers engine, models decoded in padded batches (sliding-window layers): token "
        "budget of a batch, rows x (longest prompt tail + longest answer); 0: no budget", ge=1)
    threads: int | None = option(None, "CPU threads for torch or llama-server (default: all cores; torch waits "
                                       "passively, docs/cpu.md: Threads)", ge=1)
    trust_remote_code: bool = option(False, "allow the model folder's own code")
    dtype: str = option("auto", "weights dtype: auto (transformers on a CPU: bfloat16 where the CPU has AVX512_BF16 "
                                "or AMX, else float32; vllm: the model's), float32, bfloat16 (transformers: bf16 "
                                "weights, attention in float32), float16")
    stop_repeats: bool = option(False, "transformers engine: end a list the moment the judge repeats an earlier "
                                       "item of it (fewer tokens from a judge that loops; only such answers change; "
                                       "docs/cpu.md: Speed knobs)")
    drafts: int | None = option(None, "transformers engine: most draft tokens a greedy row has checked per forward "
                                      "pass (the grammar's forced text, prompt lookup; the same answers; 0: off; "
                                      "default 8)", ge=0)
    deterministic: bool = option(
        False, "answers that do not depend on what shares their batch. vllm: its batch-invariant mode (beta; NVIDIA "
        "GPUs of compute capability 8.0 or higher), or an error before the model loads that says what to use "
        "instead where the installed vLLM or the GPU has none (the CPU build); transformers: accepted, changes "
        "nothing (its answers are so always); llama-cpp: one slot without the prefix cache, each ask decoded alone")

    @field_validator("dtype")
    @classmethod
    def _known_dtype(cls, value: str) -> str:
        return _dtype(cls.engine, value, DTYPES)

    def recorded(self) -> dict[str, Any]:
        """Only what differs from the engine's defaults (a run with none records ``{}``, as before options)."""
        return {k: v for k, v in self.model_dump(exclude_defaults=True).items()
                if k in ("dtype", "stop_repeats", "drafts")}


class VLLMOptions(EngineOptions):
    """How the vLLM engine loads and runs the judge (``VLLMEngine``'s arguments)."""

    engine: ClassVar[str] = "vllm"
    engine_class: ClassVar[str] = "localeval.engine.vllm_engine:VLLMEngine"

    trust_remote_code: bool = option(False, "allow the model folder's own code")
    tensor_parallel_size: int = option(1, "vllm: GPUs per engine, for a judge too big for one", ge=1)
    gpu_memory_utilization: float = option(0.9, "vllm: share of GPU memory vLLM may take", gt=0, le=1)
    max_model_len: int | None = option(None, "vllm: context window (default: the model's); server: a cap on the "
                                             "server's window (Ollama: the num_ctx sent, default the model's num_ctx "
                                             "or 4096); llama-cpp: each slot's window (default: the GGUF's, at most "
                                             "8192)", ge=1)
    dtype: str = option("auto", "weights dtype (auto: the model's)")
    quantization: str | None = option(None, "vllm: awq, gptq, fp8, ... (default: from the model folder)")
    enforce_eager: bool | None = option(None, "vllm: run the model eagerly, or compile it (CUDA graphs); default: "
                                              "eager on a CPU build, compiled on a GPU",
                                        flag="--enforce-eager/--compile")
    seed: int = option(0, "the run's seed, for sampled asks", flag="")
    deterministic: bool = option(False, "vllm: its batch-invariant mode")
    progress: bool = option(True, "vLLM's own loading and speed bars", flag="")

    @field_validator("dtype")
    @classmethod
    def _known_dtype(cls, value: str) -> str:
        return _dtype(cls.engine, value, VLLM_DTYPES)

    def recorded(self) -> dict[str, Any]:
        """Those given; ``deterministic`` only when on (off, the record says nothing of it)."""
        given = super().recorded()
        return {k: v for k, v in given.items() if k != "deterministic" or v}


class RayOptions(VLLMOptions):
    """vLLM replicas on a Ray cluster: vLLM's options, and how many replicas where."""

    engine: ClassVar[str] = "ray-vllm"
    engine_class: ClassVar[str] = "localeval.engine.ray_engine:RayEngine"
    NOT_PASSED: ClassVar[tuple[str, ...]] = ("replicas", "ray_address")

    replicas: int = option(1, "ray-vllm: engine replicas (one per GPU if the judge fits)", ge=1)
    ray_address: str | None = option(None, "ray-vllm: cluster address (default: local, or a new one)")


class ServerOptions(EngineOptions):
    """The judge a server runs (``ServerEngine``'s arguments); no model folder."""

    engine: ClassVar[str] = "server"
    engine_class: ClassVar[str] = "localeval.engine.server.engine:ServerEngine"

    urls: list[str] = option([], "server: the judge server's OpenAI base URL, e.g. http://gpu-box:8000/v1; give it "
                                 "once per server (each serving the same model) to share the rounds",
                             alias="server_url")
    kind: Literal["auto", "vllm", "vllm-legacy", "sglang", "llamacpp", "ollama", "openai"] = option(
        "auto", "server: how it takes a JSON schema (auto: read from the server; vllm-legacy: guided_json)",
        alias="server_kind")
    model: str | None = option(None, "server: the served model's id (default: the only one it lists)",
                               alias="server_model")
    api_key_env: str | None = option(None, "server: the environment variable holding its API key (default: "
                                           "LOCALEVAL_SERVER_API_KEY, when set)", alias="server_api_key_env")
    api_key_file: str | None = option(None, "server: a file whose first line is its API key",
                                      alias="server_api_key_file")
    ca_file: str | None = option(None, "server: a CA bundle to verify its TLS certificate (an internal CA)",
                                 alias="server_ca_file")
    concurrency: int | None = option(None, "server: most asks in flight on each server (default: vllm and sglang "
                                           "128, llamacpp 2 a slot, ollama 4, openai 16)",
                                     alias="server_concurrency", ge=1)
    timeout: float = option(600.0, "server: seconds one request may take before it is tried again",
                            alias="server_timeout", gt=0)
    retries: int = option(5, "server: most retries, with backoff, of a request after a dropped connection, a 429 "
                             "or a 5xx", alias="server_retries", ge=0)
    max_model_len: int | None = option(None, "server: a cap on the server's window", ge=1)

    @field_validator("urls", mode="before")
    @classmethod
    def _web_urls(cls, value: Any) -> Any:
        """Every URL is http:// or https:// (the one place this is checked)."""
        urls = [value] if isinstance(value, str) else value
        try:
            return [web_url(u) for u in urls or []]
        except OptionError as error:
            raise ValueError(str(error)) from None


class LlamaCppOptions(EngineOptions):
    """A GGUF judge run by a llama-server that localeval starts and stops (``LlamaCppEngine``'s arguments)."""

    engine: ClassVar[str] = "llama-cpp"
    engine_class: ClassVar[str] = "localeval.engine.llamacpp.engine:LlamaCppEngine"

    llama_server: str | None = option(None, "llama-cpp: the llama-server binary (default: $LOCALEVAL_LLAMA_SERVER, "
                                            "the one `localeval models prepare llama-server` built, or PATH's)")
    threads: int | None = option(None, "CPU threads (default: all cores)", ge=1)
    parallel: int = option(4, "llama-cpp: llama-server's slots, asks decoded together", ge=1)
    max_model_len: int | None = option(None, "llama-cpp: each slot's window (default: the GGUF's, at most 8192)",
                                       ge=1)
    deterministic: bool = option(False, "llama-cpp: one slot, no prefix cache: each ask decoded alone")

    def recorded(self) -> dict[str, Any]:
        """Those given, bar where the binary is (the build is in the judge's fingerprint)."""
        return {k: v for k, v in super().recorded().items() if k != "llama_server"}

    def arguments(self) -> dict[str, Any]:
        """The recorded options, and the binary where one was named."""
        return {**super().arguments(), **({"llama_server": self.llama_server} if self.llama_server else {})}


ENGINE_OPTIONS: dict[str, type[EngineOptions]] = {
    model.engine: model for model in (TransformersOptions, VLLMOptions, RayOptions, ServerOptions, LlamaCppOptions)}


def options_model(engine: str) -> type[EngineOptions]:
    """The options model of the engine named ``engine`` (an OptionError for an unknown one)."""
    if engine not in ENGINE_OPTIONS:
        raise OptionError(f"unknown engine {engine!r}; available: {', '.join(ENGINE_OPTIONS)}")
    return ENGINE_OPTIONS[engine]


def engine_fields() -> dict[str, tuple[str, FieldInfo]]:
    """Every engine option the CLI offers, once, by keyword: its flag and its field (the first engine's to declare
    it: its help and default); a field whose flag is "" has none (the run's seed)."""
    found: dict[str, tuple[str, FieldInfo]] = {}
    for model in ENGINE_OPTIONS.values():
        for keyword, name in model.keywords().items():
            field = model.model_fields[name]
            flag = (field.json_schema_extra or {}).get("flag", "--" + keyword.replace("_", "-"))  # type: ignore[union-attr]
            if flag and keyword not in found:
                found[keyword] = (str(flag), field)
    return found


__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_BATCH_TOKENS",
    "DTYPES",
    "ENGINE_OPTIONS",
    "RECORD_FIELDS",
    "VLLM_DTYPES",
    "EngineOptions",
    "LlamaCppOptions",
    "RayOptions",
    "ServerOptions",
    "TransformersOptions",
    "VLLMOptions",
    "engine_fields",
    "options_model",
]
