"""Judge threads on a shared CPU: the same asks timed with 1 thread, 2 threads, and 2 passive-waiting threads.

    python -m benchmarks.speed.threads --asks 8 [--settings 1,2,2-passive,default]

Each setting runs in a fresh subprocess (``OMP_WAIT_POLICY`` is read once, when torch starts its
thread pool), first on the machine as it is ("idle"), then beside a second torch process that
multiplies matrices without a pause ("busy", ``--load-threads`` threads, OpenMP's default wait
policy). "default" is localeval's own choice (no ``--threads``). The workload is fixed: the first
asks of faithfulness and context precision on ``examples/rag_demo.jsonl`` (``--asks`` of them), one
engine call, no cache, through the transformers engine and the bundled judge. Prints a table and
writes ``benchmarks/speed/results/threads.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.harness.bench import DEFAULT_JUDGE, REPO, describe_machine, machine_line, model_path, write_json

RESULTS = Path(__file__).resolve().parent / "results"
SETTINGS: dict[str, tuple[str, int, str | None]] = {  # name: label, threads (0: localeval's default), policy
    "1": ("threads=1", 1, None),
    "2": ("threads=2", 2, None),
    "2-passive": ("threads=2, OMP_WAIT_POLICY=PASSIVE", 2, "PASSIVE"),
    "default": ("localeval's default (no --threads)", 0, None),
}
LOAD = """
import torch, sys
torch.set_num_threads(int(sys.argv[1]))
a = torch.randn(768, 768)
while True:
    a = torch.tanh(a @ a)
"""


def requests(count: int) -> list[Any]:
    """The first asks of faithfulness and context precision on the demo data, as engine requests."""
    from localeval.data import load_samples
    from localeval.metrics.registry import parse_metrics
    from localeval.scheduler import Scheduler

    samples = load_samples(REPO / "examples" / "rag_demo.jsonl")
    render = Scheduler(None, progress=False)
    out = []
    for spec in parse_metrics("faithfulness,context_precision"):
        for sample in samples:
            first = next(spec.steps(sample, {}))
            out += [render.requests.request(ask) for ask in (first if isinstance(first, list) else [first])]
    return out[:count]


def child(args: argparse.Namespace) -> None:
    """One setting, in this process: load the judge, answer the asks once, print one JSON line."""
    if args.threads:  # torch first: localeval then leaves OpenMP's wait policy as this setting has it
        import torch
    from localeval.engine.transformers import TransformersEngine

    started = time.perf_counter()
    engine = TransformersEngine(model_path(args.judge), threads=args.threads or None)
    import torch

    threads = torch.get_num_threads()
    loaded = time.perf_counter()
    asks = requests(args.asks)
    load_average = os.getloadavg()[0]
    results = engine.generate(asks)
    seconds = time.perf_counter() - loaded
    print(json.dumps({
        "load_seconds": round(loaded - started, 2), "seconds": round(seconds, 2), "asks": len(asks),
        "answer_tokens": sum(c.completion_tokens for r in results for c in r.choices),
        "load_average_at_start": round(load_average, 2), "torch_threads": threads,
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
    }))


def run_setting(args: argparse.Namespace, threads: int, policy: str | None, busy: bool) -> dict[str, Any]:
    """Time one setting in a fresh process, beside the matmul load when ``busy``."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("OMP_WAIT_POLICY", None)
    env.pop("OMP_NUM_THREADS", None)
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    load = None
    if busy:
        load_env = {**os.environ, "OMP_NUM_THREADS": str(args.load_threads)}
        load_env.pop("OMP_WAIT_POLICY", None)
        load = subprocess.Popen([sys.executable, "-c", LOAD, str(args.load_threads)], env=load_env)
        time.sleep(3)  # let it start spinning
    command = [sys.executable, "-m", "benchmarks.speed.threads", "--child", "--threads", str(threads),
               "--asks", str(args.asks), "--judge", args.judge]
    try:
        done = subprocess.run(command, env=env, cwd=REPO, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"seconds": None, "note": f"stopped after {args.timeout} s"}
    finally:
        if load is not None:
            load.kill()
            load.wait()
    if done.returncode != 0:
        return {"seconds": None, "note": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def table(rows: list[dict[str, Any]], asks: int, timeout: int) -> str:
    def cell(r: dict[str, Any]) -> str:
        return f"{r['seconds']:.1f} s ({r['seconds'] / asks:.1f}/ask)" if r["seconds"] is not None else f">{timeout} s"

    width = max(len(r["setting"]) for r in rows)
    lines = [f"{'setting':<{width}}  {'idle':>20}  {'busy':>20}  busy/idle"]
    for r in rows:
        idle, busy = r["idle"], r["busy"]
        ratio = f"{busy['seconds'] / idle['seconds']:.1f}x" if idle["seconds"] and busy["seconds"] else "-"
        lines.append(f"{r['setting']:<{width}}  {cell(idle):>20}  {cell(busy):>20}  {ratio:>9}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judge", default=DEFAULT_JUDGE, help="local judge model folder")
    parser.add_argument("--asks", type=int, default=8, help="asks in the workload (at most 18)")
    parser.add_argument("--load-threads", type=int, default=1, help="threads of the busy process")
    parser.add_argument("--timeout", type=int, default=300, help="seconds before a setting is stopped")
    parser.add_argument("--settings", default=",".join(SETTINGS),
                        help=f"which settings, comma-separated (default: all of {', '.join(SETTINGS)})")
    parser.add_argument("--out", default=str(RESULTS / "threads.json"))
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args)
        return 0
    machine = describe_machine()
    rows = []
    chosen = [name.strip() for name in args.settings.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in SETTINGS]
    if unknown:
        parser.error(f"unknown settings {', '.join(unknown)}; choose from {', '.join(SETTINGS)}")
    for label, threads, policy in (SETTINGS[name] for name in chosen):
        row: dict[str, Any] = {"setting": label, "threads": threads, "omp_wait_policy": policy}
        for case in ("idle", "busy"):
            row[case] = run_setting(args, threads, policy, busy=case == "busy")
            print(f"{label}, {case}: {row[case]}", file=sys.stderr)
        rows.append(row)
    print(machine_line(machine))
    print(f"{args.asks} asks (faithfulness and context precision, demo data); busy: a {args.load_threads}-thread "
          "matmul process beside the judge\n")
    print(table(rows, args.asks, args.timeout))
    write_json(args.out, {"command": " ".join(sys.argv), "machine": machine, "asks": args.asks,
                          "load_threads": args.load_threads, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
