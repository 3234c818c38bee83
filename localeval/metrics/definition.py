"""What a metric is (``MetricDef``) and a metric chosen for a run (``MetricSpec``): the types every part of
``metrics/`` shares, in a module that imports none of them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from localeval.steps import Steps

TraceKind = Literal["statements", "chunks", "questions", "claims", "noise", "ids", "criterion",
                    "tool_calls", "goal", "topics", "summary", "rubric", "sql"]
Role = Literal["retrieval", "generation"]


@dataclass(frozen=True)
class MetricDef:
    """A metric as the registry knows it: how it runs, and what the reports read about it.

    ``trace``: the shape of its verdict trace (the trace view and the sample view show it by that);
    ``trace_words``: for a statements trace, the table's title and the words for a yes and a no;
    ``verdicts_key``: the trace's list of per-item verdicts (agreement with verdict-level labels);
    ``role``: what the diagnosis reads it as (None: left out of the diagnosis);
    ``modes``: the steps that stand in for ``steps`` under another judge mode (``Settings.judge_mode``), and
    ``mode_embedder``: whether those use the embedder.
    """

    steps: Callable[..., Steps]
    required: tuple[str, ...]  # sample fields that must be present
    nonempty: tuple[str, ...] = ()  # list fields that must not be empty
    options: dict[str, Any] = field(default_factory=dict)  # name -> default
    choices: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    judge: bool = True
    embedder: bool = False
    summary: str = ""
    trace: TraceKind | None = None
    trace_words: tuple[str, str, str] = ("", "", "")
    verdicts_key: str = "verdicts"
    higher_is_better: bool = True
    role: Role | None = None
    modes: dict[str, Callable[..., Steps]] = field(default_factory=dict)
    mode_embedder: bool = False


@dataclass(frozen=True)
class MetricSpec:
    """A metric chosen for a run: its definition and the option values in force."""

    name: str  # the column name: the metric's name, plus any option that differs from its default
    base: str
    definition: MetricDef
    options: dict[str, Any]

    def canonical(self) -> str:
        """A string ``parse_metric`` turns back into this spec (options that differ from defaults)."""
        changed = [f"{k}={v}" for k, v in self.options.items() if v != self.definition.options[k]]
        return ":".join([self.base, *changed])

    def steps(self, sample: Any, trace: dict, mode: str = "ragas") -> Steps:
        """Start this metric's generator for one sample, under judge mode ``mode`` (``Settings.judge_mode``): its
        own steps for that mode where it has them, else the default mode's."""
        return self.definition.modes.get(mode, self.definition.steps)(sample, trace, **self.options)

    def uses_embedder(self, mode: str = "ragas") -> bool:
        """Whether this metric asks the embedder under judge mode ``mode``."""
        return self.definition.embedder or (self.definition.mode_embedder and mode in self.definition.modes)


def needs(specs: Sequence[MetricSpec]) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """The fields each metric requires, and the list fields it needs non-empty (as ``data.validate`` takes them)."""
    return {s.name: s.definition.required for s in specs}, {s.name: s.definition.nonempty for s in specs}
