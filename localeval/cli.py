"""The ``localeval`` command. Thin: every command calls the Python API."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from localeval.api import JudgeOptions
from localeval.cli_agree import add_agree_commands
from localeval.cli_report import add_report_commands
from localeval.cli_testset import add_testset_commands
from localeval.errors import LocalevalError
from localeval.progress import quiet


def _evaluate(args: argparse.Namespace) -> int:
    from localeval.api import evaluate

    cache: str | bool = args.cache if args.cache else not args.no_cache
    result = evaluate(
        args.data,
        metrics=args.metrics,
        judge=args.judge,
        embedder=args.embedder,
        out=args.out,
        cache=cache,
        judge_options=judge_options(args),
        settings=judge_settings(args),
        seed=args.seed,
        progress=not args.no_progress,
        on_missing=args.on_missing,
        report=not args.no_report,
        long_context=args.long_context,
    )
    print(result.table())
    written = ["scores.jsonl", "summary.json"] + ([] if args.no_report else ["report.html"])
    print(f"\nwrote {', '.join(str(Path(args.out) / w) for w in written)}")
    return 0


def _rescore(args: argparse.Namespace) -> int:
    from localeval.rerun import rescore

    result = rescore(args.run, progress=not args.no_progress)
    print(result.table())
    missed = result.info.get("rescore_misses", 0)
    if missed:
        print(f"\n{missed} asks had no cached answer and score NaN (engine_error); rerun evaluate for them")
    print(f"\nrewrote {Path(args.run) / 'scores.jsonl'} and {Path(args.run) / 'summary.json'} from the cache")
    return 0


def _estimate(args: argparse.Namespace) -> int:
    from localeval.rerun import estimate

    result = estimate(
        args.data, args.metrics, args.judge, args.embedder, sample=args.sample, seed=args.seed,
        judge_options=judge_options(args),
        settings=judge_settings(args), progress=not args.no_progress,
    )
    print(result.table())
    return 0


def _models_prepare(args: argparse.Namespace) -> int:
    from localeval.model_folders import models_location, prepare

    dest, why = (Path(args.dest), "--dest") if args.dest else models_location()
    print(f"models folder: {dest} (from {why}; set LOCALEVAL_MODELS or pass --dest to choose another)")
    for line in prepare(dest):
        print(line)
    return 0


def _metrics_list(args: argparse.Namespace) -> int:
    from localeval.metrics.listing import print_metrics

    print_metrics()
    return 0


def _judge_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("data", help="JSONL, CSV, Parquet file or saved Hugging Face dataset folder")
    p.add_argument("--metrics", default=None,
                   help="comma-separated metric names with options, e.g. "
                        "faithfulness,factual_correctness:mode=precision,ndcg:k=5 (default: the six LLM metrics)")
    p.add_argument("--judge", default=None, help="judge: a model folder, or a name in the models folder (default: "
                                                 "smollm2-135m-instruct)")
    p.add_argument("--embedder", default=None, help="embedder: a model folder, or a name in the models folder "
                                                    "(default: all-minilm-l6-v2)")
    p.add_argument("--no-reasons", action="store_true", help="ask for verdicts without free-text reasons")
    p.add_argument("--max-examples", type=int, default=None,
                   help="at most N few-shot examples per prompt (default: all of them)")
    p.add_argument("--votes", type=int, default=1,
                   help="verdict asks: sample N answers and take each verdict's majority (default 1: greedy)")
    p.add_argument("--temperature", type=float, default=0.7, help="sampling temperature of --votes (default 0.7)")
    p.add_argument("--seed", type=int, default=0, help="seed for sampled generations")
    p.add_argument("--no-progress", action="store_true", help="no progress, loading bars or warnings")
    engine_arguments(p)


def engine_arguments(p: argparse.ArgumentParser) -> None:
    """How the judge is loaded and run: grammar, batching, threads, and the GPU engines."""
    p.add_argument("--grammar", choices=("xgrammar", "outlines"), default="xgrammar",
                   help="grammar backend for constrained decoding (default: xgrammar)")
    p.add_argument("--batch-size", type=int, default=16,
                   help="most asks decoded together by the transformers engine")
    p.add_argument("--batch-tokens", type=int, default=16384,
                   help="transformers engine: token budget of a batch, rows x (longest prompt tail + longest "
                        "answer); 0: no budget, batches of --batch-size")
    p.add_argument("--threads", type=int, default=None,
                   help="CPU threads for torch (default: all cores, waiting passively; README: Speed knobs)")
    p.add_argument("--trust-remote-code", action="store_true", help="allow the model folder's own code")
    g = p.add_argument_group("GPU engines")
    g.add_argument("--engine", choices=("transformers", "vllm", "ray-vllm"), default="transformers",
                   help="judge engine: transformers (CPU/GPU), vllm (GPU), ray-vllm (vLLM replicas on Ray)")
    g.add_argument("--replicas", type=int, default=1, help="ray-vllm: engine replicas (one per GPU if the judge fits)")
    g.add_argument("--ray-address", default=None, help="ray-vllm: cluster address (default: local, or a new one)")
    g.add_argument("--tensor-parallel-size", type=int, default=1,
                   help="vllm: GPUs per engine, for a judge too big for one")
    g.add_argument("--gpu-memory-utilization", type=float, default=0.9, help="vllm: share of GPU memory vLLM may take")
    g.add_argument("--max-model-len", type=int, default=None, help="vllm: context window (default: the model's)")
    g.add_argument("--dtype", default="auto", help="vllm: weights dtype (auto, bfloat16, float16)")
    g.add_argument("--quantization", default=None, help="vllm: awq, gptq, fp8, ... (default: from the model folder)")


def judge_settings(args: argparse.Namespace) -> Any:
    """What the judge is asked: reasons, few-shot examples, votes."""
    from localeval.prompts.base import Settings

    try:
        return Settings(reasons=not args.no_reasons, max_examples=getattr(args, "max_examples", None),
                        votes=args.votes, temperature=args.temperature)
    except ValueError as error:
        raise LocalevalError(str(error)) from None


def judge_options(args: argparse.Namespace) -> JudgeOptions:
    """The engine settings the judge arguments ask for."""
    extra: dict[str, object] = {}
    if args.engine != "transformers":
        extra = {
            "tensor_parallel_size": args.tensor_parallel_size,
            "gpu_memory_utilization": args.gpu_memory_utilization,
            "max_model_len": args.max_model_len,
            "dtype": args.dtype,
            "quantization": args.quantization,
            "seed": args.seed,
            "progress": not args.no_progress,
        }
    return JudgeOptions(engine=args.engine, grammar=args.grammar, batch_size=args.batch_size,
                        batch_tokens=args.batch_tokens or None, threads=args.threads,
                        trust_remote_code=args.trust_remote_code, replicas=args.replicas,
                        ray_address=args.ray_address, extra=extra)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="localeval", description="Evaluate RAG systems with Ragas' metrics and a local, grammar-constrained judge."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    ev = sub.add_parser("evaluate", help="score a data set with a local judge")
    _judge_arguments(ev)
    ev.add_argument("--out", required=True, help="run folder for scores.jsonl, summary.json and judge.sqlite")
    ev.add_argument("--no-cache", action="store_true", help="do not read or write the run's judge cache")
    ev.add_argument("--cache", default=None, help="a judge cache file shared between runs")
    ev.add_argument("--on-missing", choices=("error", "nan"), default="error",
                    help="a sample lacking a field a metric needs: stop with an error naming row and field "
                         "(default), or score that metric NaN (missing_field) and go on")
    ev.add_argument("--no-report", action="store_true", help="do not write RUN/report.html")
    ev.add_argument("--long-context", choices=("skip", "error", "truncate"), default="skip",
                    help="an ask longer than the judge's context window: score NaN (context_too_long, default), "
                         "stop with an error, or cut the longest input text to fit (recorded in the trace)")
    ev.set_defaults(func=_evaluate)

    est = sub.add_parser("estimate", help="measure a few samples and project calls, tokens and time")
    _judge_arguments(est)
    est.add_argument("--sample", type=int, default=10, help="samples to measure (default 10)")
    est.set_defaults(func=_estimate)

    rs = sub.add_parser("rescore", help="recompute scores and summary of a run from its cache, no model")
    rs.add_argument("run", help="a run folder written by evaluate")
    rs.add_argument("--no-progress", action="store_true", help="no progress, loading bars or warnings")
    rs.set_defaults(func=_rescore)

    models = sub.add_parser("models", help="manage the local model folders")
    models_sub = models.add_subparsers(dest="models_command", required=True)
    prep = models_sub.add_parser("prepare", help="build the bundled default judge and embedder folders")
    prep.add_argument("--dest", default=None,
                      help="models folder (default: $LOCALEVAL_MODELS, else ./models of a source checkout, "
                           "else ~/.cache/localeval/models)")
    prep.set_defaults(func=_models_prepare)

    add_report_commands(sub)
    add_agree_commands(sub)
    add_testset_commands(sub)

    metrics = sub.add_parser("metrics", help="list the metrics, the fields they need and their options")
    metrics.set_defaults(func=_metrics_list)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: returns the exit code (1 for a problem the user can fix, with its message)."""
    args = build_parser().parse_args(argv)
    try:
        with quiet(bool(getattr(args, "no_progress", False))):
            code: int = args.func(args)
        return code
    except LocalevalError as error:
        print(f"localeval: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("localeval: interrupted; rerun the same command to resume from the judge cache", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
