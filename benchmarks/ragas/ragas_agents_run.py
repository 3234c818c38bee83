"""Score conversations with Ragas 0.4.3's agent metrics (collections classes) and a local judge; write JSON.

Runs in benchmarks/.ragas-venv (``speed/agents_vs_ragas.py`` launches it), beside ``ragas_run.py`` and with
the same adapter (``ragas_adapter.LocalTransformersLLM``: greedy, one request at a time, Ragas' 1,024-token
default, the first JSON object that fits the response model; any exception is a NaN, counted by reason).
The conversations are read by Ragas itself, ``EvaluationDataset.from_jsonl``, so each is a
``MultiTurnSample`` with Ragas' message objects. They are scored one after another, each with every
metric, and the JSON is rewritten after each, so a run stopped by ``--time-limit`` still tells how far it got.

    benchmarks/.ragas-venv/bin/python -m benchmarks.ragas.ragas_agents_run --samples C.jsonl \\
        --judge models/smollm2-135m-instruct --out ragas_agents.json
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
from pathlib import Path
from typing import Any

from benchmarks.ragas.ragas_adapter import (
    DEFAULT_MAX_TOKENS,
    CallStats,
    LocalTransformersLLM,
    nan_reason,
    stats_dict,
)

# localeval's metric name -> (Ragas collections class, whether it takes the judge, the fields its ascore takes)
AGENT_METRICS: dict[str, tuple[str, bool, tuple[str, ...]]] = {
    "agent_goal_accuracy_with_reference": ("AgentGoalAccuracyWithReference", True, ("user_input", "reference")),
    "agent_goal_accuracy_without_reference": ("AgentGoalAccuracyWithoutReference", True, ("user_input",)),
    "topic_adherence": ("TopicAdherence", True, ("user_input", "reference_topics")),
    "tool_call_accuracy": ("ToolCallAccuracy", False, ("user_input", "reference_tool_calls")),
    "tool_call_f1": ("ToolCallF1", False, ("user_input", "reference_tool_calls")),
}


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def build_agent_metric(name: str, llm: LocalTransformersLLM) -> Any:
    """A Ragas collections agent metric with its default settings (TopicAdherence: mode f1)."""
    from ragas.metrics import collections

    cls_name, judged, _ = AGENT_METRICS[name]
    cls = getattr(collections, cls_name)
    return cls(llm=llm) if judged else cls()


async def score_agent(metric: Any, name: str, sample: Any,
                      llm: LocalTransformersLLM) -> tuple[float | None, str | None]:
    """One conversation's value (None when NaN) and NaN reason; ``sample`` is Ragas' MultiTurnSample."""
    llm.metric = name
    try:
        result = await metric.ascore(**{f: getattr(sample, f) for f in AGENT_METRICS[name][2]})
    except Exception as error:  # as Ragas' executor with raise_exceptions=False: a failure is a NaN
        return None, nan_reason(error)
    value = float(result.value) if result.value is not None else float("nan")
    return (None, "nan_result") if value != value else (value, None)


def summary(args: argparse.Namespace, n: int, results: dict[str, list[tuple[float | None, str | None]]],
            llm: LocalTransformersLLM, load_seconds: float, wall: float, metric_seconds: dict[str, float],
            stopped: str | None) -> dict[str, Any]:
    import ragas
    import torch
    import transformers

    metrics: dict[str, dict[str, Any]] = {}
    for name, rows in results.items():
        valid = [v for v, _ in rows if v is not None]
        metrics[name] = {
            "ragas_class": AGENT_METRICS[name][0], "values": [v for v, _ in rows],
            "nan_reasons_per_sample": [r for _, r in rows], "scored": len(rows), "valid": len(valid),
            "mean": sum(valid) / len(valid) if valid else None, "nan_count": len(rows) - len(valid),
            "nan_share": (len(rows) - len(valid)) / len(rows) if rows else None,
            "nan_reasons": dict(Counter(r for _, r in rows if r is not None)),
            "wall_seconds": round(metric_seconds.get(name, 0.0), 3),
            **stats_dict(llm.stats.get(name, CallStats())),
        }
    done = min((len(r) for r in results.values()), default=0)
    return {
        "system": f"ragas {ragas.__version__}", "samples": n,
        "samples_sha256": hashlib.sha256(Path(args.samples).read_bytes()).hexdigest(),
        "samples_done": done, "finished": done == n, "stopped": stopped,
        "load_seconds": round(load_seconds, 3), "wall_seconds": round(wall, 3),
        "samples_per_second": round(done / wall, 4) if wall and done else None,
        "judge_calls": sum(m["calls"] for m in metrics.values()),
        "prompt_tokens": sum(m["prompt_tokens"] for m in metrics.values()),
        "completion_tokens": sum(m["completion_tokens"] for m in metrics.values()),
        "parse_errors": sum(m["parse_errors"] for m in metrics.values()),
        "truncated": sum(m["truncated"] for m in metrics.values()),
        "metrics": metrics, "failed_answers": [{"metric": m, "text": t} for m, t in llm.texts[:20]],
        "settings": {"max_tokens": args.max_tokens, "decoding": "greedy", "json_stop": not args.no_json_stop,
                     "threads": args.threads, "device": llm.device, "judge": args.judge,
                     "time_limit": args.time_limit, "samples_read_by": "ragas EvaluationDataset.from_jsonl"},
        "versions": {"ragas": ragas.__version__, "torch": torch.__version__,
                     "transformers": transformers.__version__, "python": platform.python_version()},
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from ragas.dataset_schema import EvaluationDataset, MultiTurnSample

    dataset = EvaluationDataset.from_jsonl(args.samples)
    samples = list(dataset.samples)
    if not all(isinstance(s, MultiTurnSample) for s in samples):
        raise SystemExit(f"{args.samples}: Ragas did not read every row as a MultiTurnSample")
    names = args.metrics.split(",")
    started = time.perf_counter()
    llm = LocalTransformersLLM(args.judge, max_tokens=args.max_tokens, threads=args.threads,
                               json_stop=not args.no_json_stop)
    llm.log = log if args.verbose else None
    metrics = {name: build_agent_metric(name, llm) for name in names}
    load_seconds = time.perf_counter() - started
    results: dict[str, list[tuple[float | None, str | None]]] = {name: [] for name in names}
    metric_seconds = dict.fromkeys(names, 0.0)
    scoring = time.perf_counter()
    stopped = None
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for i, sample in enumerate(samples):
        if args.time_limit and time.perf_counter() - scoring > args.time_limit:
            stopped = f"time limit of {args.time_limit} s reached after {i} conversations"
            log(stopped)
            break
        for name, metric in metrics.items():
            metric_started = time.perf_counter()
            value, reason = await score_agent(metric, name, sample, llm)
            metric_seconds[name] += time.perf_counter() - metric_started
            results[name].append((value, reason))
            log(f"conversation {i + 1}/{len(samples)} {name}: {reason or round(value or 0.0, 3)} "
                f"({time.perf_counter() - metric_started:.1f} s)")
        wall = time.perf_counter() - scoring
        out.write_text(json.dumps(summary(args, len(samples), results, llm, load_seconds, wall,
                                          metric_seconds, "running"), indent=2))
    wall = time.perf_counter() - scoring
    return summary(args, len(samples), results, llm, load_seconds, wall, metric_seconds, stopped)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--samples", required=True, help="JSONL of conversations in Ragas' MultiTurnSample shape")
    parser.add_argument("--judge", required=True, help="local model folder")
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("--metrics", default=",".join(AGENT_METRICS))
    parser.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS, help="Ragas' default: 1024")
    parser.add_argument("--no-json-stop", action="store_true",
                        help="generate until EOS or max tokens, not only until the first JSON object closes")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--time-limit", type=float, default=None,
                        help="start no new conversation after this many seconds of scoring")
    parser.add_argument("--verbose", action="store_true", help="log every generation")
    args = parser.parse_args(argv)
    result = asyncio.run(run(args))
    Path(args.out).write_text(json.dumps(result, indent=2))
    log(f"ragas: {result['samples_done']}/{result['samples']} conversations in {result['wall_seconds']:.1f} s, "
        f"{result['judge_calls']} judge calls, {result['parse_errors']} parse errors")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
