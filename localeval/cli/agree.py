"""The ``agree`` command: a judge against human labels (LABELS RUN), or on WikiEval-style pairs (--pairs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from localeval.cli.command import command, rewriting
from localeval.cli.shared import CACHE_FILE, ENGINE, JUDGE, PROGRESS, Shared, interval_level
from localeval.config import OptionError

DEFAULT_PAIRS = "(default)"  # --pairs without a folder: the WikiEval pairs shipped in the package

HELP = ("With LABELS RUN: agreement of the run's judge with human labels (accuracy, kappa, Spearman, Pearson with "
        "bootstrap intervals; verdict confusion matrices) and each metric's mean corrected for the judge's bias "
        "(prediction-powered inference). With --pairs: pairwise accuracy of a judge on WikiEval-style pair files; "
        "the judge, engine, cache and progress options apply to --pairs only.")


def _check_mode(labels: str | None, run: str | None, pairs: str | None, limit: int | None, shared: Shared,
                offset: int = 0, files: str | None = None) -> None:
    """Refuse a call that names no mode, lacks the run folder, or gives --pairs options without --pairs."""
    if labels is None and pairs is None:
        raise OptionError("give LABELS RUN (human labels and a run folder), or --pairs [DIR] to check a judge "
                             "on WikiEval-style pairs; see `localeval agree --help`")
    if labels is not None and run is None:
        raise OptionError(f"agree {labels}: also give the run folder the labels are for (agree LABELS RUN)")
    if pairs is None:
        values = {"judge": shared.judge, "embedder": shared.embedder, "limit": limit,
                  "max_examples": shared.max_examples, "cache": shared.cache, "offset": offset or None, "files": files}
        given = [f"--{name.replace('_', '-')}" for name, value in values.items() if value is not None]
        given += ["--no-reasons"] if shared.no_reasons else []
        given += ["--soft"] if shared.soft else []
        given += ["--judge-every-copy"] if shared.judge_every_copy else []
        given += [f"--judge-mode {shared.judge_mode}"] if shared.judge_mode != "ragas" else []
        if given:
            raise OptionError(f"{', '.join(given)} only apply with --pairs (the labels mode reads a finished run)")


def _pair_files(files: str | None) -> tuple[str, ...]:
    """--files: the pair files named (``ff,cr``), each once and known; None: all three."""
    from localeval.agree.pair_files import FILES

    if files is None:
        return tuple(FILES)
    named = tuple(dict.fromkeys(f.strip().removesuffix(".csv") for f in files.split(",") if f.strip()))
    unknown = [f for f in named if f not in FILES]
    if unknown or not named:
        raise OptionError(f"--files {files}: give pair files from {', '.join(FILES)}, separated by commas (e.g. ff,cr)")
    return named


def add_agree_commands(app: typer.Typer) -> None:
    """Add ``agree`` to the ``localeval`` app."""

    @command(app, "agree", JUDGE, CACHE_FILE, PROGRESS, ENGINE, help=HELP,
             short_help="how far to trust the judge: agreement with human labels, corrected means, WikiEval pairs",
             cls=rewriting(optional={"--pairs": DEFAULT_PAIRS}))
    def agree(
        shared: Shared,
        labels: Annotated[str | None, typer.Argument(
            metavar="LABELS", help="human labels, .jsonl or .csv: rows {id, metric, label}, "
                                     "{id, <metric>: label, ...} or verdict rows {id, metric, index, label}")] = None,
        run: Annotated[str | None, typer.Argument(
            metavar="RUN", help="the run folder (evaluate --out) the labels are for")] = None,
        pairs: Annotated[str | None, typer.Option(
            "--pairs", metavar="DIR", help="run the judge on the pair files ff.csv, ar.csv, cr.csv in DIR (DIR left "
                                           "out: the WikiEval pairs shipped with localeval, "
                                           "localeval/agree/wikieval_pairs)")] = None,
        limit: Annotated[int | None, typer.Option("--limit", min=1, help="--pairs: the first N questions of each file")]
        = None,
        offset: Annotated[int, typer.Option("--offset", min=0, help="--pairs: skip the first N questions of each file "
                                                                  "(--offset 25 --limit 25: the second 25)")] = 0,
        files: Annotated[str | None, typer.Option(
            "--files", metavar="ff,ar,cr", help="--pairs: which pair files to score (default: all three)")] = None,
        json_out: Annotated[str | None, typer.Option(
            "--json", metavar="OUT", help="also write the results as JSON")] = None,
        level: Annotated[float, typer.Option("--level", callback=interval_level, help="interval level")] = 0.95,
        resamples: Annotated[int, typer.Option("--resamples", min=1, help="bootstrap resamples")] = 2000,
        seed: Annotated[int, typer.Option(
            "--seed", help="bootstrap seed, and the judge's for --pairs")] = 0,
    ) -> int:
        _check_mode(labels, run, pairs, limit, shared, offset, files)
        out: dict[str, Any] = {}
        if labels is not None and run is not None:  # _check_mode: labels come with a run
            from localeval.agree.report import agree, format_agreement

            report = agree(labels, run, level=level, resamples=resamples, seed=seed)
            print(format_agreement(report))
            out["agreement"] = report.to_dict()
        if pairs is not None:
            from localeval.agree import pair_run, pair_table

            if labels is not None:
                print()
            folder = None if pairs == DEFAULT_PAIRS else Path(pairs)
            if folder is not None and not folder.is_dir():
                raise OptionError(f"--pairs {folder}: no such folder; give the folder that holds ff.csv, ar.csv "
                                     "and cr.csv")
            found = pair_run.run_pairs(folder, shared.judge, shared.embedder, limit=limit, cache=shared.cache,
                                       config=shared.judge_config(seed), progress=not shared.no_progress,
                                       offset=offset, files=_pair_files(files))
            print(pair_table.format_pairs_report(found))
            out["pairs"] = found.to_dict()
        if json_out:
            from localeval.store.run_folder import write_atomic

            write_atomic(Path(json_out), json.dumps(out, indent=2) + "\n")
            print(f"wrote {json_out}")
        return 0
