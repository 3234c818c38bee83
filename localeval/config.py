"""One run's configuration: everything that decides its answers and scores, saved whole in summary.json."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from localeval.engine.options import (
    RECORD_FIELDS,
    EngineOptions,
    options_model,
)
from localeval.errors import LocalevalError, OptionError
from localeval.prompts.base import Settings

ON_MISSING = ("error", "nan")


@dataclass(frozen=True, init=False)
class JudgeOptions:
    """How to load the judge when it is given as a folder: the engine's name and its typed options.

    ``JudgeOptions(engine, **options)`` takes the engine's options by keyword (``extra``: more of them, as a
    summary.json record holds them); an unknown option or a bad value is an OptionError.
    """

    engine: str  # transformers | vllm | ray-vllm | server; scripted engines are passed as objects
    options: EngineOptions

    def __init__(self, engine: str = "transformers", options: EngineOptions | None = None, *,
                 extra: Mapping[str, Any] | None = None, **named: Any) -> None:
        model = options_model(engine)
        if options is None:
            options = model.from_keywords({**named, **(extra or {})})
        elif not isinstance(options, model) or named or extra:
            raise OptionError(f"the {engine} engine's options are {model.__name__}, given alone")
        object.__setattr__(self, "engine", engine)
        object.__setattr__(self, "options", options)

    @classmethod
    def server(cls, *urls: str, **options: Any) -> JudgeOptions:
        """The judge a server runs at ``urls`` (each its OpenAI base, ``http://gpu-box:8000/v1``); ``options``: the
        server engine's (``kind``, ``model``, ``api_key_env``, ``concurrency``, ...; ``ServerOptions``)."""
        return cls("server", urls=list(urls), **options)

    @property
    def extra(self) -> dict[str, Any]:
        """The options summary.json's engine record keeps under "extra" (``EngineOptions.recorded``)."""
        return self.options.recorded()

    def with_options(self, **named: Any) -> JudgeOptions:
        """These options with ``named`` (keywords of this engine) given too, checked again."""
        return JudgeOptions(self.engine, type(self.options).from_keywords(
            {**self.options.model_dump(exclude_unset=True), **named}))

    def to_record(self) -> dict[str, Any]:
        """The engine record of summary.json: the engine, ``RECORD_FIELDS`` (an engine without one: its default
        there) and "extra"."""
        fields = type(self.options).model_fields
        held = {k: getattr(self.options, k) if k in fields else v for k, v in RECORD_FIELDS.items()}
        return {"engine": self.engine, **held, "extra": self.options.recorded()}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> JudgeOptions:
        """The options :meth:`to_record` wrote (a record field the engine does not take is passed over)."""
        engine = record.get("engine", "transformers")
        fields = options_model(engine).model_fields
        held = {k: v for k, v in record.items() if k in RECORD_FIELDS and k in fields}
        return cls(engine, extra={**held, **record.get("extra", {})})


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
    chunk_size: int | None = None  # samples a chunk holds (None: the engine's default, Abilities.chunk_samples)

    def __post_init__(self) -> None:
        if self.on_missing not in ON_MISSING:
            raise ValueError("on_missing must be 'error' or 'nan'")
        if self.chunk_size is not None and self.chunk_size < 1:
            raise ValueError(f"chunk_size must be at least 1, got {self.chunk_size}")

    def with_models(self, judge: Any, embedder: Any) -> RunConfig:
        """This configuration with the fingerprints of the loaded judge and embedder (None: not used)."""
        return replace(self, judge_fingerprint=getattr(judge, "fingerprint", None) if judge is not None else None,
                       embedder_fingerprint=getattr(embedder, "fingerprint", None) if embedder is not None else None)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict that :meth:`from_dict` reads back into an equal configuration."""
        data = asdict(self)
        data["metrics"] = list(self.metrics)
        data["engine"] = self.engine.to_record()
        data["settings"] = self.settings.recorded()  # a later setting at its default is left out
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunConfig:
        """The configuration :meth:`to_dict` wrote."""
        try:
            return cls(
                **{**data, "metrics": tuple(data.get("metrics", ())),
                   "settings": Settings(**data.get("settings", {})),
                   "engine": JudgeOptions.from_record(data.get("engine", {}))},
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
    """``options`` (None: the defaults) with the engine options the API's keyword arguments give (``threads=1``;
    ``engine="vllm"`` picks another engine), checked against that engine's typed options (``engine.options``)."""
    named = dict(given)
    engine = named.pop("engine", None)
    if options is None:
        return JudgeOptions(engine or "transformers", **named)
    if engine is not None and engine != options.engine:
        raise OptionError(f"engine={engine!r} and judge_options for the {options.engine} engine: give one of them")
    return options.with_options(**named) if named else options


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
