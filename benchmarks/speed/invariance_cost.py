"""What batch invariance costs: the same fixed asks answered by each dtype of the transformers engine, timed.

    python -m benchmarks.speed.invariance_cost --n 10 --threads 1                    # records the asks, then times
    git worktree add /tmp/before <commit before the invariant kernels>
    PYTHONPATH=/tmp/before:. python -P -m benchmarks.speed.invariance_cost --label before --dtypes bfloat16

``--asks N`` times only the first N recorded asks (a CPU without bfloat16 instructions runs bfloat16 slowly).

The first run scores ``--n`` ClapNQ samples under the six metrics of ``speed_vs_ragas.py`` with the default
judge, records every ask it sends (``benchmarks/speed/results/invariance_asks_n{N}.jsonl``), then has each dtype
answer exactly those asks again, all in one engine call, on a freshly loaded engine. A later run with
``--label`` replays the same recorded asks with whatever ``localeval`` Python imports (point ``PYTHONPATH``
at another checkout to time an earlier code path; ``-P`` keeps ``python -m`` from putting this checkout, the
current directory, before it, and the trailing ``.`` finds ``benchmarks`` here). Every run adds its rows to
``benchmarks/speed/results/invariance_cost.json``: generation seconds, completion tokens, and how many answers
are the same text as the first row's answers for the same asks.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchmarks.harness.bench import describe_machine, machine_line, write_json

RESULTS = Path(__file__).resolve().parent / "results"

METRICS = ["faithfulness", "answer_relevancy", "context_precision", "context_recall", "factual_correctness",
           "noise_sensitivity"]


def record(path: Path, n: int, threads: int) -> None:
    """Score ``n`` ClapNQ samples with the default judge and write every ask it sent to ``path``."""
    import localeval
    from benchmarks.harness.clapnq import build_samples
    from benchmarks.identity.verdict_identity import Recorder
    from localeval.api import load_embedder, load_judge
    from localeval.config import JudgeOptions

    recorder = Recorder(load_judge(None, JudgeOptions(threads=threads)))
    localeval.evaluate(build_samples(n, seed=0, top_k=3), metrics=METRICS, judge=recorder,
                       embedder=load_embedder(None), cache=False)
    rows = [json.dumps({**asdict(request), "messages": [list(m) for m in request.messages]})
            for request, _ in recorder.asks]
    path.write_text("\n".join(rows) + "\n")
    print(f"recorded {len(rows)} asks to {path}", flush=True)


def read_asks(path: Path) -> list[Any]:
    from localeval.engine.base import Request

    asks = []
    for line in path.read_text().splitlines():
        data = json.loads(line)
        data["messages"] = tuple(tuple(m) for m in data["messages"])
        asks.append(Request(**{k: v for k, v in data.items() if k in Request.__dataclass_fields__}))
    return asks


def time_dtype(asks: list[Any], dtype: str, threads: int) -> tuple[dict[str, Any], list[str]]:
    """The default judge, freshly loaded in ``dtype``, answers every ask in one call: its row and answer texts."""
    from localeval.api import load_judge
    from localeval.config import JudgeOptions

    engine = load_judge(None, JudgeOptions(threads=threads, extra={"dtype": dtype}))  # as `localeval evaluate`
    started = time.perf_counter()
    results = engine.generate(asks)
    seconds = time.perf_counter() - started
    texts = [r.choices[0].text if r.choices else "" for r in results]
    row = {"dtype": dtype, "fingerprint": engine.fingerprint, "generate_seconds": round(seconds, 1),
           "completion_tokens": sum(c.completion_tokens for r in results for c in r.choices),
           "errors": sum(r.error is not None for r in results)}
    return row, texts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10, help="ClapNQ samples whose asks are recorded")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--dtypes", default="bfloat16,float32", help="dtypes to time, comma-separated")
    parser.add_argument("--asks", type=int, default=0, help="time only the first N recorded asks (0: all)")
    parser.add_argument("--label", default="invariant", help="names the code path timed (its rows' label)")
    parser.add_argument("--out", default=str(RESULTS / "invariance_cost.json"))
    args = parser.parse_args(argv)

    import localeval

    asks_file = RESULTS / f"invariance_asks_n{args.n}.jsonl"
    if not asks_file.exists():
        record(asks_file, args.n, args.threads)
    asks = read_asks(asks_file)
    if args.asks:
        asks = asks[: args.asks]
    out = Path(args.out)
    saved = json.loads(out.read_text()) if out.exists() else {"rows": []}
    first = {row["key"]: row for row in saved["rows"]}
    texts_by_key: dict[str, list[str]] = saved.get("texts", {})
    machine = describe_machine()
    for dtype in args.dtypes.split(","):
        row, texts = time_dtype(asks, dtype, args.threads)
        key = f"{args.label}:{dtype}:{len(asks)}"
        baseline = texts_by_key.get(f"invariant:{dtype}:{len(asks)}", texts)
        row.update(key=key, label=args.label, asks=len(asks), localeval=str(Path(localeval.__file__).parent),
                   same_text_as_invariant=sum(a == b for a, b in zip(texts, baseline, strict=True)),
                   machine=machine_line(machine), date=time.strftime("%Y-%m-%d"),
                   command="python -m benchmarks.speed.invariance_cost "
                           + " ".join(sys.argv[1:] if argv is None else argv))
        first[key] = row
        texts_by_key[key] = texts
        print(f"{key:<22} {row['generate_seconds']:>7} s  {row['completion_tokens']} completion tokens  "
              f"{row['same_text_as_invariant']}/{len(asks)} answers as the invariant path's", flush=True)
        write_json(out, {"asks_file": asks_file.name, "rows": list(first.values()), "texts": texts_by_key})
    return 0


if __name__ == "__main__":
    sys.exit(main())
