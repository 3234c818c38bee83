"""The server engine on the same asks as the offline vLLM engine (the cost of HTTP), and how full it keeps the
server (its token throughput against a plain load of the same requests at the same concurrency).

    .venv-vllm/bin/python -m benchmarks.speed.server_bench --n 3 [--concurrency 128] [--server-url URL]

1. vLLM's OpenAI server starts on the bundled judge (``vllm_server.py``; or ``--server-url`` names one running,
   its key in LOCALEVAL_SERVER_API_KEY); the server engine scores N ClapNQ samples with the six metrics through
   the scheduler, no cache, each engine call recorded (its asks, its seconds, its completion tokens);
2. a plain load sends each call's requests again, the same bodies, from a pool of as many threads as the engine
   has asks in flight, timed per call (no scheduler, no parsing, no cache);
3. the server stops and the offline vLLM engine, same judge and settings, answers each call's asks, timed.

Embeddings come from localeval's hashing stand-in: the comparison is of the judge alone. Writes
``benchmarks/speed/results/server_bench_n{N}.json``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks.harness.bench import DEFAULT_JUDGE, describe_machine, machine_line, model_path, write_json
from benchmarks.harness.clapnq import build_samples
from benchmarks.harness.vllm_server import add_server_arguments, server_for
from localeval.api import as_samples
from localeval.embed import HashEmbedder
from localeval.engine.base import Request, Result
from localeval.metrics.registry import parse_metrics
from localeval.scheduler import Scheduler

RESULTS = Path(__file__).resolve().parent / "results"

METRICS = ("faithfulness", "answer_relevancy", "context_precision", "context_recall", "factual_correctness",
           "noise_sensitivity")


class Recorded:
    """An engine passing each call to ``inner``, keeping the call's asks, seconds and completion tokens."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.fingerprint, self.context_window = inner.fingerprint, inner.context_window
        self.calls: list[tuple[list[Request], float, int]] = []

    def count_prompt_tokens(self, request: Request) -> int:
        return int(self.inner.count_prompt_tokens(request))

    def generate(self, requests: list[Request], on_result: Any = None) -> list[Result]:
        started = time.perf_counter()
        results = self.inner.generate(requests, on_result)
        self.calls.append((list(requests), time.perf_counter() - started, _tokens(results)))
        return list(results)


def _tokens(results: list[Result]) -> int:
    return sum(c.completion_tokens for r in results for c in r.choices)


def plain_load(engine: Any, calls: list[tuple[list[Request], float, int]], concurrency: int) -> tuple[float, int]:
    """Each call's requests sent again as they were, ``concurrency`` at a time: (seconds, completion tokens)."""
    server = engine.servers[0]
    seconds, tokens = 0.0, 0
    for requests, _, _ in calls:
        bodies = [engine.dialect.body(server.identity.model, r, r.n if r.temperature > 0 else 1, r.seed, r.soft,
                                      server.identity.window) for r in requests]
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            replies = list(pool.map(lambda body: server.transport.post(engine.dialect.path, body), bodies))
        seconds += time.perf_counter() - started
        tokens += sum(int((reply.get("usage") or {}).get("completion_tokens") or 0) for reply in replies)
    return seconds, tokens


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n", type=int, default=3, help="ClapNQ samples")
    parser.add_argument("--judge", default=DEFAULT_JUDGE)
    parser.add_argument("--concurrency", type=int, default=128, help="asks in flight (the server engine's default)")
    parser.add_argument("--server-url", help="a server already running (else one is started here)")
    add_server_arguments(parser)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    from localeval.engine.server import ServerEngine

    machine = describe_machine()
    samples = as_samples(build_samples(args.n, seed=0, top_k=3))
    server = None
    if args.server_url is None:
        server = server_for(args, model_path(args.judge), RESULTS / f"server_bench_n{args.n}.log")
        server.start()
        os.environ["LOCALEVAL_SERVER_API_KEY"] = server.key
    try:
        engine = ServerEngine(args.server_url or server.url, concurrency=args.concurrency).connect()  # type: ignore[union-attr]
        recorded = Recorded(engine)
        started = time.perf_counter()
        Scheduler(recorded, HashEmbedder(), progress=False).run(samples, parse_metrics(list(METRICS)))
        scoring = time.perf_counter() - started
        plain_seconds, plain_tokens = plain_load(engine, recorded.calls, args.concurrency)
        engine.close()
    finally:
        if server is not None:
            server.stop()
    from localeval.engine.vllm_engine import VLLMEngine

    offline = VLLMEngine(model_path(args.judge), dtype=args.dtype, max_model_len=args.window, seed=0, progress=False,
                         enforce_eager=not args.compile)
    offline_seconds, offline_tokens = 0.0, 0
    for requests, _, _ in recorded.calls:
        began = time.perf_counter()
        offline_tokens += _tokens(offline.generate(requests))
        offline_seconds += time.perf_counter() - began
    offline.close()
    engine_seconds = sum(s for _, s, _ in recorded.calls)
    engine_tokens = sum(t for _, _, t in recorded.calls)
    rows = {
        "server engine": (engine_seconds, engine_tokens),
        "plain load, same requests and concurrency": (plain_seconds, plain_tokens),
        "offline vLLM engine, same asks": (offline_seconds, offline_tokens),
    }
    result = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]), "machine": machine,
        "samples": args.n, "metrics": list(METRICS), "concurrency": args.concurrency,
        "calls": len(recorded.calls), "asks": sum(len(r) for r, _, _ in recorded.calls),
        "scoring_seconds": round(scoring, 2),
        "server_start_seconds": round(server.start_seconds, 1) if server else None,
        "paths": {name: {"seconds": round(s, 2), "completion_tokens": t, "tokens_per_second": round(t / s, 1)}
                  for name, (s, t) in rows.items()},
        "http_cost": round(engine_seconds / offline_seconds, 3),
        "fill": round((engine_tokens / engine_seconds) / (plain_tokens / plain_seconds), 3),
    }
    out = write_json(args.out or RESULTS / f"server_bench_n{args.n}.json", result)
    print(machine_line(machine))
    print(f"{result['asks']} asks in {result['calls']} engine calls, {args.concurrency} in flight")
    print(f"{'path':45} {'seconds':>8} {'compl tok':>10} {'tok/s':>8}")
    for name, figures in result["paths"].items():
        print(f"{name:45} {figures['seconds']:8.1f} {figures['completion_tokens']:10d} "
              f"{figures['tokens_per_second']:8.1f}")
    print(f"server engine / offline engine time: {result['http_cost']:.2f}; server engine's throughput / plain "
          f"load's: {result['fill']:.2f}  ({out})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
