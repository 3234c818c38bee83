"""The commands that run the judge or reuse its answers: ``evaluate``, ``estimate``, ``rescore``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from localeval.cli.command import command, resumable
from localeval.cli.shared import CACHE_FILE, ENGINE, JUDGE, NO_CACHE, PROGRESS, Shared
from localeval.report.judge_note import TOY_NOTE, toy_judge
from localeval.store.run_folder import CACHE

Data = Annotated[str, typer.Argument(metavar="DATA", help="JSONL, JSON, CSV or Parquet file, or saved Hugging Face "
                                                          "dataset folder")]
Metrics = Annotated[list[str] | None, typer.Option(
    "--metrics", metavar="METRICS",
    help="metric names separated by commas (or --metrics repeated: they add up), each with its options after a "
         "colon, e.g. faithfulness,ndcg:k=5 or factual_correctness:mode=precision; or criteria of your own from a "
         "file: examples/criteria.toml:polite (default: the six LLM metrics)")]
Seed = Annotated[int, typer.Option("--seed", help="seed for sampled generations")]


def _joined(metrics: list[str] | None) -> str | None:
    """Every --metrics given, as one comma-separated list (None: none given, the defaults)."""
    return ",".join(metrics) if metrics else None


def add_run_commands(app: typer.Typer) -> None:
    """Add evaluate, estimate and rescore to the ``localeval`` app."""

    @command(app, "evaluate", JUDGE, PROGRESS, ENGINE, NO_CACHE, CACHE_FILE,
             help="score a data set with a local judge; to compare two runs whose judge is not batch-invariant, "
                  "give both one --cache FILE: an ask the first answered is served the same answer in the second",
             short_help="score a data set with a local judge")
    def evaluate(
        data: Data,
        out: Annotated[str, typer.Option("--out", help="run folder for scores.jsonl, summary.json and judge.sqlite")],
        shared: Shared,
        metrics: Metrics = None,
        seed: Seed = 0,
        on_missing: Annotated[Literal["error", "nan"], typer.Option(
            "--on-missing", help="a sample lacking a field a metric needs: error stops the run, naming row and "
                                 "field; nan scores that metric NaN (missing_field) and goes on")] = "error",
        no_report: Annotated[bool, typer.Option("--no-report", help="do not write RUN/report.html")] = False,
        long_context: Annotated[Literal["skip", "error", "truncate"], typer.Option(
            "--long-context", help="an ask longer than the judge's context window: skip scores it NaN "
                                   "(context_too_long), error stops the run, truncate cuts the longest input "
                                   "text to fit (recorded in the trace)")] = "skip",
        chunk_size: Annotated[int | None, typer.Option(
            "--chunk-size", min=1, help="score and write N samples at a time, resumable chunk by chunk (default: "
                                        "4096 for vllm and scripted, 512 for transformers; docs/bulk-runs.md)")] = None,
        replace: Annotated[bool, typer.Option(
            "--replace", help="overwrite the run --out holds even if it scored other samples or metrics this run "
                              "leaves out (its judge cache is kept); without it such a folder stops the run")] = False,
    ) -> int:
        from localeval.api import evaluate_run

        config = shared.run_config(_joined(metrics), seed, chunk_size, on_missing=on_missing, long_context=long_context)
        cache: str | bool = shared.cache if shared.cache else not shared.no_cache
        kept = shared.cache or (None if shared.no_cache else Path(out) / CACHE)
        with resumable(kept):
            result = evaluate_run(data, config, out=out, cache=cache, progress=not shared.no_progress,
                                  report=not no_report, replace=replace)
        from localeval.run.chunk_loop import REPORT_SAMPLES

        print(result.table(judge_note=False))  # the toy judge's note comes last instead
        large = result.sample_count > REPORT_SAMPLES
        written = ["scores.jsonl", "summary.json"] + ([] if no_report or large else ["report.html"])
        print(f"\nwrote {', '.join(str(Path(out) / w) for w in written)}")
        if large and not no_report:
            print(f"(no report.html: it holds every row, and this run has more than {REPORT_SAMPLES:,} samples)")
        if toy_judge(result.info):  # the last lines read: these scores are no measure of quality
            print(f"\n{TOY_NOTE}")
        return 0

    @command(app, "estimate", JUDGE, PROGRESS, ENGINE,
             help="measure a few samples and project calls, tokens and time")
    def estimate(
        data: Data,
        shared: Shared,
        metrics: Metrics = None,
        seed: Seed = 0,
        sample: Annotated[int, typer.Option("--sample", min=1, help="samples to measure")] = 10,
        total: Annotated[int | None, typer.Option(
            "--total", min=1, help="project to N samples, e.g. 1000000 (default: the data set's)")] = None,
    ) -> int:
        from localeval.estimate import estimate_run

        config = shared.run_config(_joined(metrics), seed)
        print(estimate_run(data, config, sample=sample, progress=not shared.no_progress, total=total).table())
        return 0

    @command(app, "rescore", PROGRESS, help="recompute scores and summary of a run from its cache, no model")
    def rescore(
        run: Annotated[str, typer.Argument(metavar="RUN", help="a run folder written by evaluate")],
        shared: Shared,
    ) -> int:
        from localeval.rescore import rescore as rescore_run

        result = rescore_run(run, progress=not shared.no_progress)
        print(result.table())
        missed = result.info.get("rescore_misses", 0)
        if missed:
            print(f"\n{missed} asks had no cached answer and score NaN (engine_error); rerun evaluate for them")
        print(f"\nrewrote {Path(run) / 'scores.jsonl'} and {Path(run) / 'summary.json'} from the cache")
        return 0
