"""The ``cache`` commands: ``cache check RUN`` (what a judge cache holds that can be read, and whether the file is
sound) and ``cache salvage RUN --to NEW`` (what can be read, copied into a fresh cache file)."""

from __future__ import annotations

from typing import Annotated

import typer

from localeval.cli.command import command
from localeval.cli.help import HELP_OPTIONS, HelpGroup

Run = Annotated[str, typer.Argument(metavar="RUN", help="a run folder (its judge.sqlite), or a cache file")]


def add_cache_commands(app: typer.Typer) -> None:
    """Add ``cache check`` and ``cache salvage`` to the ``localeval`` app."""
    cache = typer.Typer(help="check a judge cache, and save what a damaged one still holds", no_args_is_help=True,
                        cls=HelpGroup, context_settings={"help_option_names": HELP_OPTIONS})
    app.add_typer(cache, name="cache")

    @command(cache, "check", help="count the answers and embeddings a judge cache holds that can be read, and check "
                                   "the file; exit 1 when it is damaged")
    def check(run: Run) -> int:
        from localeval.store.cache_repair import check_cache

        found = check_cache(run)
        print("\n".join(found.lines()))
        return 0 if found.sound else 1

    @command(cache, "salvage", help="copy every answer and embedding a judge cache holds that can be read into a "
                                     "new cache file, to put in the damaged one's place")
    def salvage(
        run: Run,
        to: Annotated[str, typer.Option("--to", metavar="NEW", help="the new cache file (must not exist)")],
    ) -> int:
        from localeval.store.cache_errors import move_aside
        from localeval.store.cache_repair import salvage_cache

        copied = salvage_cache(run, to)
        print(f"copied {copied.answers} answers and {copied.embeddings} embeddings from {copied.path} into {to}"
              + (f"; about {copied.lost} rows could not be read" if copied.lost else ""))
        print(f"to use it: {move_aside(copied.path)} && mv {to} {copied.path}, then rerun the same command (it asks "
              "the judge only for what the copy lacks)")
        return 0
