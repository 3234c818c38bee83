"""``localeval metrics``: every metric, the fields it needs, its options in words, and the aliases."""

from __future__ import annotations

import sys
from typing import IO, TYPE_CHECKING

from localeval.data.sample import LIST_FIELDS, OLD_NAMES
from localeval.metrics.definition import MetricDef
from localeval.metrics.options import option_words
from localeval.metrics.registry import ALIASES, DEFAULT_METRICS, METRICS
from localeval.report.plain import plain_text

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.table import Table


def _models(d: MetricDef) -> str:
    used = [name for name, uses in (("judge", d.judge), ("embedder", d.embedder)) if uses]
    modes = [mode for mode in d.modes if d.mode_embedder and not d.embedder]
    also = f"; + embedder with --judge-mode {', '.join(modes)}" if modes else ""
    return (" + ".join(used) if used else "no model") + also


# A field by the column it is read from, where the two differ.
COLUMNS = {"conversation": "user_input (conversation)"}


def _needs(d: MetricDef) -> str:
    """The fields, one a line; a list field the metric scores even when empty says so."""
    return "\n".join(COLUMNS.get(f, f) + ("\n  (may be empty)" if f in LIST_FIELDS and f not in d.nonempty else "")
                     for f in d.required)


def metric_rows() -> list[tuple[str, str, str, str]]:
    """Per metric: name (starred when a default), what it scores with which models, needed fields, options."""
    rows = []
    for name, d in METRICS.items():
        star = " *" if name in DEFAULT_METRICS else ""
        options = "\n".join(option_words(d, key) for key in d.options) or "-"
        rows.append((name + star, f"{d.summary} ({_models(d)})", _needs(d), options))
    rows.append(CRITERIA_ROW)
    return rows


# A criterion of your own (localeval/metrics/criteria.py): its fields and scale come from its file.
CRITERIA_ROW = ("FILE.toml:NAME", "a criterion you define in a TOML (or .py) file: a 0/1 verdict or a 1-to-N "
                "rating; FILE.toml alone scores all its criteria (judge)", "the fields it names",
                "strictness: 1 or more (default the file's, else 1)")


def alias_rows() -> list[tuple[str, str]]:
    """Per alias: its name and the metric with options it stands for, as ``--metrics`` takes it."""
    return [(alias, ":".join([base, *(f"{k}={v}" for k, v in preset.items())]))
            for alias, (base, preset) in ALIASES.items()]


def notes() -> list[str]:
    """The lines under the metrics table."""
    nonempty = [f for f in LIST_FIELDS if any(f in d.nonempty for d in METRICS.values())]
    return [
        f"* a default metric: leaving --metrics out scores these {len(DEFAULT_METRICS)}.",
        f"A list field a metric needs must hold at least one item ({', '.join(nonempty)}), "
        "unless marked 'may be empty'.",
        "Options: name:option=value (ndcg:k=5), several with more colons.",
        "Old Ragas column names are read too: " + ", ".join(f"{o} -> {n}" for o, n in OLD_NAMES.items()) + ".",
    ]


def _tables() -> tuple[Table, Table]:
    from rich import box
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    # Two columns: a name is never cut (a run's column and a --metrics word) and the longest take half of 80
    # columns, so a metric's options stand under its summary, each wrapped under its own start.
    metrics = Table(box=box.SIMPLE_HEAD, show_lines=True, title="Metrics", title_justify="left")
    rows = metric_rows()
    widest = max(len(name) for name, *_ in rows)
    metrics.add_column("metric: what it scores; options", min_width=max(24, widest))
    metrics.add_column("needs (sample fields)", no_wrap=True)
    for name, summary, needs, options in rows:
        cell = Group(Text.assemble((name, "bold"), "\n", summary), *_options(options))
        metrics.add_row(cell, needs)
    aliases = Table(box=box.SIMPLE_HEAD, title="Aliases", title_justify="left", collapse_padding=True)
    aliases.add_column("alias", no_wrap=True, style="bold")
    aliases.add_column("same as", no_wrap=True)
    for alias, target in alias_rows():
        aliases.add_row(alias, target)
    return metrics, aliases


def _options(options: str) -> list[Table]:
    """The options, one a line, indented, a long one wrapped under its own start."""
    from rich.table import Table

    if options == "-":
        return []
    grid = Table.grid()
    grid.add_column(width=2)
    grid.add_column()
    for line in options.split("\n"):
        grid.add_row("", line)
    return [grid]


def print_metrics(file: IO[str] | None = None) -> None:
    """Print the tables; where ``file`` is not a terminal, plain text: no escape codes, no trailing blanks."""
    from rich.console import Console

    out = file or sys.stdout
    metrics, aliases = _tables()
    items: list[RenderableType] = [metrics, *notes(), "", aliases]
    console = Console(file=out, highlight=False, markup=False, emoji=False)
    if not console.is_terminal:
        out.write(plain_text(*items) + "\n")
        return
    for item in items:
        console.print(item)
