"""The ``agree`` command: a judge against human labels (LABELS RUN), or on WikiEval-style pairs (--pairs)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from localeval.errors import LocalevalError

DEFAULT_PAIRS = "(default)"  # --pairs without a folder: the WikiEval pairs shipped in the package
_PAIRS_ONLY = ("judge", "embedder", "limit", "max_examples", "cache")


def _agree(args: argparse.Namespace) -> int:
    if args.labels is None and args.pairs is None:
        raise LocalevalError("give LABELS RUN (human labels and a run folder), or --pairs [DIR] to check a judge "
                             "on WikiEval-style pairs; see `localeval agree --help`")
    if args.labels is not None and args.run is None:
        raise LocalevalError(f"agree {args.labels}: also give the run folder the labels are for (agree LABELS RUN)")
    if args.pairs is None:
        given = [f"--{name.replace('_', '-')}" for name in _PAIRS_ONLY if getattr(args, name) is not None]
        given += ["--no-reasons"] if args.no_reasons else []
        if given:
            raise LocalevalError(f"{', '.join(given)} only apply with --pairs (the labels mode reads a finished run)")
    out: dict[str, Any] = {}
    if args.labels is not None:
        from localeval.agree.report import agree, format_agreement

        report = agree(args.labels, args.run, level=args.level, resamples=args.resamples, seed=args.seed)
        print(format_agreement(report))
        out["agreement"] = report.to_dict()
    if args.pairs is not None:
        from localeval.agree.pair_run import run_pairs
        from localeval.agree.pair_table import format_pairs_report
        from localeval.cli import judge_options, judge_settings

        if args.labels is not None:
            print()
        folder = None if args.pairs == DEFAULT_PAIRS else Path(args.pairs)
        if folder is not None and not folder.is_dir():
            raise LocalevalError(f"--pairs {folder}: no such folder; give the folder that holds ff.csv, ar.csv "
                                 "and cr.csv")
        pairs = run_pairs(folder, args.judge, args.embedder, limit=args.limit, cache=args.cache,
                          settings=judge_settings(args), judge_options=judge_options(args),
                          seed=args.seed, progress=not args.no_progress)
        print(format_pairs_report(pairs))
        out["pairs"] = pairs.to_dict()
    if args.json:
        from localeval.store.run_folder import write_atomic

        write_atomic(Path(args.json), json.dumps(out, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


def add_agree_commands(sub: argparse._SubParsersAction) -> None:
    """Add ``agree`` to the ``localeval`` command's subparsers."""
    ag = sub.add_parser(
        "agree", help="how far to trust the judge: agreement with human labels, corrected means, WikiEval pairs",
        description="With LABELS RUN: agreement of the run's judge with human labels (accuracy, kappa, "
                    "Spearman, Pearson with bootstrap intervals; verdict confusion matrices) and each "
                    "metric's mean corrected for the judge's bias (prediction-powered inference). "
                    "With --pairs: pairwise accuracy of a judge on WikiEval-style pair files.")
    ag.add_argument("labels", nargs="?", help="human labels, .jsonl or .csv: rows {id, metric, label}, "
                    "{id, <metric>: label, ...} or verdict rows {id, metric, index, label}")
    ag.add_argument("run", nargs="?", help="the run folder (evaluate --out) the labels are for")
    ag.add_argument("--pairs", nargs="?", const=DEFAULT_PAIRS, default=None, metavar="DIR",
                    help="run the judge on the pair files ff.csv, ar.csv, cr.csv in DIR "
                         "(default: the WikiEval pairs shipped with localeval, localeval/agree/wikieval_pairs)")
    ag.add_argument("--judge", default=None, help="judge model folder for --pairs (default: the bundled judge)")
    ag.add_argument("--embedder", default=None, help="embedding model folder for --pairs (default: the bundled one)")
    ag.add_argument("--limit", type=int, default=None, help="--pairs: the first N questions of each file")
    ag.add_argument("--no-reasons", action="store_true", help="--pairs: verdicts without a reason first")
    ag.add_argument("--max-examples", type=int, default=None, help="--pairs: at most N few-shot examples")
    ag.add_argument("--votes", type=int, default=1, help="--pairs: majority of N sampled verdicts (default 1)")
    ag.add_argument("--temperature", type=float, default=0.7, help="--pairs: sampling temperature of --votes")
    ag.add_argument("--cache", default=None, help="--pairs: a judge cache file to reuse between runs")
    ag.add_argument("--no-progress", action="store_true", help="--pairs: no progress, loading bars or warnings")
    ag.add_argument("--json", default=None, metavar="OUT", help="also write the results as JSON")
    ag.add_argument("--level", type=float, default=0.95, help="interval level (default 0.95)")
    ag.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (default 2000)")
    ag.add_argument("--seed", type=int, default=0, help="bootstrap seed, and the judge's for --pairs (default 0)")
    from localeval.cli import engine_arguments  # here: localeval.cli imports this module

    engine_arguments(ag)  # --pairs: how the judge is loaded and run
    ag.set_defaults(func=_agree)
