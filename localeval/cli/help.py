"""How ``localeval``'s help pages are laid out: click's layout, with lines broken at spaces only.

click wraps help text with ``textwrap``'s defaults, which cut a word longer than the column
(``faithfulness,factual_correctness:mode=p`` / ``recision``) and break after a hyphen (``--server-`` /
``url``), so a flag or an example read off the page is wrong. Here a line breaks only between words; a
word longer than the column stays whole and runs past it. Every command and group takes ``-h`` as well
as ``--help`` (``HELP_OPTIONS``, set on the top command and inherited by the others).
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

HELP_OPTIONS = ["-h", "--help"]
# The formatter of the click typer runs on (its own copy in recent typer versions, the click package before).
_ClickFormatter: Any = typer.Context.formatter_class


def fill(text: str, width: int, first: str = "", rest: str = "") -> str:
    """``text``'s paragraphs (split at blank lines), each wrapped to ``width`` at spaces only."""
    wrapper = textwrap.TextWrapper(max(width, 10), initial_indent=first, subsequent_indent=rest,
                                   break_long_words=False, break_on_hyphens=False)
    paragraphs = [p.strip() for p in text.split("\n\n") if p.strip()]
    out = [wrapper.fill(paragraphs[0])] if paragraphs else []
    wrapper.initial_indent = rest
    out += [wrapper.fill(p) for p in paragraphs[1:]]
    return "\n\n".join(out)


class Formatter(_ClickFormatter):
    """click's help formatter, wrapping at spaces only."""

    def write_text(self, text: str) -> None:
        indent = " " * self.current_indent
        self.write(fill(text, self.width, indent, indent) + "\n")

    def write_dl(self, rows: Iterable[tuple[str, str]], col_max: int = 30, col_spacing: int = 2) -> None:
        """Terms and their help in two columns, laid out as click lays them out."""
        rows = list(rows)
        first_col = min(max((len(first) for first, _ in rows), default=0), col_max) + col_spacing
        for first, second in rows:
            self.write(f"{'':>{self.current_indent}}{first}")
            if not second:
                self.write("\n")
                continue
            if len(first) <= first_col - col_spacing:
                self.write(" " * (first_col - len(first)))
            else:
                self.write("\n" + " " * (first_col + self.current_indent))
            lines = fill(second, self.width - first_col - 2).splitlines() or [""]
            self.write(lines[0] + "\n")
            for line in lines[1:]:
                self.write(f"{'':>{first_col + self.current_indent}}{line}\n" if line else "\n")


class Context(typer.Context):
    """A command's context, whose help pages wrap at spaces only."""

    formatter_class = Formatter


class HelpCommand(TyperCommand):
    """A ``localeval`` command whose help wraps at spaces only."""

    context_class = Context


class HelpGroup(TyperGroup):
    """A ``localeval`` group (the top command, ``models``) whose help wraps at spaces only."""

    context_class = Context
