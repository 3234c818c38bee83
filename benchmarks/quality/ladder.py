"""The judge ladder's rows, read from the runs' JSON (``localeval agree --pairs --json``), and the 1.5B judge's
small-mode faithfulness over all 50 pairs, pooled from its two halves (the tuning run of ``small_judge.py`` and
the held-out run of ``localeval agree``), which asked the same prompts in the same mode.

    python -m benchmarks.quality.ladder benchmarks/quality/results/ladder_*.json
    python -m benchmarks.quality.ladder --pool benchmarks/quality/results/small_judge_ff_tune_k3.json \
        benchmarks/quality/results/small_judge_ff_heldout_k3.json

Each row: the judge, the mode, the file, hard and soft pairwise accuracy with a 95% bootstrap interval (a tie or
NaN counts half), win / loss / tie, and seconds a pair (the file's wall time over its pairs, model load excluded).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from localeval.agree.pair_count import PairCount, count_pairs


def _figure(count: PairCount) -> str:
    low, high = count.interval() or (float("nan"), float("nan"))
    ties = count.ties + count.nan_pairs
    return f"{count.accuracy:.2f} [{low:.2f}, {high:.2f}] ({count.wins} / {count.losses} / {ties})"


def _count(raw: dict[str, int]) -> PairCount:
    return PairCount(raw["wins"], raw["losses"], raw["ties"], raw["nan_pairs"])


def rows(path: Path) -> list[str]:
    """One markdown row per file of an ``agree --pairs --json`` result."""
    run = json.loads(path.read_text())["pairs"]
    judge = str(run["judge"]).split(":")[1].split("@")[0]
    mode = run["settings"].get("judge_mode", "ragas")
    out = []
    for f in run["files"]:
        soft = _figure(_count(f["soft_count"])) if f.get("soft_count") else "-"
        pairs = len(f["scores"])
        out.append(f"| {judge} | {mode} | {f['file'].removesuffix('.csv')} | {_figure(_count(f['count']))} | {soft} "
                   f"| {f['wall_seconds'] / pairs:.1f} | `{path.name}` |")
    return out


def pool(tuning: Path, held_out: Path) -> str:
    """The 50-pair figure of the small mode from its tuning half (``small_judge.py``) and held-out half."""
    samples: list[dict[str, Any]] = json.loads(tuning.read_text())["samples"]
    hard = [s["score"] if isinstance(s["score"], float) else None for s in samples]
    soft = [s["trace"].get("soft_score") for s in samples]
    good, bad, soft_good, soft_bad = hard[0::2], hard[1::2], soft[0::2], soft[1::2]
    tuned = json.loads(tuning.read_text())
    seconds = float(tuned["lines"][-1].split(" s,")[0])
    second = json.loads(held_out.read_text())["pairs"]["files"][0]
    good += [g for g, _ in second["scores"]]
    bad += [b for _, b in second["scores"]]
    soft_good += [g for g, _ in second["soft_scores"]]
    soft_bad += [b for _, b in second["soft_scores"]]
    seconds += second["wall_seconds"]
    return (f"| qwen2.5-coder-1.5b-instruct | small | ff | {_figure(count_pairs(good, bad))} | "
            f"{_figure(count_pairs(soft_good, soft_bad))} | {seconds / len(good):.1f} | "
            f"`{tuning.name}` + `{held_out.name}` |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", type=Path, help="agree --pairs --json results")
    parser.add_argument("--pool", nargs=2, type=Path, metavar=("TUNING", "HELD_OUT"))
    args = parser.parse_args()
    print("| judge | mode | file | hard (win / loss / tie) | soft | seconds a pair | result |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for path in args.runs:
        print("\n".join(rows(path)))
    if args.pool:
        print(pool(*args.pool))


if __name__ == "__main__":
    main()
