"""One run's configuration: everything that decides its answers and scores, saved whole in summary.json."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from localeval.engine.options import DEFAULT_BATCH_SIZE, DEFAULT_BATCH_TOKENS, TransformersOptions
from localeval.errors import LocalevalError
from localeval.prompts.base import Settings

if TYPE_CHECKING:
    from localeval.scheduler import Scheduler
    from localeval.store.cache import AnswerStore

ON_MISSING = ("error", "nan")
# Samples a chunk holds, by engine (docs/bulk-runs.md). Enough asks for full batches and long rounds, few
# enough that the scheduler's state (about 24 KB a sample) stays small: vLLM wants thousands of asks in
# flight, the transformers engine batches 16 rows, and in-process engines (scripted) only pay per chunk.
CHUNK_SIZES = {"transformers": 512, "vllm": 4096, "ray-vllm": 4096, "server": 4096, "other": 4096}
# The weight dtypes a judge folder loads in, by name; vLLM also takes its own spellings of two of them.
DTYPES = ("auto", "float32", "bfloat16", "float16")
VLLM_DTYPES = (*DTYPES, "half", "float")


class OptionError(LocalevalError):
    """An option or argument whose value cannot work, found before any model loads (the CLI exits 2)."""

    exit_code = 2


@dataclass(frozen=True)
class JudgeOptions:
    """How to load the judge when it is given as a folder."""

    engine: str = "transformers"  # transformers | vllm | ray-vllm | server; scripted engines are passed as objects
    grammar: str = "xgrammar"
    batch_size: int = DEFAULT_BATCH_SIZE
    batch_tokens: int | None = DEFAULT_BATCH_TOKENS  # None: rows only
    threads: int | None = None
    trust_remote_code: bool = False
    replicas: int = 1  # ray-vllm: engine replicas
    ray_address: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # passed to the engine's constructor

    def __post_init__(self) -> None:
        dtype = self.extra.get("dtype")
        known = DTYPES if self.engine == "transformers" else VLLM_DTYPES
        if isinstance(dtype, str) and self.engine != "server" and dtype not in known:
            raise OptionError(f"--dtype {dtype}: the {self.engine} engine loads weights as "
                              f"{', '.join(known[:-1])} or {known[-1]}; give one of those (auto: the engine chooses)")

    @classmethod
    def server(cls, *urls: str, **options: Any) -> JudgeOptions:
        """The judge a server runs at ``urls`` (each its OpenAI base, ``http://gpu-box:8000/v1``); ``options``: the
        server engine's (``kind``, ``model``, ``api_key_env``, ``concurrency``, ...; ``ServerEngine``)."""
        return cls(engine="server", extra={"urls": list(urls), **options})

    @property
    def deterministic(self) -> bool:
        """Whether answers must not depend on what shares their batch (``--deterministic``; vLLM: its
        batch-invariant mode, or an error where there is none; the transformers engine is so always)."""
        return bool(self.extra.get("deterministic", False))


@dataclass(frozen=True)
class RunConfig:
    """What decides a run's answers and scores: metrics, judge settings, seed, policies, engine, models."""

    metrics: tuple[str, ...] = ()  # canonical metric specs, e.g. "factual_correctness:mode=precision"
    settings: Settings = field(default_factory=Settings)
    seed: int = 0
    long_context: str = "skip"  # skip | error | truncate
    on_missing: str = "error"  # error | nan
    engine: JudgeOptions = field(default_factory=JudgeOptions)
    judge: str | None = None  # the judge folder as given (None: the bundled default, or an engine object)
    embedder: str | None = None  # the embedder folder as given
    judge_fingerprint: str | None = None  # who answered, known once the judge is loaded
    embedder_fingerprint: str | None = None
    chunk_size: int | None = None  # samples a chunk holds (None: the engine's default, CHUNK_SIZES)

    def __post_init__(self) -> None:
        if self.on_missing not in ON_MISSING:
            raise ValueError("on_missing must be 'error' or 'nan'")
        if self.chunk_size is not None and self.chunk_size < 1:
            raise ValueError(f"chunk_size must be at least 1, got {self.chunk_size}")

    def chunk_samples(self, engine: Any = None) -> int:
        """Samples a chunk holds: as set, else the default of the engine object given or the one configured."""
        if self.chunk_size is not None:
            return self.chunk_size
        if engine is None:
            return CHUNK_SIZES.get(self.engine.engine, CHUNK_SIZES["other"])
        kind = {"TransformersEngine": "transformers", "VLLMEngine": "vllm", "RayEngine": "ray-vllm",
                "ServerEngine": "server"}
        return CHUNK_SIZES[kind.get(type(engine).__name__, "other")]

    def with_models(self, judge: Any, embedder: Any) -> RunConfig:
        """This configuration with the fingerprints of the loaded judge and embedder (None: not used)."""
        return replace(self, judge_fingerprint=getattr(judge, "fingerprint", None) if judge is not None else None,
                       embedder_fingerprint=getattr(embedder, "fingerprint", None) if embedder is not None else None)

    def scheduler(self, engine: Any, embedder: Any, cache: AnswerStore | None, progress: bool) -> Scheduler:
        """A scheduler that asks the judge as this configuration says."""
        from localeval.scheduler import Scheduler

        return Scheduler(engine, embedder, cache, self.settings, seed=self.seed, progress=progress,
                         long_context=self.long_context)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict that :meth:`from_dict` reads back into an equal configuration."""
        data = asdict(self)
        data["metrics"] = list(self.metrics)
        data["settings"] = self.settings.recorded()  # a later setting at its default is left out
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunConfig:
        """The configuration :meth:`to_dict` wrote."""
        try:
            return cls(
                **{**data, "metrics": tuple(data.get("metrics", ())),
                   "settings": Settings(**data.get("settings", {})),
                   "engine": JudgeOptions(**data.get("engine", {}))},
            )
        except (TypeError, ValueError) as error:
            raise LocalevalError(f"summary.json: the run's config cannot be read ({error}); "
                                 "it was written by another localeval version, rerun evaluate") from None

    @classmethod
    def from_run_record(cls, info: Mapping[str, Any]) -> RunConfig:
        """The configuration of a run from summary.json's "run" record."""
        if "config" not in info:
            raise LocalevalError("summary.json: the run record holds no config; it was written by another localeval "
                                 "version, rerun evaluate")
        return cls.from_dict(info["config"])


def with_engine_options(options: JudgeOptions | None, given: Mapping[str, Any]) -> JudgeOptions:
    """``options`` (None: the defaults) with the engine options the API's keyword arguments give (``threads=1``),
    checked against the transformers engine's typed options (``engine.options.TransformersOptions``)."""
    base = options or JudgeOptions()
    if not given:
        return base
    if base.engine != "transformers":
        raise OptionError(f"{', '.join(given)}: keyword engine options are the transformers engine's; give the "
                          f"{base.engine} engine's in judge_options=JudgeOptions(engine={base.engine!r}, ...)")
    held = {"grammar": base.grammar, "batch_size": base.batch_size, "batch_tokens": base.batch_tokens,
            "threads": base.threads, "trust_remote_code": base.trust_remote_code,
            **{k: v for k, v in base.extra.items() if k in ("dtype", "stop_repeats", "drafts")}}
    try:
        typed = TransformersOptions.from_keywords({**held, **given})
    except LocalevalError as error:
        raise OptionError(str(error)) from None
    other = {k: v for k, v in base.extra.items() if k not in ("dtype", "stop_repeats", "drafts")}
    return replace(base, grammar=typed.grammar, batch_size=typed.batch_size, batch_tokens=typed.batch_tokens,
                   threads=typed.threads, trust_remote_code=typed.trust_remote_code, extra={**other, **typed.extra()})


def model_name(model: str | Path | Any) -> str | None:
    """A model folder as text for the config (None for the default or an object passed in)."""
    return str(model) if isinstance(model, str | Path) else None


def model_object(model: Any) -> Any:
    """An engine or embedder object passed in (None for a folder or the default)."""
    return model if model is not None and not isinstance(model, str | Path) else None


def build_config(
    metrics: str | Sequence[str] | None = None,
    judge: str | Path | Any = None,
    embedder: str | Path | Any = None,
    *,
    settings: Settings | None = None,
    seed: int = 0,
    long_context: str = "skip",
    on_missing: str = "error",
    judge_options: JudgeOptions | None = None,
    chunk_size: int | None = None,
) -> RunConfig:
    """The run configuration of the API's keyword arguments (metrics parsed and written canonically)."""
    from localeval.metrics.registry import parse_metrics

    specs = parse_metrics(metrics)
    return RunConfig(
        metrics=tuple(s.canonical() for s in specs), settings=settings or Settings(), seed=seed,
        long_context=long_context, on_missing=on_missing, engine=judge_options or JudgeOptions(),
        judge=model_name(judge), embedder=model_name(embedder), chunk_size=chunk_size,
    )
