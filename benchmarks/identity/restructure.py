"""Whether a change of code kept every answer: the same runs before and after, compared byte for byte.

    python -m benchmarks.identity.restructure run OUT          # score the cases below into OUT
    python -m benchmarks.identity.restructure compare A B      # say which files of two OUTs differ

Each case is one ``localeval evaluate`` of data the repository holds (the demo and test fixtures) with the
bundled judge in float32 on one thread (the same answers on any run of one machine). Per case OUT keeps
``scores.jsonl`` as written, ``summary.json`` without what changes from run to run (start time, machine,
seconds, the cache's path), ``chunks.jsonl`` without the data file's path and time, and the judge cache's keys
(answers and embeddings), sorted. ``compare`` exits 1 when any file differs.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
AGENT_METRICS = ("tool_call_accuracy,tool_call_f1,agent_goal_accuracy_with_reference,"
                 "agent_goal_accuracy_without_reference,topic_adherence")
CASES: dict[str, tuple[str, list[str]]] = {
    "demo": ("examples/rag_demo.jsonl", ["--metrics", "faithfulness,context_precision,answer_relevancy,"
                                                      "context_recall,factual_correctness,answer_correctness,"
                                                      "mrr,ndcg:k=2"]),
    "demo_chunked": ("examples/rag_demo.jsonl", ["--metrics", "faithfulness,context_precision", "--chunk-size", "2"]),
    "hostile_soft": ("tests/fixtures/hostile.jsonl", ["--metrics", "faithfulness,context_recall,noise_sensitivity,"
                                                                   "exact_match", "--soft"]),
    "conversations": ("tests/fixtures/ragas_conversations.jsonl", ["--metrics", AGENT_METRICS]),
}
VOLATILE_RUN = ("started", "machine", "cache")  # summary.json's run record: differs on every run


def _strip(value: Any) -> Any:
    """``value`` without times: keys holding seconds, dates or a run's own paths."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items()
                if not any(word in k for word in ("seconds", "elapsed", "wall", "per_sec", "modified_ns"))
                and k not in ("path",)}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _summary(run: Path) -> str:
    summary = json.loads((run / "summary.json").read_text())
    for key in VOLATILE_RUN:
        summary.get("run", {}).pop(key, None)
    return json.dumps(_strip(summary), indent=1, sort_keys=True) + "\n"


def _keys(run: Path) -> str:
    with sqlite3.connect(run / "judge.sqlite") as db:
        rows = [f"{table} {key}" for table in ("answers", "embeddings")
                for (key,) in db.execute(f"SELECT key FROM {table} ORDER BY key")]
    return "\n".join(rows) + "\n"


def run(out: Path) -> None:
    """Score every case into ``out/CASE`` and keep what must not change."""
    for name, (data, flags) in CASES.items():
        folder = out / "runs" / name
        command = [sys.executable, "-m", "localeval", "evaluate", str(ROOT / data), "--out", str(folder),
                   "--dtype", "float32", "--threads", "1", "--no-progress", "--no-report", "--replace", *flags]
        subprocess.run(command, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        kept = out / name
        kept.mkdir(parents=True, exist_ok=True)
        (kept / "scores.jsonl").write_bytes((folder / "scores.jsonl").read_bytes())
        (kept / "summary.json").write_text(_summary(folder))
        (kept / "cache_keys.txt").write_text(_keys(folder))
        lines = [json.dumps(_strip(json.loads(line)), sort_keys=True)
                 for line in (folder / "chunks.jsonl").read_text().splitlines()]
        (kept / "chunks.jsonl").write_text("\n".join(lines) + "\n")


def compare(before: Path, after: Path) -> int:
    """Print each kept file as identical or not; 1 when any differs."""
    differ = 0
    for name in CASES:
        for file in ("scores.jsonl", "summary.json", "cache_keys.txt", "chunks.jsonl"):
            a, b = (before / name / file).read_bytes(), (after / name / file).read_bytes()
            same = a == b
            differ += not same
            lines = a.count(b"\n")
            print(f"{name:14} {file:14} {'identical' if same else 'DIFFERS':9} ({len(a)} bytes, {lines} lines)")
    print("all identical" if not differ else f"{differ} files differ")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="verb", required=True)
    sub.add_parser("run").add_argument("out", type=Path)
    both = sub.add_parser("compare")
    both.add_argument("before", type=Path)
    both.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.verb == "run":
        run(args.out)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
