"""Ragas 0.4.3 pointed at a judge server the way its documentation tells a local user, every sample and metric
at once; writes a JSON result (values, NaN share and reasons per metric).

Runs in benchmarks/.ragas-venv (``server_vs_ragas.py`` launches it):

    benchmarks/.ragas-venv/bin/python -m benchmarks.ragas.ragas_server_run --samples S.jsonl \\
        --server-url http://127.0.0.1:8000/v1 --embedder models/all-minilm-l6-v2 --out ragas.json

The judge is ``llm_factory("judge", client=AsyncOpenAI(base_url=URL, api_key=KEY))`` (the key from
LOCALEVAL_SERVER_API_KEY), with Ragas' own defaults (JSON mode, the schema in the prompt, 1,024 tokens); the
embedder is Ragas' HuggingFaceEmbeddings on the local folder. Every (sample, metric) pair is awaited together, as
``asyncio.gather``; an exception is that score's NaN, counted by its type, as Ragas' executor does with
``raise_exceptions=False``. ``--time-limit`` cancels what is still running then (counted as ``timeout``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from benchmarks.ragas.ragas_adapter import METRICS  # the metric classes and the fields each takes


async def score(metric: Any, name: str, sample: dict[str, Any]) -> tuple[float | None, str | None]:
    try:
        result = await metric.ascore(**{f: sample[f] for f in METRICS[name][1]})
    except asyncio.CancelledError:
        return None, "timeout"
    except Exception as error:  # as Ragas' executor with raise_exceptions=False
        return None, type(error).__name__
    value = float(result.value) if result.value is not None else float("nan")
    return (None, "nan_result") if value != value else (value, None)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    import ragas
    from openai import AsyncOpenAI
    from ragas.embeddings import HuggingFaceEmbeddings
    from ragas.llms import llm_factory
    from ragas.metrics import collections

    samples = [json.loads(line) for line in Path(args.samples).read_text().splitlines() if line.strip()]
    names = args.metrics.split(",")
    client = AsyncOpenAI(base_url=args.server_url, api_key=os.environ.get("LOCALEVAL_SERVER_API_KEY", "none"))
    llm = llm_factory(args.model, client=client)
    embeddings = HuggingFaceEmbeddings(model=args.embedder)
    metrics = {n: getattr(collections, METRICS[n][0])(llm=llm, **({"embeddings": embeddings}
                                                                   if n == "answer_relevancy" else {}))
               for n in names}
    pairs = [(n, s) for s in samples for n in names]
    started = time.perf_counter()
    tasks = [asyncio.ensure_future(score(metrics[n], n, s)) for n, s in pairs]
    done, pending = await asyncio.wait(tasks, timeout=args.time_limit)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    wall = time.perf_counter() - started
    got = [t.result() if t in done else (None, "timeout") for t in tasks]
    per: dict[str, list[tuple[float | None, str | None]]] = {n: [] for n in names}
    for (n, _), outcome in zip(pairs, got, strict=True):
        per[n].append(outcome)
    return {
        "system": f"ragas {ragas.__version__}", "samples": len(samples), "scoring_seconds": round(wall, 2),
        "server_url": args.server_url, "model": args.model, "time_limit": args.time_limit,
        "metrics": {n: {"values": [v for v, _ in rows], "nan_share": sum(v is None for v, _ in rows) / len(rows),
                        "nan_reasons": dict(Counter(r for _, r in rows if r is not None))}
                    for n, rows in per.items()},
        "versions": {"ragas": ragas.__version__, "python": platform.python_version()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--samples", required=True)
    parser.add_argument("--server-url", required=True, help="the server's OpenAI base URL")
    parser.add_argument("--model", default="judge", help="the served model's id")
    parser.add_argument("--embedder", required=True, help="local sentence-transformers folder")
    parser.add_argument("--metrics", default=",".join(METRICS))
    parser.add_argument("--time-limit", type=float, default=None, help="seconds before what runs is cancelled")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    result = asyncio.run(run(args))
    Path(args.out).write_text(json.dumps(result, indent=2))
    print(f"ragas: {result['samples']} samples in {result['scoring_seconds']} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
