"""Bulk runs: wall time, per-sample overhead and peak memory of chunked runs at 10k, 100k and 1M samples.

    python -m benchmarks.speed.bulk                               # 10k, 100k, 1M samples, in this process's machine
    python -m benchmarks.speed.bulk --sizes 10000,50000           # other sizes
    python -m benchmarks.speed.bulk --sizes 20000 --replicas 1,2,4   # chunks through 1, 2, 4 scripted Ray replicas

The scripted judge (``rule_script``, no model) scores faithfulness and context precision on generated
samples with 3 contexts each, written as JSON lines into a temporary folder. Each size runs in a fresh
subprocess through the Python API into a run folder with its judge cache (what a real bulk run does); the
child reports its wall time (the ``evaluate`` call) and its peak resident memory (``ru_maxrss``).
Writes ``benchmarks/speed/results/bulk.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.harness.bench import REPO, describe_machine, machine_line, write_json

RESULTS = Path(__file__).resolve().parent / "results"

METRICS = "faithfulness,context_precision"
TOPICS = ("river", "bridge", "harbour", "market", "tower", "library", "garden")


def sample(i: int) -> dict[str, Any]:
    """One generated sample: a question, a two-sentence response, 3 contexts (one unrelated), a reference."""
    topic = TOPICS[i % len(TOPICS)]
    return {
        "id": f"s{i}",
        "user_input": f"What is known about the {topic} of town {i}?",
        "response": f"Town {i} has an old {topic} near the square. The {topic} of town {i} opened in {1800 + i % 200}.",
        "retrieved_contexts": [f"Town {i} has an old {topic} near the square.",
                               f"The {topic} of town {i} opened in {1800 + i % 200} after years of work.",
                               "Bananas are yellow fruit grown in warm places."],
        "reference": f"Town {i} has an old {topic}, opened in {1800 + i % 200}.",
    }


def write_data(path: Path, n: int) -> Path:
    """``n`` samples as JSON lines, written in blocks."""
    with path.open("w", encoding="utf-8") as handle:
        for start in range(0, n, 10_000):
            handle.write("".join(json.dumps(sample(i)) + "\n" for i in range(start, min(n, start + 10_000))))
    return path


def unrecorded_engine() -> Any:
    """The rule-script judge, keeping no record of the requests it got (ScriptedEngine keeps all, for tests)."""
    from localeval.engine.scripted import ScriptedEngine, rule_script

    class Unrecorded(ScriptedEngine):
        def generate(self, requests: Any, on_result: Any = None) -> Any:
            try:
                return super().generate(requests, on_result)
            finally:
                self.calls.clear()

    return Unrecorded(rule_script)


def child(args: argparse.Namespace) -> int:
    """Run one evaluation (in a fresh process) and print what it measured as one JSON line."""
    import localeval

    engine: Any = unrecorded_engine()
    if args.replica_count:
        import ray

        from localeval.engine.ray_engine import RayEngine

        ray.init(num_cpus=max(2, args.replica_count + 1), include_dashboard=False, log_to_driver=False)
        engine = RayEngine(args.replica_count, unrecorded_engine)  # defined in __main__: travels by value
    started = time.perf_counter()
    result = localeval.evaluate(args.data, metrics=METRICS, judge=engine, out=args.run, progress=args.progress,
                                report=False, chunk_size=args.chunk_size, cache=not args.no_cache)
    wall = time.perf_counter() - started
    summary = json.loads((Path(args.run) / "summary.json").read_text())  # what the run wrote
    total = summary["total"]
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    run_bytes = sum(f.stat().st_size for f in Path(args.run).iterdir() if f.is_file())
    print(json.dumps({"samples": total["samples"], "wall_seconds": round(wall, 2),
                      "ms_per_sample": round(1000 * wall / total["samples"], 4), "peak_mb": round(peak_kb / 1024, 1),
                      "judge_calls": total["judge_calls"], "chunks": result.info.get("chunks"),
                      "run_folder_mb": round(run_bytes / 2**20, 1),
                      "means": {m: s["mean"] for m, s in summary["metrics"].items()}}))
    return 0


def run_size(n: int, folder: Path, args: argparse.Namespace, replicas: int) -> dict[str, Any]:
    """Generate the data, then measure one run of it in a fresh subprocess."""
    data = write_data(folder / f"data_{n}.jsonl", n)
    command = [sys.executable, "-m", "benchmarks.speed.bulk", "--child", "--data", str(data),
               "--run", str(folder / f"run_{n}_{replicas}"), "--replica-count", str(replicas)]
    command += ["--chunk-size", str(args.chunk_size)] if args.chunk_size else []
    command += ["--no-cache"] if args.no_cache else []
    command += ["--progress"] if args.progress else []
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, check=False,
                          env={**__import__("os").environ, "PYTHONPATH": str(REPO)})
    if done.returncode != 0:
        raise SystemExit(f"the run of {n} samples failed:\n{done.stderr[-3000:]}")
    sys.stderr.write(done.stderr)
    cell: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    data.unlink()
    return {"replicas": replicas, **cell}


def table(cells: list[dict[str, Any]]) -> str:
    head = ("| samples | Ray replicas | wall | per sample | peak memory | chunks | run folder |\n"
            "| --- | --- | --- | --- | --- | --- | --- |")
    rows = [f"| {c['samples']:,} | {c['replicas'] or 'none'} | {c['wall_seconds']:,.1f} s "
            f"| {c['ms_per_sample']:.3f} ms | {c['peak_mb']:,.0f} MB "
            f"| {c['chunks']['count']} x {c['chunks']['size']:,} | {c['run_folder_mb']:,.0f} MB |" for c in cells]
    return "\n".join([head, *rows])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated sample counts")
    parser.add_argument("--chunk-size", type=int, default=None, help="samples per chunk (default: the engine's)")
    parser.add_argument("--replicas", default="0", help="comma-separated Ray replica counts; 0: no Ray (default)")
    parser.add_argument("--no-cache", action="store_true", help="run without the judge cache")
    parser.add_argument("--progress", action="store_true", help="show the children's chunk lines")
    parser.add_argument("--out", default=str(RESULTS / "bulk.json"))
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--run", help=argparse.SUPPRESS)
    parser.add_argument("--replica-count", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args)
    machine = describe_machine()
    print(f"machine: {machine_line(machine)}", flush=True)
    cells: list[dict[str, Any]] = []
    grid = [(int(n), int(r)) for r in args.replicas.split(",") for n in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="localeval-bulk-") as tmp:
        for n, replicas in grid:
            cells.append(run_size(n, Path(tmp), args, replicas))
            c = cells[-1]
            print(f"{n:,} samples, {replicas} replicas: {c['wall_seconds']:.1f} s, {c['ms_per_sample']:.3f} ms/sample, "
                  f"peak {c['peak_mb']:.0f} MB", flush=True)
            write_json(args.out, {"command": "python -m benchmarks.speed.bulk " + " ".join(sys.argv[1:] if argv is None
                                                                                      else argv),
                                  "machine": machine, "metrics": METRICS.split(","), "contexts_per_sample": 3,
                                  "cache": not args.no_cache, "partial": len(cells) < len(grid), "cells": cells})
    print()
    print(table(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
