"""How ``localeval``'s help pages are laid out: click's layout, with lines broken at spaces only.

click wraps help text with ``textwrap``'s defaults, which cut a word longer than the column
(``faithfulness,factual_correctness:mode=p`` / ``recision``) and break after a hyphen (``--server-`` /
``url``), so a flag or an example read off the page is wrong. Here a line breaks only between words; a
word longer than the column stays whole and runs past it. Every command and group takes ``-h`` as well
as ``--help`` (``HELP_OPTIONS``, set on the top command and inherited by the others). The command list
shows each command's short help whole (click cuts it at 45 characters), wrapped like the rest.

Parsing is click's with two changes: an option that takes one value and is given twice is a usage error
(click keeps the last one silently; the options that add up are declared as lists), and an unknown option's
suggestions list the options it begins first (``--metric``: ``--metrics`` before ``--deterministic``).
"""

from __future__ import annotations

import difflib
import importlib
import textwrap
from collections.abc import Iterable, Sequence
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

HELP_OPTIONS = ["-h", "--help"]
# The formatter of the click typer runs on (its own copy in recent typer versions, the click package before).
_ClickFormatter: Any = typer.Context.formatter_class
_click_errors: Any = importlib.import_module(_ClickFormatter.__module__.rpartition(".")[0] + ".exceptions")


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


class UnknownOption(_click_errors.NoSuchOption):
    """click's unknown-option error, its suggestions in the order given (click sorts them by name)."""

    def format_message(self) -> str:
        if not self.possibilities:
            return str(self.message)
        return f"{self.message} (did you mean {' or '.join(self.possibilities)}?)"


def suggestions(given: str, options: Sequence[str]) -> list[str]:
    """The options ``given`` may have meant, those it begins first, then the closest by spelling.

    >>> suggestions("--metric", ["--deterministic", "--metrics", "--seed"])
    ['--metrics', '--deterministic']
    """
    begun = [o for o in options if o.startswith(given)]
    close = difflib.get_close_matches(given, list(options), n=3, cutoff=0.6)
    return list(dict.fromkeys([*begun, *close]))[:3]


def repeated(order: Sequence[Any]) -> list[Any]:
    """The options given more than once that take one value each (an option declared as a list adds up)."""
    seen: dict[int, Any] = {}
    twice: dict[int, Any] = {}
    for param in order:
        if getattr(param, "param_type_name", "") != "option" or param.multiple or param.count:
            continue
        (twice if id(param) in seen else seen)[id(param)] = param
    return list(twice.values())


class HelpCommand(TyperCommand):
    """A ``localeval`` command whose help wraps at spaces only, which refuses an option given twice that takes
    one value, and suggests for an unknown option the options it begins first."""

    context_class = Context

    def get_short_help_str(self, limit: int = 45) -> str:
        """The short help whole: the command list wraps it at spaces (click would cut it at ``limit``)."""
        return str(super().get_short_help_str(limit=1 << 16))

    def make_parser(self, ctx: Any) -> Any:
        parser = super().make_parser(ctx)
        parse = parser.parse_args

        def checked(args: list[str]) -> Any:
            try:
                opts, rest, order = parse(args=args)
            except _click_errors.NoSuchOption as error:
                found = suggestions(error.option_name, list(parser._long_opt))
                raise UnknownOption(error.option_name, possibilities=found, ctx=ctx) from None
            twice = repeated(order)
            if twice and not ctx.resilient_parsing:
                names = ", ".join("/".join([*p.opts, *p.secondary_opts]) for p in twice)
                ctx.fail(f"{names} given more than once; only one can count (a repeat would silently replace "
                         "the first): give it once")
            return opts, rest, order

        parser.parse_args = checked  # type: ignore[method-assign]
        return parser


class HelpGroup(TyperGroup):
    """A ``localeval`` group (the top command, ``models``) whose help wraps at spaces only."""

    context_class = Context
