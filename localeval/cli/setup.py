"""The setup commands: ``models prepare`` (the bundled model folders), ``models check DIR`` (a folder copied by
hand) and ``metrics`` (what can be scored)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from localeval.cli.command import command
from localeval.cli.help import HELP_OPTIONS, HelpGroup


def add_models_commands(app: typer.Typer) -> None:
    """Add ``models prepare`` and ``models check`` to the ``localeval`` app."""
    models = typer.Typer(help="manage the local model folders", no_args_is_help=True, cls=HelpGroup,
                         context_settings={"help_option_names": HELP_OPTIONS})
    app.add_typer(models, name="models")

    @command(models, "prepare", help="build the bundled default judge and embedder folders")
    def prepare(
        dest: Annotated[str | None, typer.Option(
            "--dest", help="models folder (default: $LOCALEVAL_MODELS, else ./models of a source checkout, "
                           "else ~/.cache/localeval/models)")] = None,
    ) -> int:
        from localeval.model_folders import models_location, prepare

        folder, why = (Path(dest), "--dest") if dest else models_location()
        print(f"models folder: {folder} (from {why}; set LOCALEVAL_MODELS or pass --dest to choose another)")
        for line in prepare(folder):
            print(line)
        return 0

    @command(models, "check", help="read a model folder without loading it (config, tokenizer, chat template, "
                                    "every weight file, dtype, size) and say what to fix; exit 1 on a problem")
    def check(
        folder: Annotated[str, typer.Argument(metavar="DIR", help="the model folder, e.g. one copied in by hand")],
    ) -> int:
        from localeval.model_folders.check import check_folder

        found = check_folder(folder)
        print("\n".join(found.lines()))
        return 1 if found.problems else 0


def add_metrics_command(app: typer.Typer) -> None:
    """Add ``metrics`` to the ``localeval`` app."""

    @command(app, "metrics", help="list the metrics, the fields they need and their options")
    def metrics() -> int:
        from localeval.report.metric_list import print_metrics

        print_metrics()
        return 0
