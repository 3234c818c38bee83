"""The ``localeval`` app: every command group added to one typer app, and ``main``, which returns the exit code."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import typer

from localeval.cli.agree import add_agree_commands
from localeval.cli.report import add_report_commands
from localeval.cli.run import add_run_commands
from localeval.cli.setup import add_metrics_command, add_models_commands
from localeval.cli.testset import add_testset_commands


def build_app() -> typer.Typer:
    """The ``localeval`` command with all its subcommands."""
    app = typer.Typer(
        name="localeval", help="Evaluate RAG systems with Ragas' metrics and a local, grammar-constrained judge.",
        add_completion=False, no_args_is_help=True, rich_markup_mode=None, pretty_exceptions_enable=False,
    )
    add_run_commands(app)
    add_models_commands(app)
    add_report_commands(app)
    add_agree_commands(app)
    add_testset_commands(app)
    add_metrics_command(app)
    return app


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: returns the exit code (1 for a problem the user can fix, with its message; 2 for a usage
    error, printed with the command's usage line)."""
    command = typer.main.get_command(build_app())
    try:
        command.main(args=list(sys.argv[1:] if argv is None else argv), prog_name="localeval", standalone_mode=True)
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else 0 if done.code is None else 1
    return 0
