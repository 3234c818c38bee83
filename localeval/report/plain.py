"""Rich tables rendered to plain text: no colour or escape codes, no trailing blanks, a fixed width."""

from __future__ import annotations

import io
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType
    from rich.measure import Measurement
    from rich.table import Table

# Wider than any table this project prints: a table is measured at this width to see what it needs.
_UNBOUNDED = 10_000


@dataclass(frozen=True)
class KeptTogether:
    """Text wrapped only at ordinary spaces (a no-break space joins its words), continuation lines indented."""

    text: str
    indent: str = " "
    min_width: int = 0

    def _lines(self, width: int) -> list[str]:
        lines = textwrap.wrap(self.text, width, subsequent_indent=self.indent, break_long_words=False,
                              break_on_hyphens=False) or [""]
        return [line.replace("\u00a0", " ") for line in lines]

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        from rich.measure import Measurement

        first, *rest = self.text.split(" ")
        longest = max([len(first), *(len(self.indent) + len(word) for word in rest)])
        full = len(self.text)
        return Measurement(min(full, max(self.min_width, longest)), full)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[str]:
        yield "\n".join(self._lines(options.max_width))


def plain_table(header: Sequence[str], rows: Sequence[Sequence[str | KeptTogether]], *,
                right: Sequence[int] = ()) -> Table:
    """A table with a dashed rule under its header; `right` columns align right; only KeptTogether cells wrap."""
    from rich import box
    from rich.table import Table

    rule = box.Box("    \n    \n -- \n    \n    \n    \n    \n    \n", ascii=True)
    table = Table(box=rule, show_edge=False, pad_edge=False, collapse_padding=True)
    for i, name in enumerate(header):
        cells = [row[i] for row in rows]
        wraps = any(isinstance(cell, KeptTogether) for cell in cells)
        # A cell that may not wrap is never cut either: its column is as wide as its longest line.
        widest = max(len(line) for cell in [name, *cells] if isinstance(cell, str) for line in cell.split("\n"))
        table.add_column(name, justify="right" if i in right else "left", no_wrap=not wraps,
                         min_width=None if wraps else widest)
    for row in rows:
        table.add_row(*row)
    return table


def _console(width: int | None) -> Console:
    from rich.console import Console

    return Console(file=io.StringIO(), width=width, color_system=None, force_terminal=False,
                   force_jupyter=False, force_interactive=False, legacy_windows=False, highlight=False,
                   markup=False, emoji=False)


def plain_text(*items: RenderableType, width: int | None = None) -> str:
    """The items printed one under another as plain text, `width` columns wide (None: $COLUMNS or 80).

    A table whose unwrappable cells need more than `width` is printed as wide as they need, not cut.
    """
    needed = max([_console(_UNBOUNDED).measure(item).minimum for item in items if not isinstance(item, str)],
                 default=0)
    console = _console(width)
    console = _console(max(console.width, needed))
    with console.capture() as captured:
        for item in items:
            console.print(item)
    return "\n".join(line.rstrip() for line in captured.get().splitlines())
