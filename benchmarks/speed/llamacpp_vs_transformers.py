"""One judge, two engines: its GGUF as it is through the managed llama-server (``--engine llama-cpp``) against the
same judge dequantized in the transformers engine (bfloat16 and float32), on the same ClapNQ samples.

    .venv/bin/python -m benchmarks.speed.llamacpp_vs_transformers --judge qwen2.5-coder-1.5b-instruct --n 10

Each engine scores the samples with the six metrics of ``speed_vs_ragas.py`` in a whole ``localeval evaluate``
process of its own, one after the other, no judge cache, ``--threads`` threads each (``llama-cpp-deterministic``:
``--deterministic``, one slot without the prefix cache, to see what that costs). Printed per engine: wall and
engine seconds, completion tokens and tokens a second, the peak memory of the process tree (localeval and, for
llama-cpp, its llama-server: the largest sum of their resident sets, sampled every 0.2 s), parse failures and
engine errors; then how often each pair of engines gave the same score and the same verdicts (position by position
in each verdict list where both lists have the same length). Writes
``benchmarks/speed/results/llamacpp_vs_transformers_<judge>_n<N>.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil

from benchmarks.harness.bench import describe_machine, machine_line, write_json
from benchmarks.harness.clapnq import build_samples

RESULTS = Path(__file__).resolve().parent / "results"
METRICS = ("faithfulness", "answer_relevancy", "context_precision", "context_recall", "factual_correctness",
           "noise_sensitivity")
ENGINES = {"llama-cpp": ["--engine", "llama-cpp"],
           "llama-cpp-deterministic": ["--engine", "llama-cpp", "--deterministic"],
           "transformers-bfloat16": ["--engine", "transformers", "--dtype", "bfloat16"],
           "transformers-float32": ["--engine", "transformers", "--dtype", "float32"]}


def peak_memory(pid: int, stop: threading.Event, peak: list[int]) -> None:
    """The largest sum of resident memory of ``pid`` and its descendants, sampled until ``stop``."""
    while not stop.is_set():
        try:
            root = psutil.Process(pid)
            total = sum(p.memory_info().rss for p in [root, *root.children(recursive=True)])
            peak[0] = max(peak[0], total)
        except psutil.Error:
            pass
        stop.wait(0.2)


def run_engine(name: str, data: Path, out: Path, judge: str, threads: int) -> dict[str, Any]:
    """One whole ``localeval evaluate`` with engine ``name``: its figures from summary.json and the process tree."""
    command = [sys.executable, "-m", "localeval", "evaluate", str(data), "--out", str(out), "--no-cache",
               "--metrics", ",".join(METRICS), "--judge", judge, "--threads", str(threads), "--no-progress",
               *ENGINES[name]]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stop, peak = threading.Event(), [0]
    watcher = threading.Thread(target=peak_memory, args=(process.pid, stop, peak), daemon=True)
    watcher.start()
    _, stderr = process.communicate()
    wall = time.perf_counter() - started
    stop.set()
    watcher.join()
    if process.returncode != 0:
        raise SystemExit(f"{name} failed (exit {process.returncode}):\n{stderr[-3000:]}")
    summary = json.loads((out / "summary.json").read_text())
    total = summary["total"]
    failures = {reason: sum(m["nan_reasons"].get(reason, 0) for m in summary["metrics"].values())
                for reason in ("invalid_output", "engine_error")}
    return {"engine": name, "judge": summary["run"]["judge"], "wall_seconds": round(wall, 1),
            "engine_seconds": total["engine_seconds"], "completion_tokens": total["completion_tokens"],
            "prompt_tokens": total["prompt_tokens"],
            "tokens_per_second": round(total["completion_tokens"] / max(total["engine_seconds"], 1e-9), 1),
            "peak_memory_gb": round(peak[0] / 1e9, 2), "parse_failures": failures["invalid_output"],
            "engine_errors": failures["engine_error"], "nan_share": {k: m["nan_share"] for k, m in
                                                                    summary["metrics"].items()},
            "means": {k: m["mean"] for k, m in summary["metrics"].items()}}


def rows(out: Path) -> dict[tuple[str, str], dict[str, Any]]:
    found = {}
    for line in (out / "scores.jsonl").read_text().splitlines():
        row = json.loads(line)
        for metric, value in row["metrics"].items():
            found[row["id"], metric] = value
    return found


def agreement(a: Path, b: Path) -> dict[str, Any]:
    """How often two runs gave the same score, and the same verdicts where their lists line up."""
    left, right = rows(a), rows(b)
    same_score = sum(1 for k in left if k in right and left[k]["value"] == right[k]["value"])
    aligned = same = 0
    for key in left:
        x = (left[key].get("trace") or {}).get("verdicts")
        y = (right.get(key, {}).get("trace") or {}).get("verdicts")
        if isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            aligned += len(x)
            same += sum(1 for p, q in zip(x, y, strict=True) if p == q)
    return {"scores": len(left), "same_score": same_score, "verdicts_aligned": aligned, "same_verdict": same,
            "verdict_agreement": round(same / aligned, 3) if aligned else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judge", default="smollm2-135m-instruct", help="a prepared judge name (its folder and "
                                                                           "its GGUF; default: the bundled judge)")
    parser.add_argument("--n", type=int, default=10, help="ClapNQ samples")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--engines", default="llama-cpp,transformers-bfloat16,transformers-float32",
                        help=f"which, in order, of {', '.join(ENGINES)}")
    parser.add_argument("--work", help="a folder to keep the runs in; an engine whose run is there already is not "
                                       "run again (its figures are read back), so engines can be run one at a time")
    args = parser.parse_args()
    machine = describe_machine()
    print(f"machine: {machine_line(machine)}")
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="llamacpp-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    data = work / "samples.jsonl"
    if not data.exists():
        data.write_text("".join(json.dumps(s) + "\n" for s in build_samples(args.n)))
    results = []
    for name in args.engines.split(","):
        kept = work / name / "figures.json"
        figures = json.loads(kept.read_text()) if kept.exists() else run_engine(name, data, work / name,
                                                                                   args.judge, args.threads)
        kept.write_text(json.dumps(figures, indent=1) + "\n")
        results.append(figures)
        print(f"{name:22} wall {figures['wall_seconds']:7.1f} s  engine {figures['engine_seconds']:7.1f} s  "
              f"{figures['completion_tokens']:6d} tokens  {figures['tokens_per_second']:6.1f} tok/s  peak "
              f"{figures['peak_memory_gb']:5.2f} GB  parse failures {figures['parse_failures']}  engine errors "
              f"{figures['engine_errors']}", flush=True)
    pairs = {}
    for a, b in itertools.combinations([r["engine"] for r in results], 2):
        pairs[f"{a} vs {b}"] = agreement(work / a, work / b)
        said = pairs[f"{a} vs {b}"]
        print(f"{a} vs {b}: same score {said['same_score']}/{said['scores']}, same verdict "
              f"{said['same_verdict']}/{said['verdicts_aligned']}")
    write_json(RESULTS / f"llamacpp_vs_transformers_{args.judge}_n{args.n}.json",
               {"command": " ".join(sys.argv), "machine": machine, "n": args.n, "threads": args.threads,
                "date": time.strftime("%Y-%m-%d"), "engines": results, "agreement": pairs})


if __name__ == "__main__":
    main()
