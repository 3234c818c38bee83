"""How far two runs over the same samples agree, sample by sample: a faster setting against the default.

    python -m benchmarks.identity.run_identity runs/float32 runs/bfloat16-stop-repeats

Both folders are ``localeval evaluate`` runs of the same samples and metrics (their ``scores.jsonl``).
Per metric it counts the samples whose score is identical in both runs (NaN counts as equal to NaN),
the samples whose verdict trace (every 0/1 verdict the metric's score came from) is identical, the
mean absolute difference of the scores, and both means. Unlike ``verdict_identity.py``, which
replays the same asks, this follows a setting's whole effect: a statement list cut shorter changes
the NLI asks that follow it. Where both runs judged the same statement (or claim) list, it also counts
the NLI verdicts identical position by position, and among the first occurrences of each distinct
statement only (a setting that judges a repeated statement once changes the repeats' verdicts, not
the statements'). Prints a table; ``--json`` writes the figures.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from benchmarks.harness.bench import write_json


def read_scores(run: Path) -> dict[str, dict[str, Any]]:
    """Each sample's metrics (value, NaN reason, trace) by sample id."""
    rows = [json.loads(line) for line in (run / "scores.jsonl").read_text().splitlines() if line.strip()]
    return {str(r["id"]): r["metrics"] for r in rows}


TEXT_KEYS = ("statement", "claim", "question", "reason")  # trace keys holding the judge's text, not verdicts


def verdict_trace(trace: dict[str, Any] | None) -> list[Any]:
    """Every verdict list of a metric's trace, by key (NLI verdicts, usefulness, attribution, noise
    sensitivity's per-context verdicts, ...): all but the judge's texts (statements, claims, reasons)."""
    trace = trace or {}
    return [trace[k] for k in sorted(trace) if not any(word in k for word in TEXT_KEYS)]


# metric -> (trace key of the items, trace key of their verdicts: one list, or one list per context)
ITEM_VERDICTS = {
    "faithfulness": (("statements", "verdicts"),),
    "factual_correctness": (("response_claims", "response_verdicts"), ("reference_claims", "reference_verdicts")),
    "noise_sensitivity": (("reference_statements", "reference_by_context"),
                          ("response_statements", "response_by_context"),
                          ("response_statements", "response_in_reference")),
}


def item_verdicts(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]]) -> dict[str, int]:
    """NLI verdicts of the same item lists in both runs: positions and identical ones, and the same
    among each list's first occurrences of a distinct item.

    >>> run = lambda v: {"s": {"faithfulness": {"trace": {"statements": ["x", "y", "x"], "verdicts": v}}}}
    >>> item_verdicts(run([1, 0, 1]), run([1, 0, 0]))
    {'positions': 3, 'identical': 2, 'first_occurrences': 2, 'identical_first': 2}
    """
    out = {"positions": 0, "identical": 0, "first_occurrences": 0, "identical_first": 0}
    for sample in a.keys() & b.keys():
        for metric, pairs in ITEM_VERDICTS.items():
            ta = (a[sample].get(metric) or {}).get("trace") or {}
            tb = (b[sample].get(metric) or {}).get("trace") or {}
            for items, verdicts in pairs:
                same_items = ta.get(items) is not None and ta.get(items) == tb.get(items)
                if not same_items or not ta.get(verdicts) or not tb.get(verdicts):
                    continue
                la, lb = ta[verdicts], tb[verdicts]
                lists = zip(la, lb, strict=True) if isinstance(la[0], list) else [(la, lb)]
                for va, vb in lists:
                    seen: set[str] = set()
                    for item, x, y in zip(ta[items], va, vb, strict=True):
                        out["positions"] += 1
                        out["identical"] += int(x == y)
                        if item not in seen:
                            seen.add(item)
                            out["first_occurrences"] += 1
                            out["identical_first"] += int(x == y)
    return out


def _value(metric: dict[str, Any] | None) -> float | None:
    if not metric or metric.get("value") is None:
        return None
    v = float(metric["value"])
    return None if math.isnan(v) else v


def identity(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per metric: samples, identical scores and verdict traces, mean |difference|, both means."""
    shared = [s for s in a if s in b]
    if not shared:
        raise SystemExit("the two runs share no sample id")
    names = sorted({m for s in shared for m in a[s]} & {m for s in shared for m in b[s]})
    out: dict[str, Any] = {}
    for name in names:
        same = same_trace = 0
        diffs: list[float] = []
        va: list[float] = []
        vb: list[float] = []
        for s in shared:
            x, y = _value(a[s].get(name)), _value(b[s].get(name))
            same += int(x == y or (x is not None and y is not None and abs(x - y) < 1e-12))
            same_trace += int(verdict_trace(a[s].get(name, {}).get("trace"))
                              == verdict_trace(b[s].get(name, {}).get("trace")))
            if x is not None and y is not None:
                diffs.append(abs(x - y))
            va += [x] if x is not None else []
            vb += [y] if y is not None else []
        n = len(shared)
        out[name] = {"samples": n, "identical_scores": same, "identical_share": round(same / n, 4),
                     "identical_verdict_traces": same_trace,
                     "mean_abs_difference": round(sum(diffs) / len(diffs), 4) if diffs else None,
                     "mean_a": round(sum(va) / len(va), 4) if va else None,
                     "mean_b": round(sum(vb) / len(vb), 4) if vb else None}
    total = sum(m["samples"] for m in out.values())
    out["all"] = {"samples": total, "identical_scores": sum(m["identical_scores"] for m in out.values()),
                  "identical_share": round(sum(m["identical_scores"] for m in out.values()) / total, 4),
                  "nli_verdicts": item_verdicts(a, b)}
    return out


def table(figures: dict[str, Any]) -> str:
    lines = [f"{'metric':<22}{'identical':>12}{'traces':>9}{'mean |diff|':>13}{'mean A':>9}{'mean B':>9}"]
    for name, m in figures.items():
        if name == "all":
            continue
        diff = "-" if m["mean_abs_difference"] is None else f"{m['mean_abs_difference']:.3f}"
        ma = "-" if m["mean_a"] is None else f"{m['mean_a']:.3f}"
        mb = "-" if m["mean_b"] is None else f"{m['mean_b']:.3f}"
        lines.append(f"{name:<22}{m['identical_scores']:>6}/{m['samples']:<5}{m['identical_verdict_traces']:>9}"
                     f"{diff:>13}{ma:>9}{mb:>9}")
    a = figures["all"]
    lines.append(f"all: {a['identical_scores']}/{a['samples']} sample scores identical ({a['identical_share']:.2f})")
    v = a["nli_verdicts"]
    if v["positions"]:
        lines.append(f"NLI verdicts on the same statement lists: {v['identical']}/{v['positions']} identical; "
                     f"first occurrences of each distinct statement: {v['identical_first']}/{v['first_occurrences']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("run_a", help="the reference run folder (the default setting)")
    parser.add_argument("run_b", help="the run folder of the faster setting")
    parser.add_argument("--json", default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    figures = identity(read_scores(Path(args.run_a)), read_scores(Path(args.run_b)))
    print(table(figures))
    if args.json:
        write_json(args.json, {"command": "python -m benchmarks.identity.run_identity " + " ".join(sys.argv[1:]),
                               "run_a": args.run_a, "run_b": args.run_b, "metrics": figures})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
