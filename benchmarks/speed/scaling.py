"""localeval's throughput as the data set grows and as top-k grows (ClapNQ samples).

    python -m benchmarks.speed.scaling --sizes 10,50,200 --top-k 1,3,10 --judge models/smollm2-135m-instruct

Each cell is a fresh run without cache: wall time, samples/s, judge calls (generations), engine
calls (batched rounds) and tokens. The judge and embedder are loaded once and shared by all cells.
Writes ``benchmarks/speed/results/scaling.json`` after every cell (``"partial": true`` until the last).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.harness.bench import add_judge_arguments, describe_machine, localeval_models, machine_line, write_json
from benchmarks.harness.clapnq import build_samples

RESULTS = Path(__file__).resolve().parent / "results"

METRICS = ("faithfulness", "answer_relevancy", "context_precision", "context_recall", "factual_correctness",
           "noise_sensitivity")


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def run_cell(n: int, top_k: int, judge: Any, embedder: Any, args: argparse.Namespace) -> dict[str, Any]:
    import localeval
    from localeval.prompts.base import Settings

    samples = build_samples(n, seed=args.seed, top_k=top_k, wrong_share=args.wrong_share)
    result = localeval.evaluate(samples, metrics=args.metrics.split(","), judge=judge, embedder=embedder,
                                cache=False, progress=False, settings=Settings(merge_repeats=not args.judge_every_copy))
    total = result.summary_dict()["total"]
    summary = result.summary()
    nan = {name: s.nan_count for name, s in summary.items()}
    reasons = {name: dict(s.nan_reasons) for name, s in summary.items() if s.nan_count}
    return {"n": n, "top_k": top_k, "wall_seconds": total["wall_seconds"],
            "samples_per_second": total["samples_per_second"], "judge_calls": total["judge_calls"],
            "engine_calls": total["engine_calls"], "rounds": total["rounds"],
            "prompt_tokens": total["prompt_tokens"], "completion_tokens": total["completion_tokens"],
            "engine_seconds": total["engine_seconds"], "nan_count": nan, "nan_reasons": reasons}


def format_table(cells: list[dict[str, Any]]) -> str:
    head = (f"{'n':>5} {'top-k':>5} {'wall s':>8} {'samples/s':>9} {'s/sample':>8} {'judge calls':>11} "
            f"{'calls/sample':>12} {'engine calls':>12} {'compl tok':>9} {'NaN':>5}")
    lines = [head, "-" * len(head)]
    for c in cells:
        lines.append(f"{c['n']:>5} {c['top_k']:>5} {c['wall_seconds']:>8.1f} {c['samples_per_second']:>9.3f} "
                     f"{c['wall_seconds'] / c['n']:>8.2f} {c['judge_calls']:>11} "
                     f"{c['judge_calls'] / c['n']:>12.1f} {c['engine_calls']:>12} {c['completion_tokens']:>9} "
                     f"{sum(c['nan_count'].values()):>5}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="10,50,200", help="comma-separated sample counts")
    parser.add_argument("--top-k", default="1,3,10", help="comma-separated top-k values")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--wrong-share", type=float, default=0.3)
    parser.add_argument("--metrics", default=",".join(METRICS))
    add_judge_arguments(parser)
    parser.add_argument("--out", default=str(RESULTS / "scaling.json"))
    args = parser.parse_args(argv)

    from localeval.api import load_embedder, load_judge

    machine = describe_machine()
    print(f"machine: {machine_line(machine)}", flush=True)
    judge, embedder, options = localeval_models(args)
    started = time.perf_counter()
    if options is not None:  # load once, not once per cell
        judge, embedder = load_judge(judge, options), load_embedder(embedder)
    load_seconds = time.perf_counter() - started
    cells: list[dict[str, Any]] = []
    grid = [(n, top_k) for top_k in _ints(args.top_k) for n in _ints(args.sizes)]

    def save() -> Path:  # after every cell, so that a stopped run keeps the cells it measured
        return write_json(args.out, {
            "command": "python -m benchmarks.speed.scaling " + " ".join(sys.argv[1:] if argv is None else argv),
            "machine": machine, "judge": getattr(judge, "fingerprint", str(judge)), "engine": args.engine,
            "load_seconds": round(load_seconds, 3), "metrics": args.metrics.split(","),
            "partial": len(cells) < len(grid), "cells": cells,
        })

    for n, top_k in grid:
        cells.append(run_cell(n, top_k, judge, embedder, args))
        c = cells[-1]
        print(f"n={n} top-k={top_k}: {c['wall_seconds']:.1f} s, {c['samples_per_second']:.3f} samples/s, "
              f"{c['judge_calls']} judge calls", flush=True)
        save()
    print()
    print(format_table(cells))
    out = save()
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
