"""Tune the small-judge mode's faithfulness on WikiEval pairs: one variant per run, each verdict's p(1) kept.

    python -m benchmarks.quality.small_judge --judge qwen2.5-coder-1.5b-instruct --limit 25 --k 3 \
        --cache C.sqlite --out V.json

Scores ``ff.csv`` questions ``offset`` .. ``offset + limit`` with ``faithfulness`` in the small-judge mode (``k``
closest sentences, ``near`` neighbours of each, ``votes``), soft (p(1) at every verdict), and prints the pairwise
accuracy of the hard score, of the soft score, and of verdicts thresholded at p(1) >= t for a grid of t (fitted
here only on the tuning half; ``--threshold`` applies a fitted one). ``localeval agree --pairs --judge-mode small``
reports the chosen variant the way users run it.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import time
from dataclasses import replace
from pathlib import Path

from localeval import api
from localeval.agree.pair_count import count_pairs
from localeval.agree.pair_files import default_pairs_folder, pair_samples, read_pairs
from localeval.config import JudgeOptions
from localeval.metrics.definition import MetricSpec
from localeval.metrics.faithfulness import supported_ratio
from localeval.metrics.faithfulness_small import faithfulness_small
from localeval.metrics.table import METRICS
from localeval.model_folders import resolve_model
from localeval.prompts.base import Settings
from localeval.scheduler import Scheduler
from localeval.store.cache import JudgeCache

THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(1, 20))


def _line(name: str, good: list, bad: list) -> tuple[str, float]:
    count = count_pairs(good, bad)
    low, high = count.interval() or (float("nan"), float("nan"))
    text = f"{name}: {count.accuracy:.2f} [{low:.2f}, {high:.2f}] ({count.wins}-{count.losses}-{count.ties})"
    return text, count.accuracy


def _thresholded(p1s: list, t: float) -> list:
    return [supported_ratio([float(p >= t) for p in p1]) if p1 else None for p1 in p1s]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judge", required=True)
    parser.add_argument("--embedder", default=None)
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument("--limit", type=int, default=25)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--near", type=int, default=0)
    parser.add_argument("--votes", type=int, default=1)
    parser.add_argument("--threshold", type=float, default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cache", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    path = default_pairs_folder() / "ff.csv"
    pairs = read_pairs(path)[args.offset:][:args.limit]
    samples = pair_samples("ff", pairs)
    base = METRICS["faithfulness"]
    steps = functools.partial(faithfulness_small, k=args.k, near=args.near)
    spec = MetricSpec("faithfulness", "faithfulness", replace(base, steps=steps, modes={}), {})
    settings = Settings(soft=True, votes=args.votes)
    engine = api.load_judge(resolve_model(args.judge, "judge"), JudgeOptions(threads=args.threads))
    emb = api.load_embedder(args.embedder)
    store = JudgeCache(Path(args.cache))
    started = time.perf_counter()
    try:
        output = Scheduler(engine, emb, store, settings, progress=True).run(samples, [spec])
    finally:
        store.close()
    seconds = time.perf_counter() - started
    outcomes, traces = output.outcomes["faithfulness"], output.traces["faithfulness"]
    p1s = [t.get("p1") for t in traces]
    soft = [t.get("soft_score") for t in traces]
    lines = [_line("hard", outcomes[0::2], outcomes[1::2])[0], _line("soft", soft[0::2], soft[1::2])[0]]
    grid = {t: _line(f"p(1) >= {t}", (v := _thresholded(p1s, t))[0::2], v[1::2]) for t in THRESHOLDS}
    best = max(grid, key=lambda t: (grid[t][1], -abs(t - 0.5)))
    lines.append(f"best threshold on these pairs: {grid[best][0]}")
    if args.threshold is not None:
        v = _thresholded(p1s, args.threshold)
        lines.append(_line(f"given p(1) >= {args.threshold}", v[0::2], v[1::2])[0])
    lines.append(f"{seconds:.0f} s, {seconds / len(pairs):.1f} s a pair, {output.engine_calls} engine calls")
    print("\n".join(lines))
    sha256 = hashlib.sha256(path.read_bytes()).hexdigest()  # which labels the lines were counted against
    record = {"args": vars(args), "sha256": sha256, "lines": lines, "grid": {str(t): g[0] for t, g in grid.items()},
              "samples": [{"id": s.id, "score": o if isinstance(o, float) else str(o), "trace": t}
                          for s, o, t in zip(samples, outcomes, traces, strict=True)]}
    Path(args.out).write_text(json.dumps(record, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()
