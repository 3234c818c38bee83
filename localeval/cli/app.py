"""The ``localeval`` app: every command group added to one typer app, and ``main``, which returns the exit code."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Annotated

import typer

from localeval.cli.agree import add_agree_commands
from localeval.cli.cache import add_cache_commands
from localeval.cli.help import HELP_OPTIONS, HelpGroup
from localeval.cli.report import add_report_commands
from localeval.cli.run import add_run_commands
from localeval.cli.setup import add_metrics_command, add_models_commands
from localeval.cli.testset import add_testset_commands

HELP = "Evaluate RAG systems with Ragas' metrics and a local, grammar-constrained judge."


def _print_version(given: bool) -> None:
    if given:
        from localeval import __version__

        print(f"localeval {__version__}")
        raise typer.Exit(0)


def build_app() -> typer.Typer:
    """The ``localeval`` command with all its subcommands."""
    app = typer.Typer(
        name="localeval", help=HELP, cls=HelpGroup, add_completion=False, no_args_is_help=True,
        rich_markup_mode=None, pretty_exceptions_enable=False, context_settings={"help_option_names": HELP_OPTIONS},
    )

    @app.callback()
    def top(
        version: Annotated[bool, typer.Option(
            "--version", is_eager=True, callback=_print_version, help="print localeval's version and exit")] = False,
    ) -> None:
        pass

    add_run_commands(app)
    add_models_commands(app)
    add_report_commands(app)
    add_agree_commands(app)
    add_testset_commands(app)
    add_cache_commands(app)
    add_metrics_command(app)
    return app


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: returns the exit code (``cli.command`` says which)."""
    command = typer.main.get_command(build_app())
    args = list(sys.argv[1:] if argv is None else argv)
    try:  # the arguments go with the context, for the line that says how to resume an interrupted run
        command.main(args=args, prog_name="localeval", standalone_mode=True, obj={"argv": args})
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else 0 if done.code is None else 1
    return 0
