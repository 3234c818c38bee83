"""The reading commands: ``report``, ``compare``, ``gate`` and ``diagnose``. Thin: each calls the API."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from localeval.cli.command import command, rewriting
from localeval.cli.shared import interval_level
from localeval.config import OptionError


def split_items(values: Sequence[str] | None) -> list[str]:
    """Repeated and comma-separated items; a comma inside parentheses belongs to a metric's options."""
    items: list[str] = []
    for value in values or ():
        depth, start = 0, 0
        for i, ch in enumerate(value + ","):
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if ch == "," and depth <= 0:
                if value[start:i].strip():
                    items.append(value[start:i].strip())
                start = i + 1
    return items


def _number(option: str, text: str, item: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if math.isnan(value):
        raise OptionError(f"{option} {item!r}: {text!r} is not a number (write metric=0.8)")
    return value


def parse_pairs(option: str, values: Sequence[str] | None) -> dict[str, float]:
    """``faithfulness=0.8`` items -> {metric: number}; the value follows the last ``=``."""
    out = {}
    for item in split_items(values):
        metric, sep, text = item.rpartition("=")
        if not sep or not metric:
            raise OptionError(f"{option} {item!r}: write metric=value, e.g. {option} faithfulness=0.8")
        out[metric.strip()] = _number(option, text.strip(), item)
    return out


Run = Annotated[str, typer.Argument(metavar="RUN", help="run folder written by evaluate --out")]
Resamples = Annotated[int, typer.Option("--resamples", min=1, help="bootstrap resamples")]
Seed = Annotated[int, typer.Option("--seed", help="bootstrap seed")]
Level = Annotated[float, typer.Option("--level", callback=interval_level, help="interval level")]


def add_report_commands(app: typer.Typer) -> None:
    """Add report, compare, gate and diagnose to the ``localeval`` app."""

    @command(app, "report", help="write RUN/report.html: tables, histograms, worst samples, diagnosis")
    def report(
        run: Run,
        worst: Annotated[int, typer.Option("--worst", min=0, help="worst samples shown per metric")] = 5,
        out: Annotated[str | None, typer.Option("--out", help="write the page here instead of RUN/report.html")]
        = None,
    ) -> int:
        from localeval.report.html import write_report

        print(f"wrote {write_report(run, worst=worst, out=out)}")
        return 0

    @command(app, "compare", help="did B improve on A? paired differences with bootstrap intervals; warns (without "
                                  "failing) when the runs' judges, settings or batch invariance differ",
             short_help="did B improve on A? paired differences with bootstrap intervals")
    def compare(
        run_a: Annotated[str, typer.Argument(metavar="RUN_A", help="the baseline run folder")],
        run_b: Annotated[str, typer.Argument(metavar="RUN_B", help="the run folder of the change")],
        html: Annotated[str | None, typer.Option("--html", help="also write the comparison as an HTML page")] = None,
        json_out: Annotated[str | None, typer.Option("--json", help="also write the comparison as JSON")] = None,
        moved: Annotated[int, typer.Option(
            "--moved", min=0, help="samples shown per metric whose score changed most, with both scores and the "
                                   "judge's reasons (0: none)")] = 5,
        resamples: Resamples = 2000,
        seed: Seed = 0,
        level: Level = 0.95,
    ) -> int:
        from localeval.report.compare import compare_runs, comparison_to_dict, format_comparison
        from localeval.report.html import write_comparison_html
        from localeval.store.run_folder import write_atomic

        c = compare_runs(run_a, run_b, resamples=resamples, seed=seed, level=level, moved=moved)
        print(format_comparison(c))
        if html:
            print(f"wrote {write_comparison_html(c, html)}")
        if json_out:
            write_atomic(Path(json_out), json.dumps(comparison_to_dict(c), indent=2) + "\n")
            print(f"wrote {json_out}")
        return 0

    @command(app, "gate", help="exit 1, with one line per failed rule, when a run misses its bar",
             cls=rewriting(spread=["--no-worse"]))
    def gate(
        run_dir: Annotated[str, typer.Argument(metavar="RUN", help="run folder to check")],
        baseline: Annotated[str | None, typer.Option(
            "--baseline", help="run folder that --no-worse compares with (a warning on stderr, failing nothing, "
                               "where the two runs' judges, settings or batch invariance differ)")] = None,
        min_items: Annotated[list[str] | None, typer.Option(
            "--min", metavar="METRIC=VALUE",
            help="floor for a metric's mean on valid samples; repeat or separate by commas")] = None,
        max_nan_items: Annotated[list[str] | None, typer.Option(
            "--max-nan", metavar="SHARE|METRIC=SHARE",
            help="ceiling on the NaN share: 0.05 for every metric, or faithfulness=0.05")] = None,
        no_worse_items: Annotated[list[str] | None, typer.Option(
            "--no-worse", metavar="METRIC",
            help="metrics that must not be detectably worse than in --baseline (one or more)")] = None,
        resamples: Annotated[int, typer.Option("--resamples", min=1, help="bootstrap resamples for --no-worse")] = 2000,
        seed: Annotated[int, typer.Option("--seed", help="bootstrap seed for --no-worse")] = 0,
        verbose: Annotated[bool, typer.Option("-v", "--verbose", help="also print the rules that passed")] = False,
    ) -> int:
        from localeval.report.gate import gate
        from localeval.report.runs import RunLike, read_run

        run: RunLike = run_dir
        bare = [v for v in split_items(max_nan_items) if "=" not in v]
        ceilings = parse_pairs("--max-nan", [v for v in split_items(max_nan_items) if "=" in v])
        if len(bare) > 1:
            raise OptionError(f"--max-nan: one ceiling for all metrics, got {', '.join(bare)}")
        max_nan: float | dict[str, float] | None = ceilings or None
        if bare:
            everyone = _number("--max-nan", bare[0], bare[0])
            if ceilings:  # one for all, overridden per metric
                run = read_run(run_dir)
                max_nan = {**dict.fromkeys(run.metric_names, everyone), **ceilings}
            else:
                max_nan = everyone
        floors, no_worse = parse_pairs("--min", min_items), split_items(no_worse_items)
        if not floors and max_nan is None and not no_worse:
            alone = " (--baseline alone is no rule: add --no-worse METRIC)" if baseline else ""
            raise OptionError(f"gate: no rule given, so nothing to check{alone}; give at least one of "
                                 "--min METRIC=V (a floor on the mean, e.g. --min faithfulness=0.8), "
                                 "--max-nan SHARE or METRIC=SHARE (a ceiling on the NaN share, e.g. --max-nan 0.05), "
                                 "--baseline RUN --no-worse METRIC (no detectable regression against RUN)")
        result = gate(run, baseline=baseline, min=floors, max_nan=max_nan,
                      no_worse=no_worse, resamples=resamples, seed=seed)
        if verbose:
            for line in result.checks:
                print(f"ok: {line}")
        for line in result.warnings:  # the run and its baseline may differ by more than the change
            print(f"warning: {line}", file=sys.stderr)
        if not result.passed:
            for line in result.failures:
                print(line, file=sys.stderr)
            return 1
        print("gate passed")
        return 0

    @command(app, "diagnose", help="where the pipeline fails, read from the metrics' combinations")
    def diagnose(run: Annotated[str, typer.Argument(metavar="RUN", help="run folder")]) -> int:
        from localeval.report.diagnosis import diagnosis_text
        from localeval.report.strata import strata

        print(diagnosis_text(run))
        un = strata(run)["unanswerable"]
        if un["n"]:
            rate = "unknown" if un["rate"] is None else f"{un['rate']:.0%}"
            print(f"\nunanswerable samples: {un['n']}, refused {un['refused']}, refusal rate {rate} "
                  f"({un['note']})")
        return 0
