"""Score samples with Ragas 0.4.3's collections metrics and a local judge; write a JSON result.

Runs in benchmarks/.ragas-venv (``speed_vs_ragas.py`` launches it). Samples are scored one after
another, each with every metric, and the JSON is rewritten after each sample, so a run stopped by
``--time-limit`` (or killed) still tells how far it got and how long a sample took.

    benchmarks/.ragas-venv/bin/python -m benchmarks.ragas.ragas_run --samples S.jsonl \\
        --judge models/smollm2-135m-instruct --embedder models/all-minilm-l6-v2 --out ragas.json
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import platform
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.ragas.ragas_adapter import (
    DEFAULT_MAX_TOKENS,
    METRICS,
    CallStats,
    LocalEmbeddings,
    LocalTransformersLLM,
    build_metric,
    score_one,
    stats_dict,
)

Results = dict[str, list[tuple[float | None, str | None]]]  # metric -> (value or None, NaN reason) per sample
# Scores one sample with one metric: (metric, its name, the sample, the judge) -> (value or None, NaN reason).
Score = Callable[[Any, str, Any, LocalTransformersLLM], Awaitable[tuple[float | None, str | None]]]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def summary(args: argparse.Namespace, n: int, results: Results, llm: LocalTransformersLLM, load_seconds: float,
            wall: float, metric_seconds: dict[str, float], stopped: str | None, classes: Mapping[str, str],
            settings: Mapping[str, Any]) -> dict[str, Any]:
    """The result JSON; ``classes``: metric -> its Ragas class; ``settings``: what the runner adds to the settings."""
    import ragas
    import torch
    import transformers

    metrics: dict[str, dict[str, Any]] = {}
    for name, rows in results.items():
        valid = [v for v, _ in rows if v is not None]
        metrics[name] = {
            "ragas_class": classes[name],
            "values": [v for v, _ in rows],
            "nan_reasons_per_sample": [r for _, r in rows],
            "scored": len(rows),
            "valid": len(valid),
            "mean": sum(valid) / len(valid) if valid else None,
            "nan_count": len(rows) - len(valid),
            "nan_share": (len(rows) - len(valid)) / len(rows) if rows else None,
            "nan_reasons": dict(Counter(r for _, r in rows if r is not None)),
            "wall_seconds": round(metric_seconds.get(name, 0.0), 3),
            **stats_dict(llm.stats.get(name, CallStats())),
        }
    done = min((len(r) for r in results.values()), default=0)
    return {
        "system": f"ragas {ragas.__version__}",
        "samples": n,
        "samples_sha256": hashlib.sha256(Path(args.samples).read_bytes()).hexdigest(),
        "samples_done": done,
        "finished": done == n,
        "stopped": stopped,
        "load_seconds": round(load_seconds, 3),
        "wall_seconds": round(wall, 3),
        "samples_per_second": round(done / wall, 4) if wall and done else None,
        "judge_calls": sum(m["calls"] for m in metrics.values()),
        "prompt_tokens": sum(m["prompt_tokens"] for m in metrics.values()),
        "completion_tokens": sum(m["completion_tokens"] for m in metrics.values()),
        "parse_errors": sum(m["parse_errors"] for m in metrics.values()),
        "truncated": sum(m["truncated"] for m in metrics.values()),
        "metrics": metrics,
        "failed_answers": [{"metric": m, "text": t} for m, t in llm.texts[:20]],
        "settings": {"max_tokens": args.max_tokens, "decoding": "greedy", "json_stop": not args.no_json_stop,
                     "threads": args.threads, "device": llm.device, "judge": args.judge, **settings,
                     "time_limit": args.time_limit},
        "versions": {"ragas": ragas.__version__, "torch": torch.__version__,
                     "transformers": transformers.__version__, "python": platform.python_version()},
    }


def load_judge(args: argparse.Namespace) -> LocalTransformersLLM:
    llm = LocalTransformersLLM(args.judge, max_tokens=args.max_tokens, threads=args.threads,
                               json_stop=not args.no_json_stop)
    llm.log = log if args.verbose else None
    return llm


async def score_all(args: argparse.Namespace, samples: Sequence[Any], metrics: Mapping[str, Any], score: Score,
                    llm: LocalTransformersLLM, load_seconds: float, classes: Mapping[str, str],
                    settings: Mapping[str, Any], noun: str = "sample") -> dict[str, Any]:
    """Every sample with every metric, one after another; the JSON rewritten after each sample."""
    results: Results = {name: [] for name in metrics}
    metric_seconds = dict.fromkeys(metrics, 0.0)
    scoring = time.perf_counter()
    stopped = None
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)

    def result(wall: float, state: str | None) -> dict[str, Any]:
        return summary(args, len(samples), results, llm, load_seconds, wall, metric_seconds, state, classes,
                       settings)

    for i, sample in enumerate(samples):
        if args.time_limit and time.perf_counter() - scoring > args.time_limit:
            stopped = f"time limit of {args.time_limit} s reached after {i} {noun}s"
            log(stopped)
            break
        for name, metric in metrics.items():
            metric_started = time.perf_counter()
            value, reason = await score(metric, name, sample, llm)
            metric_seconds[name] += time.perf_counter() - metric_started
            results[name].append((value, reason))
            log(f"{noun} {i + 1}/{len(samples)} {name}: {reason or round(value or 0.0, 3)} "
                f"({time.perf_counter() - metric_started:.1f} s)")
        out.write_text(json.dumps(result(time.perf_counter() - scoring, "running"), indent=2))
    return result(time.perf_counter() - scoring, stopped)


def arguments(description: str, samples_help: str, metrics: Sequence[str], noun: str = "sample"
              ) -> argparse.ArgumentParser:
    """The options every Ragas runner takes (``--embedder`` is the RAG runner's own)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--samples", required=True, help=samples_help)
    parser.add_argument("--judge", required=True, help="local model folder")
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("--metrics", default=",".join(metrics))
    parser.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS, help="Ragas' default: 1024")
    parser.add_argument("--no-json-stop", action="store_true",
                        help="generate until EOS or max tokens, not only until the first JSON object closes")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--time-limit", type=float, default=None,
                        help=f"start no new {noun} after this many seconds of scoring")
    parser.add_argument("--verbose", action="store_true", help="log every generation")
    return parser


def finish(args: argparse.Namespace, result: dict[str, Any], noun: str = "sample") -> int:
    """Write the result and say in a line what Ragas did."""
    Path(args.out).write_text(json.dumps(result, indent=2))
    log(f"ragas: {result['samples_done']}/{result['samples']} {noun}s in {result['wall_seconds']:.1f} s, "
        f"{result['judge_calls']} judge calls, {result['parse_errors']} parse errors")
    return 0


async def run(args: argparse.Namespace) -> dict[str, Any]:
    samples = [json.loads(line) for line in Path(args.samples).read_text().splitlines() if line.strip()]
    started = time.perf_counter()
    llm = load_judge(args)
    embeddings = LocalEmbeddings(args.embedder, llm)
    metrics = {name: build_metric(name, llm, embeddings) for name in args.metrics.split(",")}
    load_seconds = time.perf_counter() - started
    classes = {name: METRICS[name][0] for name in metrics}
    return await score_all(args, samples, metrics, score_one, llm, load_seconds, classes,
                           {"embedder": args.embedder})


def main(argv: list[str] | None = None) -> int:
    parser = arguments((__doc__ or "").splitlines()[0], "JSONL of samples with Ragas field names", list(METRICS))
    parser.add_argument("--embedder", required=True, help="local sentence-transformers folder")
    args = parser.parse_args(argv)
    return finish(args, asyncio.run(run(args)))


if __name__ == "__main__":
    raise SystemExit(main())
