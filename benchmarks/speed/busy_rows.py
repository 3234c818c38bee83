"""How full the transformers engine's decode steps are: busy rows per step, with the wall time.

    python -m benchmarks.speed.busy_rows --threads 1 [--label after]

Scores ``examples/rag_demo.jsonl`` with faithfulness, context precision and answer relevancy (no
cache) through the transformers engine and the bundled judge, and prints the decode steps, the rows
they decoded and their ratio (busy rows per step, out of ``--batch-size``), the scoring time and the
whole process's wall time (imports and model load included). Writes
``benchmarks/speed/results/busy_rows_<label>.json``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.harness.bench import REPO, add_judge_arguments, describe_machine, machine_line, model_path, write_json
from benchmarks.speed.engine_profile import engine_profile

RESULTS = Path(__file__).resolve().parent / "results"

STARTED = time.perf_counter()  # before torch, transformers and localeval are imported

METRICS = "faithfulness,context_precision,answer_relevancy"


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Load the judge, score the data once, and read the engine's step counts."""
    import localeval
    from localeval.api import load_judge
    from localeval.config import JudgeOptions

    options = JudgeOptions(batch_size=args.batch_size, batch_tokens=args.batch_tokens or None, threads=args.threads)
    engine = load_judge(model_path(args.judge), options)
    loaded = time.perf_counter()
    with engine_profile() as measured:
        result = localeval.evaluate(str(args.data), metrics=args.metrics.split(","), judge=engine,
                                    embedder=model_path(args.embedder), cache=False, report=False)
    scored = time.perf_counter()
    profile: dict[str, float] = dict(measured)
    steps, tokens = int(profile.get("decode_steps", 0)), int(profile.get("decode_tokens", 0))
    return {
        "samples": result.summary_dict()["total"].get("samples"),
        "metrics": args.metrics.split(","), "batch_size": args.batch_size, "batch_tokens": args.batch_tokens,
        "decode_steps": steps, "decode_tokens": tokens,
        "busy_rows_per_step": round(tokens / steps, 2) if steps else None,
        "load_seconds": round(loaded - STARTED, 2), "scoring_seconds": round(scored - loaded, 2),
        "process_wall_seconds": round(scored - STARTED, 2),
        "engine_seconds": round(profile.get("generate_seconds", 0.0), 2),
        "engine_profile": {k: round(v, 2) for k, v in sorted(profile.items())},
        "means": {k: v.get("mean") for k, v in result.summary_dict()["metrics"].items()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", default=str(REPO / "examples" / "rag_demo.jsonl"))
    parser.add_argument("--metrics", default=METRICS)
    parser.add_argument("--label", default="now", help="names the JSON file: busy_rows_<label>.json")
    add_judge_arguments(parser)
    args = parser.parse_args(argv)
    if args.engine != "transformers":
        parser.error("busy rows are counted by the transformers engine")
    machine = describe_machine()
    print(f"machine: {machine_line(machine)}", flush=True)
    r = measure(args)
    print(f"{r['decode_steps']} decode steps for {r['decode_tokens']} rows: {r['busy_rows_per_step']} busy rows "
          f"per step (batch size {r['batch_size']}); scoring {r['scoring_seconds']:.1f} s, engine "
          f"{r['engine_seconds']:.1f} s, whole process {r['process_wall_seconds']:.1f} s "
          f"(load {r['load_seconds']:.1f} s)")
    data = {"command": "python -m benchmarks.speed.busy_rows " + " ".join(sys.argv[1:] if argv is None else argv),
            "label": args.label, "machine": machine, **r}
    print(f"wrote {write_json(RESULTS / f'busy_rows_{args.label}.json', data)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
