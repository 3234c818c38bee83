"""The ``localeval`` command. Thin: every command calls the Python API."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from localeval.errors import LocalevalError


def _evaluate(args: argparse.Namespace) -> int:
    from localeval.api import JudgeOptions, evaluate
    from localeval.prompts.base import Settings

    cache: str | bool = args.cache if args.cache else not args.no_cache
    result = evaluate(
        args.data,
        metrics=args.metrics,
        judge=args.judge,
        embedder=args.embedder,
        out=args.out,
        cache=cache,
        judge_options=JudgeOptions(grammar=args.grammar, batch_size=args.batch_size, threads=args.threads,
                                   trust_remote_code=args.trust_remote_code),
        settings=Settings(reasons=not args.no_reasons),
        seed=args.seed,
        progress=not args.no_progress,
    )
    print(result.table())
    print(f"\nwrote {Path(args.out) / 'scores.jsonl'} and {Path(args.out) / 'summary.json'}")
    return 0


def _models_prepare(args: argparse.Namespace) -> int:
    from localeval.models import prepare

    for line in prepare(Path(args.dest) if args.dest else None):
        print(line)
    return 0


def _metrics_list(args: argparse.Namespace) -> int:
    from localeval.metrics.registry import ALIASES, METRICS

    for name, d in METRICS.items():
        opts = ", ".join(f"{k}={v}" for k, v in d.options.items()) or "-"
        print(f"{name:<22} needs {', '.join(d.required):<60} options: {opts}")
        print(f"{'':<22} {d.summary}")
    for alias, (base, preset) in ALIASES.items():
        print(f"{alias:<22} alias of {base} {preset or ''}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="localeval", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    ev = sub.add_parser("evaluate", help="score a data set with a local judge")
    ev.add_argument("data", help="JSONL, CSV, Parquet file or saved Hugging Face dataset folder")
    ev.add_argument("--metrics", default=None,
                    help="comma-separated metric names with options, e.g. "
                         "faithfulness,factual_correctness:mode=precision,ndcg:k=5 (default: the six LLM metrics)")
    ev.add_argument("--judge", default=None, help="local judge model folder (default: models/smollm2-135m-instruct)")
    ev.add_argument("--embedder", default=None, help="local embedding model folder (default: models/all-minilm-l6-v2)")
    ev.add_argument("--out", required=True, help="run folder for scores.jsonl, summary.json and judge.sqlite")
    ev.add_argument("--grammar", choices=("xgrammar", "outlines"), default="xgrammar",
                    help="grammar backend for constrained decoding (default: xgrammar)")
    ev.add_argument("--batch-size", type=int, default=8, help="asks decoded together by the transformers engine")
    ev.add_argument("--threads", type=int, default=None, help="CPU threads for torch (default: all cores)")
    ev.add_argument("--no-reasons", action="store_true", help="ask for verdicts without free-text reasons")
    ev.add_argument("--no-cache", action="store_true", help="do not read or write the run's judge cache")
    ev.add_argument("--cache", default=None, help="a judge cache file shared between runs")
    ev.add_argument("--seed", type=int, default=0, help="seed for sampled generations")
    ev.add_argument("--trust-remote-code", action="store_true", help="allow the model folder's own code")
    ev.add_argument("--no-progress", action="store_true", help="no progress bars")
    ev.set_defaults(func=_evaluate)

    models = sub.add_parser("models", help="manage the local model folders")
    models_sub = models.add_subparsers(dest="models_command", required=True)
    prep = models_sub.add_parser("prepare", help="build the bundled default judge and embedder folders")
    prep.add_argument("--dest", default=None, help="models folder (default: ./models of the repository)")
    prep.set_defaults(func=_models_prepare)

    metrics = sub.add_parser("metrics", help="list the metrics, the fields they need and their options")
    metrics.set_defaults(func=_metrics_list)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: returns the exit code (1 for a problem the user can fix, with its message)."""
    args = build_parser().parse_args(argv)
    try:
        code: int = args.func(args)
        return code
    except LocalevalError as error:
        print(f"localeval: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("localeval: interrupted; rerun the same command to resume from the judge cache", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
