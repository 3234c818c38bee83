"""The options several commands share (judge, engine, progress, cache), declared once, and the Shared values a
command receives (``cli.command`` builds the commands)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Annotated, Any, Literal

import typer

from localeval.config import JudgeOptions, OptionError, RunConfig, build_config
from localeval.engine.options import ENGINE_OPTIONS, engine_fields, options_model
from localeval.errors import LocalevalError


@dataclass(frozen=True)
class Shared:
    """The shared options' values, as one command received them (a group it lacks keeps its defaults); the engine
    options (``ENGINE``, from ``engine.options``) by keyword in ``engine_flags``."""

    judge: str | None = None
    embedder: str | None = None
    no_reasons: bool = False
    max_examples: int | None = None
    votes: int = 1
    temperature: float = 0.7
    soft: bool = False
    judge_every_copy: bool = False
    judge_mode: str = "ragas"
    engine: str = "transformers"
    no_progress: bool = False
    cache: str | None = None
    no_cache: bool = False
    engine_flags: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, **values: Any) -> Shared:
        """The values a command received, the engine options among them set apart."""
        own = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in own},
                   engine_flags={k: v for k, v in values.items() if k not in own})

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
        """How the judge is loaded and run: the chosen engine's options, each flag it does not take left at its
        default (else a usage error), checked by the engine's options model."""
        flags = {**FLAG_DEFAULTS, **self.engine_flags}
        if flags["server_url"] and self.engine != "server":
            raise OptionError("--server-url takes --engine server")
        model = options_model(self.engine)
        takes = model.keywords()
        foreign = [k for k in FLAG_DEFAULTS if k not in takes and flags[k] != FLAG_DEFAULTS[k]]
        if self.engine == "server":
            if not flags["server_url"]:
                raise OptionError("--engine server needs --server-url http://HOST:PORT/v1, the judge server's OpenAI "
                                  "base URL (once per server)")
            wrong = ["--judge"] * bool(self.judge) + [flag_of(k) for k in foreign]
            if wrong:
                raise OptionError(f"{', '.join(wrong)} cannot work with a judge server: it serves its own model "
                                  "(name it with --server-model) and batches asks as it likes (to compare runs, "
                                  "give them one --cache)")
        elif foreign:
            owners = [e for e, m in ENGINE_OPTIONS.items() if foreign[0] in m.keywords()]
            raise OptionError(f"{flag_of(foreign[0])} works on the {' and '.join(owners)} engine"
                              f"{'s' * (len(owners) > 1)} only")
        given = {k: flags[k] for k in takes if k in flags}
        if "batch_tokens" in given:
            given["batch_tokens"] = given["batch_tokens"] or None  # 0: no budget
        if "seed" in takes:
            given["seed"] = seed
        return JudgeOptions(self.engine, **given)

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
ENGINE_FIELDS = engine_fields()  # keyword: (flag, field) of every engine option the CLI offers, each once
FLAG_DEFAULTS = {keyword: field.default for keyword, (_, field) in ENGINE_FIELDS.items()}
ENGINE = (
    ("engine", Annotated[Literal[tuple(ENGINE_OPTIONS)], typer.Option(
        "--engine", help="judge engine: transformers (CPU/GPU), vllm (GPU), ray-vllm (vLLM replicas on Ray), "
                         "server (a judge server you run: --server-url), llama-cpp (a GGUF judge on a llama-server "
                         "localeval runs)")]),
    *((keyword, Annotated[field.annotation, typer.Option(*flag.split(), help=field.description,
                                                         metavar=METAVARS.get(keyword))])
      for keyword, (flag, field) in ENGINE_FIELDS.items()),
)


def flag_of(keyword: str) -> str:
    """The CLI flag of the engine option ``keyword`` (``--batch-size``)."""
    return ENGINE_FIELDS[keyword][0].split("/")[0]


PROGRESS = options(("no_progress", bool, "no progress, loading bars or warnings"))
CACHE_FILE = options(("cache", str | None, "a judge cache file shared between runs"))
NO_CACHE = options(("no_cache", bool, "neither read nor write a judge cache"))
DEFAULTS = {**{f.name: f.default for f in fields(Shared)}, **FLAG_DEFAULTS}
