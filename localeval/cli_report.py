"""The reading commands: ``report``, ``compare``, ``gate`` and ``diagnose``. Thin: each calls the API."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from localeval.errors import LocalevalError


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
        raise LocalevalError(f"{option} {item!r}: {text!r} is not a number (write metric=0.8)")
    return value


def parse_pairs(option: str, values: Sequence[str] | None) -> dict[str, float]:
    """``faithfulness=0.8`` items -> {metric: number}; the value follows the last ``=``."""
    out = {}
    for item in split_items(values):
        metric, sep, text = item.rpartition("=")
        if not sep or not metric:
            raise LocalevalError(f"{option} {item!r}: write metric=value, e.g. {option} faithfulness=0.8")
        out[metric.strip()] = _number(option, text.strip(), item)
    return out


def _report(args: argparse.Namespace) -> int:
    from localeval.report.html import write_report

    path = write_report(args.run, worst=args.worst, out=args.out)
    print(f"wrote {path}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from localeval.report.compare import compare_runs, comparison_to_dict, format_comparison
    from localeval.report.html import write_comparison_html
    from localeval.store.run_folder import write_atomic

    c = compare_runs(args.run_a, args.run_b, resamples=args.resamples, seed=args.seed, level=args.level)
    print(format_comparison(c))
    if args.html:
        print(f"wrote {write_comparison_html(c, args.html)}")
    if args.json:
        write_atomic(Path(args.json), json.dumps(comparison_to_dict(c), indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


def _gate(args: argparse.Namespace) -> int:
    from localeval.report.gate import gate
    from localeval.report.runs import RunLike, read_run

    run: RunLike = args.run
    bare = [v for v in split_items(args.max_nan) if "=" not in v]
    ceilings = parse_pairs("--max-nan", [v for v in split_items(args.max_nan) if "=" in v])
    if len(bare) > 1:
        raise LocalevalError(f"--max-nan: one ceiling for all metrics, got {', '.join(bare)}")
    max_nan: float | dict[str, float] | None = ceilings or None
    if bare:
        everyone = _number("--max-nan", bare[0], bare[0])
        if ceilings:  # one for all, overridden per metric
            run = read_run(args.run)
            max_nan = {**dict.fromkeys(run.metric_names, everyone), **ceilings}
        else:
            max_nan = everyone
    floors, no_worse = parse_pairs("--min", args.min), split_items(args.no_worse)
    if not floors and max_nan is None and not no_worse:
        alone = " (--baseline alone is no rule: add --no-worse METRIC)" if args.baseline else ""
        raise LocalevalError(f"gate: no rule given, so nothing to check{alone}; give at least one of "
                             "--min METRIC=V (a floor on the mean, e.g. --min faithfulness=0.8), "
                             "--max-nan SHARE or METRIC=SHARE (a ceiling on the NaN share, e.g. --max-nan 0.05), "
                             "--baseline RUN --no-worse METRIC (no detectable regression against RUN)")
    result = gate(run, baseline=args.baseline, min=floors, max_nan=max_nan,
                  no_worse=no_worse, resamples=args.resamples, seed=args.seed)
    if args.verbose:
        for line in result.checks:
            print(f"ok: {line}")
    if not result.passed:
        for line in result.failures:
            print(line, file=sys.stderr)
        return 1
    print("gate passed")
    return 0


def _diagnose(args: argparse.Namespace) -> int:
    from localeval.report.diagnosis import diagnose, format_findings
    from localeval.report.strata import strata

    print(format_findings(diagnose(args.run)))
    un = strata(args.run)["unanswerable"]
    if un["n"]:
        rate = "unknown" if un["rate"] is None else f"{un['rate']:.0%}"
        print(f"\nunanswerable samples: {un['n']}, refused {un['refused']}, refusal rate {rate} "
              f"({un['note']})")
    return 0


def add_report_commands(sub: argparse._SubParsersAction) -> None:
    """Add report, compare, gate and diagnose to the ``localeval`` command's subparsers."""
    rep = sub.add_parser("report", help="write RUN/report.html: tables, histograms, worst samples, diagnosis")
    rep.add_argument("run", help="run folder written by evaluate --out")
    rep.add_argument("--worst", type=int, default=5, help="worst samples shown per metric (default 5)")
    rep.add_argument("--out", default=None, help="write the page here instead of RUN/report.html")
    rep.set_defaults(func=_report)

    cmp = sub.add_parser("compare", help="did B improve on A? paired differences with bootstrap intervals")
    cmp.add_argument("run_a", help="the baseline run folder")
    cmp.add_argument("run_b", help="the run folder of the change")
    cmp.add_argument("--html", default=None, help="also write the comparison as an HTML page")
    cmp.add_argument("--json", default=None, help="also write the comparison as JSON")
    cmp.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (default 2000)")
    cmp.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    cmp.add_argument("--level", type=float, default=0.95, help="interval level (default 0.95)")
    cmp.set_defaults(func=_compare)

    gt = sub.add_parser("gate", help="exit 1, with one line per failed rule, when a run misses its bar")
    gt.add_argument("run", help="run folder to check")
    gt.add_argument("--baseline", default=None, help="run folder that --no-worse compares with")
    gt.add_argument("--min", action="append", metavar="METRIC=VALUE",
                    help="floor for a metric's mean on valid samples; repeat or separate by commas")
    gt.add_argument("--max-nan", action="append", metavar="SHARE|METRIC=SHARE",
                    help="ceiling on the NaN share: 0.05 for every metric, or faithfulness=0.05")
    gt.add_argument("--no-worse", action="extend", nargs="+", metavar="METRIC",
                    help="metrics that must not be detectably worse than in --baseline")
    gt.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples for --no-worse")
    gt.add_argument("--seed", type=int, default=0, help="bootstrap seed for --no-worse")
    gt.add_argument("-v", "--verbose", action="store_true", help="also print the rules that passed")
    gt.set_defaults(func=_gate)

    dg = sub.add_parser("diagnose", help="where the pipeline fails, read from the metrics' combinations")
    dg.add_argument("run", help="run folder")
    dg.set_defaults(func=_diagnose)
