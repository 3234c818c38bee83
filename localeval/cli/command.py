"""How a ``localeval`` command is built: its own options and the shared groups, and what its errors exit with.

Exit codes: 0 done; 1 a problem with the data, the models or the run, or a gate that failed; 2 a usage error
(click's own for an unknown option or a bad choice, with the usage line; a LocalevalError whose ``exit_code``
is 2 for a value that cannot work); 130 interrupted (Ctrl-C), with how to resume when something was kept.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import shlex
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import typer

from localeval.cli.help import HelpCommand
from localeval.cli.shared import DEFAULTS, Option, Shared
from localeval.config import OptionError
from localeval.errors import LocalevalError
from localeval.silence import quiet

INTERRUPTED = 130
CONTEXT = "cli_context"  # the parameter typer fills with the command's context


class Interrupted(KeyboardInterrupt):
    """Ctrl-C in a command that keeps the judge's answers as they come: ``kept``, the cache file (None: none)."""

    def __init__(self, kept: str | Path | None) -> None:
        super().__init__()
        self.kept = kept


@contextlib.contextmanager
def resumable(kept: str | Path | None) -> Iterator[None]:
    """An interrupt inside carries where the judge's answers so far are kept, for the message that says how to
    resume."""
    try:
        yield
    except KeyboardInterrupt:
        raise Interrupted(kept) from None


@contextlib.contextmanager
def usage_errors() -> Iterator[None]:
    """A LocalevalError inside says a value given on the command line cannot work: a usage error (exit 2)."""
    try:
        yield
    except OptionError:
        raise
    except LocalevalError as error:
        raise OptionError(str(error)) from None


def command_line(ctx: typer.Context) -> str:
    """The command as it was typed, quoted for a shell (``localeval evaluate data.jsonl --out run``); ``main``
    hands its arguments to the context."""
    root = ctx.find_root().obj
    args = root.get("argv") if isinstance(root, dict) else None
    return shlex.join(["localeval", *(sys.argv[1:] if args is None else args)])


def interrupted_message(stop: KeyboardInterrupt, ctx: typer.Context) -> str:
    """What was kept of an interrupted command, and how to go on from there; a cache file is named only when it
    exists."""
    if not isinstance(stop, Interrupted):
        return "localeval: interrupted"
    if stop.kept is None:
        return ("localeval: interrupted; this run kept no judge cache (--no-cache), so running it again starts "
                "over")
    if not Path(stop.kept).exists():  # stopped before the cache was made (while a model loaded): nothing is kept
        return ("localeval: interrupted before the judge's first answer was kept, so there is nothing to resume; "
                f"to start over, run the same command again:\n  {command_line(ctx)}")
    return (f"localeval: interrupted. The judge's answers so far are kept in {stop.kept}; to resume, run the same "
            "command again:\n"
            f"  {command_line(ctx)}")


def _signature(func: Callable[..., Any], shared: Sequence[Option]) -> inspect.Signature:
    """The command's own parameters (``shared`` left out), then the shared options."""
    own = [p for name, p in inspect.signature(func, eval_str=True).parameters.items() if name != "shared"]
    extra = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=kind, default=DEFAULTS[name])
             for name, kind in shared]
    context = inspect.Parameter(CONTEXT, inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context)
    return inspect.Signature([*own, *extra, context])


def command(app: typer.Typer, name: str, *groups: tuple[Option, ...], help: str, short_help: str | None = None,
            cls: type[HelpCommand] = HelpCommand) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """Register ``func`` as a command with the groups' options; it receives them as ``shared: Shared``.

    The command runs inside ``silence.quiet`` when --no-progress is given; a LocalevalError prints as one
    ``localeval: ...`` line (exit: its ``exit_code``, else 1), an interrupt as what was kept (exit 130).
    """
    options = [option for group in groups for option in group]

    def register(func: Callable[..., int]) -> Callable[..., int]:
        takes_shared = "shared" in inspect.signature(func).parameters

        @functools.wraps(func)
        def run(**given: Any) -> int:
            values = {k: given.pop(k) for k, _ in options}
            ctx = given.pop(CONTEXT)
            try:
                if takes_shared:
                    given["shared"] = Shared.of(**values)
                with quiet(bool(values.get("no_progress", False))):
                    code = func(**given)
            except LocalevalError as error:
                print(f"localeval: {error}", file=sys.stderr)
                code = int(getattr(error, "exit_code", 1))
            except KeyboardInterrupt as stop:
                print(interrupted_message(stop, ctx), file=sys.stderr)
                code = INTERRUPTED
            raise typer.Exit(code)

        signature = _signature(func, options)
        run.__signature__ = signature  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()}
        app.command(name, help=help, short_help=short_help, cls=cls)(run)
        return func

    return register


def rewriting(optional: dict[str, str] | None = None, spread: Sequence[str] = ()) -> type[HelpCommand]:
    """A command class that reads two argparse forms: an option whose value may be left out (``optional``:
    flag -> the value it then takes) and an option followed by several values (``spread``)."""

    class Rewriting(HelpCommand):
        def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
            return super().parse_args(ctx, rewrite_argv(args, optional or {}, spread))

    return Rewriting


def rewrite_argv(args: Sequence[str], optional: dict[str, str], spread: Sequence[str]) -> list[str]:
    """``--pairs --x`` -> ``--pairs VALUE --x``; ``--no-worse a b`` -> ``--no-worse a --no-worse b``."""
    out: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        out.append(arg)
        i += 1
        if arg in optional and (i == len(args) or args[i].startswith("-")):
            out.append(optional[arg])
        elif arg in spread:
            taken = 0
            while i < len(args) and not args[i].startswith("-"):
                out.extend([arg, args[i]] if taken else [args[i]])
                taken += 1
                i += 1
    return out
