"""The judge ladder's rows, read from the runs' JSON (``localeval agree --pairs --json``), and the 1.5B judge's
small-mode faithfulness over all 50 pairs, pooled from its two halves (the tuning run of ``small_judge.py`` and
the held-out run of ``localeval agree``), which asked the same prompts in the same mode.

Every figure is counted against the labels localeval ships (``wikieval_pairs/NOTICE.md``: the better candidate
by WikiEval's design). A result made on the files as first copied, whose label column gives the candidates'
shuffled positions instead, is recognised by the file's SHA-256 (or by having none: results before 2026-12-05)
and its pairs are turned round where the better candidate held the first position: the scores are the judge's
own either way, only which of the two is the better one changes.

    python -m benchmarks.quality.ladder benchmarks/quality/results/ladder_*.json
    python -m benchmarks.quality.ladder --pool benchmarks/quality/results/small_judge_ff_tune_k3.json \
        benchmarks/quality/results/small_judge_ff_heldout_k3.json

Each row: the judge, the mode, the file, hard and soft pairwise accuracy with a 95% bootstrap interval (a tie or
NaN counts half), win / loss / tie, and seconds a pair (the file's wall time over its pairs, model load excluded).
"""

from __future__ import annotations

import argparse
import csv
import functools
import hashlib
import json
from pathlib import Path
from typing import Any

from localeval.agree.pair_count import PairCount, count_pairs
from localeval.agree.pair_files import default_pairs_folder

SOURCE_SHA256 = {  # the pair files as copied, their label column the shuffled positions (rows 1-50: 0)
    "ff.csv": "14859928621525caf8fa0849c70c3924a2d714d6f9bff65c87211382b0b53881",
    "ar.csv": "f1be98718ac342f362da16fd2bb0f60ab826b355d4877fb9e998f8b900f023cc",
    "cr.csv": "98cff25b61b607ebb782854faa21b9a99a76016e9c6e4d74d8798b1543f6aee5",
}
Scores = list[tuple[float | None, float | None]]


@functools.cache
def _shipped_sha256(file: str) -> str:
    return hashlib.sha256((default_pairs_folder() / file).read_bytes()).hexdigest()


@functools.cache
def _better_first(file: str) -> list[bool]:
    """Per pair of ``file``, whether the better candidate is its first row (``preferences.csv``)."""
    with (default_pairs_folder() / "preferences.csv").open(newline="", encoding="utf-8") as handle:
        return [row["better"] == "first" for row in csv.DictReader(handle) if row["file"] == file]


def relabelled(file: str, scores: Scores, offset: int, sha256: str | None) -> Scores:
    """``scores`` as (better, worse) by the shipped labels, from a result counted against ``sha256``'s labels."""
    if sha256 == _shipped_sha256(file):
        return [tuple(pair) for pair in scores]  # type: ignore[misc]
    if sha256 not in (None, SOURCE_SHA256[file]):
        raise ValueError(f"{file}: the result was counted against a pair file localeval never shipped ({sha256})")
    turn = _better_first(file)[offset:offset + len(scores)]  # as copied, the second row held label 1
    return [(bad, good) if t else (good, bad) for (good, bad), t in zip(scores, turn, strict=True)]


def _figure(count: PairCount) -> str:
    low, high = count.interval() or (float("nan"), float("nan"))
    ties = count.ties + count.nan_pairs
    return f"{count.accuracy:.2f} [{low:.2f}, {high:.2f}] ({count.wins} / {count.losses} / {ties})"


def _counted(f: dict[str, Any], key: str, offset: int) -> PairCount:
    return _of(relabelled(f["file"], f[key], offset, f.get("sha256")))


def rows(path: Path) -> list[str]:
    """One markdown row per file of an ``agree --pairs --json`` result, counted against the shipped labels."""
    data = json.loads(path.read_text())
    run = data.get("pairs", data)  # agree --json, or benchmarks/quality/agreement.py's record
    judge = str(run["judge"]).split(":")[1].split("@")[0]
    mode = run["settings"].get("judge_mode") or "ragas"
    offset = run["settings"].get("offset") or 0
    out = []
    for f in run["files"]:
        soft = _figure(_counted(f, "soft_scores", offset)) if f.get("soft_scores") else "-"
        pairs = len(f["scores"])
        out.append(f"| {judge} | {mode} | {f['file'].removesuffix('.csv')} | {_figure(_counted(f, 'scores', offset))} "
                   f"| {soft} | {f['wall_seconds'] / pairs:.1f} | `{path.name}` |")
    return out


def _of(pairs: Scores) -> PairCount:
    return count_pairs([g for g, _ in pairs], [b for _, b in pairs])


def _tuning(path: Path) -> tuple[Scores, Scores, dict[str, Any], float]:
    """A ``small_judge.py`` result: its (hard, soft) pairs by the shipped labels, its arguments, its seconds."""
    tuned = json.loads(path.read_text())
    hard = [s["score"] if isinstance(s["score"], float) else None for s in tuned["samples"]]
    soft = [s["trace"].get("soft_score") for s in tuned["samples"]]
    args, sha256 = tuned.get("args", {}), tuned.get("sha256")
    offset = int(args.get("offset", 0))
    seconds = float(tuned["lines"][-1].split(" s,")[0])
    return (relabelled("ff.csv", list(zip(hard[0::2], hard[1::2], strict=True)), offset, sha256),
            relabelled("ff.csv", list(zip(soft[0::2], soft[1::2], strict=True)), offset, sha256), args, seconds)


def tuning_row(path: Path) -> str:
    """One row for a ``small_judge.py`` variant (k, near, votes), hard and soft."""
    hard, soft, args, seconds = _tuning(path)
    offset = int(args.get("offset", 0))
    name = f"k={args['k']}, near={args['near']}, votes={args['votes']}"
    return (f"| qwen2.5-coder-1.5b-instruct | small ({name}) | ff {offset + 1}-{offset + len(hard)} | "
            f"{_figure(_of(hard))} | {_figure(_of(soft))} | {seconds / len(hard):.1f} | `{path.name}` |")


def pool(tuning: Path, held_out: Path) -> str:
    """The 50-pair figure of the small mode from its tuning half (``small_judge.py``) and held-out half."""
    hard, soft, _, seconds = _tuning(tuning)
    second = json.loads(held_out.read_text())["pairs"]
    later = second["settings"].get("offset") or 0
    f = second["files"][0]
    hard += relabelled("ff.csv", f["scores"], later, f.get("sha256"))
    soft += relabelled("ff.csv", f["soft_scores"], later, f.get("sha256"))
    seconds += f["wall_seconds"]
    return (f"| qwen2.5-coder-1.5b-instruct | small | ff | {_figure(_of(hard))} | {_figure(_of(soft))} | "
            f"{seconds / len(hard):.1f} | `{tuning.name}` + `{held_out.name}` |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", type=Path, help="agree --pairs --json results")
    parser.add_argument("--tuning", nargs="*", type=Path, default=[], help="small_judge.py results")
    parser.add_argument("--pool", nargs=2, type=Path, metavar=("TUNING", "HELD_OUT"))
    args = parser.parse_args()
    print("| judge | mode | file | hard (win / loss / tie) | soft | seconds a pair | result |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for path in args.runs:
        print("\n".join(rows(path)))
    for path in args.tuning:
        print(tuning_row(path))
    if args.pool:
        print(pool(*args.pool))


if __name__ == "__main__":
    main()
