"""Speed and NaN rate: localeval against Ragas 0.4.3, same judge, embedder, samples and metrics.

    python -m benchmarks.speed.speed_vs_ragas --n 10 --judge models/smollm2-135m-instruct \\
        --embedder models/all-minilm-l6-v2

localeval runs as ``localeval evaluate`` in its own process (no cache), timed from its start to its
exit, so interpreter start, imports, model loading, grammar compilation and the report all count
(``--in-process`` runs it here instead and prints the engine's time split); Ragas runs in ``benchmarks/.ragas-venv``
(``bash benchmarks/ragas/setup_ragas.sh``) through ``benchmarks/ragas/ragas_run.py``. Both score the same ClapNQ samples
with faithfulness, response relevancy, context precision, context recall, factual correctness and
noise sensitivity. Writes ``benchmarks/speed/results/speed_vs_ragas.json`` and prints one table per system
and the ratio. ``--ragas-time-limit`` stops Ragas from starting new samples after that many seconds:
its figures then cover the samples it finished, and the table says so.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.harness.bench import (
    REPO,
    add_judge_arguments,
    describe_machine,
    localeval_models,
    machine_line,
    model_path,
)
from benchmarks.harness.clapnq import build_samples, write_jsonl
from benchmarks.speed.engine_profile import engine_profile

RESULTS = Path(__file__).resolve().parent / "results"

METRICS = ("faithfulness", "answer_relevancy", "context_precision", "context_recall", "factual_correctness",
           "noise_sensitivity")
RAGAS_PYTHON = REPO / "benchmarks" / ".ragas-venv" / "bin" / "python"


def run_localeval(samples: list[dict[str, Any]], args: argparse.Namespace) -> dict[str, Any]:
    """Score with localeval in this process; its figures as a dict shaped like ragas_run.py's."""
    import localeval
    from localeval.api import load_judge
    from localeval.prompts.base import Settings

    judge, embedder, options = localeval_models(args)
    started = time.perf_counter()  # the judge's start-up counts as loading (vLLM's is most of a minute)
    if isinstance(judge, str):
        judge = load_judge(judge, options)  # here, so that its time split can be read afterwards
    with engine_profile() as measured:
        result = localeval.evaluate(samples, metrics=list(METRICS), judge=judge, embedder=embedder,
                                    judge_options=options, out=args.run_dir, cache=False, progress=args.progress,
                                    settings=Settings(merge_repeats=not args.judge_every_copy), replace=True)
    total = time.perf_counter() - started
    figures = localeval_figures(result.summary_dict(), args)
    figures["load_seconds"] = round(total - figures["wall_seconds"], 3)
    figures["engine_profile"] = {k: round(v, 3) for k, v in measured.items()}
    return figures


def localeval_command(samples_file: Path, args: argparse.Namespace) -> list[str]:
    """The ``localeval evaluate`` command a user runs for these samples, metrics and judge settings."""
    command = [sys.executable, "-m", "localeval", "evaluate", str(samples_file), "--out", args.run_dir,
               "--metrics", ",".join(METRICS), "--no-cache", "--engine", args.engine,
               "--judge", model_path(args.judge), "--embedder", model_path(args.embedder),
               "--batch-size", str(args.batch_size), "--batch-tokens", str(args.batch_tokens or 0)]
    if args.threads:
        command += ["--threads", str(args.threads)]
    if args.dtype != "auto":
        command += ["--dtype", args.dtype]
    if args.engine == "vllm" and args.compile:
        command.append("--compile")
    if args.stop_repeats:
        command.append("--stop-repeats")
    if args.judge_every_copy:
        command.append("--judge-every-copy")
    if not args.progress:
        command.append("--no-progress")
    return command


def run_localeval_process(samples_file: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Score with ``localeval evaluate`` in its own process, timed from its start to its exit (interpreter
    start, imports, model loading, scoring and the report all count); its figures from summary.json."""
    import shutil

    shutil.rmtree(args.run_dir, ignore_errors=True)
    command = localeval_command(samples_file, args)
    print("running localeval:", " ".join(command), file=sys.stderr, flush=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True)
    process = time.perf_counter() - started
    figures = localeval_figures(json.loads((Path(args.run_dir) / "summary.json").read_text()), args)
    figures["process_seconds"] = round(process, 3)
    figures["load_seconds"] = round(process - figures["wall_seconds"], 3)  # everything but scoring
    figures["command"] = " ".join(command[2:]).replace(str(samples_file), "SAMPLES.jsonl")
    return figures


def localeval_figures(summary: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """A localeval summary as a dict shaped like ragas_run.py's."""
    import localeval

    t = summary["total"]
    metrics = {}
    for name in METRICS:
        m, u = summary["metrics"][name], summary["usage"][name]
        metrics[name] = {"mean": m.get("mean"), "valid": m.get("valid"), "nan_count": m.get("nan_count"),
                         "nan_share": m.get("nan_share"), "nan_reasons": m.get("nan_reasons", {}),
                         "calls": u["judge_calls"], "completion_tokens": u["completion_tokens"],
                         "prompt_tokens": u["prompt_tokens"], "seconds": u["engine_seconds"]}
    # transformers' fingerprint holds its dtype (then ":stop-repeats" where the guard is on)
    named = [part for part in str(summary["run"]["judge"]).split(":") if part in ("float32", "bfloat16", "float16")]
    dtype = named[-1] if named else args.dtype
    settings = " + stop-repeats" if getattr(args, "stop_repeats", False) else ""
    settings += " + every copy judged" if getattr(args, "judge_every_copy", False) else ""
    return {
        "system": f"localeval {localeval.__version__} ({args.engine}, {dtype}{settings})",
        "samples": t["samples"], "samples_done": t["samples"], "finished": True,
        "wall_seconds": t["wall_seconds"],
        "samples_per_second": t["samples_per_second"], "judge_calls": t["judge_calls"],
        "engine_calls": t["engine_calls"], "rounds": t["rounds"], "prompt_tokens": t["prompt_tokens"],
        "completion_tokens": t["completion_tokens"], "metrics": metrics, "judge": summary["run"]["judge"],
    }


def run_ragas(samples_file: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Launch ragas_run.py in the Ragas venv; its JSON (partial when stopped or killed)."""
    python = Path(args.ragas_python)
    if not python.exists():
        raise SystemExit(f"{python} not found: create the Ragas environment with "
                         "`bash benchmarks/ragas/setup_ragas.sh`, or pass --skip-ragas")
    out = Path(args.ragas_json or RESULTS / "ragas_run.json")
    command = [str(python), "-m", "benchmarks.ragas.ragas_run", "--samples", str(samples_file),
               "--judge", model_path(args.judge), "--embedder", model_path(args.embedder), "--out", str(out),
               "--max-tokens", str(args.ragas_max_tokens)]
    if args.threads:
        command += ["--threads", str(args.threads)]
    if args.ragas_time_limit:
        command += ["--time-limit", str(args.ragas_time_limit)]
    if args.no_json_stop:
        command.append("--no-json-stop")
    env = {**os.environ, "RAGAS_DO_NOT_TRACK": "true", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    print("running Ragas:", " ".join(command), file=sys.stderr, flush=True)
    started = time.perf_counter()
    hard_limit = args.ragas_time_limit * 3 + 600 if args.ragas_time_limit else None  # one sample may overrun
    try:
        subprocess.run(command, env=env, cwd=REPO, check=True, timeout=hard_limit)
        stopped = None
    except subprocess.TimeoutExpired:
        stopped = f"killed after {hard_limit:.0f} s"
    data = json.loads(out.read_text())
    data["process_seconds"] = round(time.perf_counter() - started, 3)
    if stopped:
        data["stopped"] = stopped
    out.write_text(json.dumps(data, indent=1))  # a later --ragas-result counts the whole process too
    return data


def check_same_samples(samples: list[dict[str, Any]], data: dict[str, Any], path: Path) -> None:
    """Stop unless the Ragas result in ``data`` (read from ``path``) scored exactly these samples."""
    with tempfile.TemporaryDirectory() as tmp:
        digest = hashlib.sha256(write_jsonl(samples, Path(tmp) / "samples.jsonl").read_bytes()).hexdigest()
    if data.get("samples_sha256") != digest:
        raise SystemExit(f"{path} was measured on other samples (digest {data.get('samples_sha256')}, "
                         f"these are {digest}): run Ragas again, or pass the same --n/--seed/--top-k")


def reuse_ragas(samples: list[dict[str, Any]], path: Path) -> dict[str, Any]:
    """A Ragas result measured earlier (or still being measured: waited for), after checking it scored
    exactly these samples."""
    data = json.loads(path.read_text())
    while data.get("stopped") == "running":  # ragas_run.py rewrites its file after every sample
        print(f"waiting for the Ragas run writing {path} ({data.get('samples_done')}/{data.get('samples')} "
              "samples so far)", file=sys.stderr, flush=True)
        if time.time() - path.stat().st_mtime > 3600:
            raise SystemExit(f"{path} says running but has not changed for an hour: was ragas_run.py stopped?")
        time.sleep(60)
        data = json.loads(path.read_text())
    check_same_samples(samples, data, path)
    data["reused_from"] = str(path)
    return data


def _num(v: Any, fmt: str = ".3f") -> str:
    return "-" if v is None else format(v, fmt)


def _reasons(m: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(m.get("nan_reasons", {}).items())) or "-"


def system_table(r: dict[str, Any]) -> str:
    """One system: totals, then per metric its mean, NaN share and why, calls and tokens."""
    done = f"{r['samples_done']}/{r['samples']}" if not r.get("finished") else str(r["samples"])
    lines = [f"== {r['system']}: {done} samples, {r['wall_seconds']:.1f} s scoring "
             f"(+{r['load_seconds']:.1f} s loading), {_num(r['samples_per_second'], '.4f')} samples/s, "
             f"{r['judge_calls']} judge calls, {r['completion_tokens']} completion tokens"
             + (f", {r['engine_calls']} engine calls in {r['rounds']} rounds" if "engine_calls" in r else "")]
    if r.get("stopped"):
        lines.append(f"   stopped early: {r['stopped']}; figures cover the samples it finished")
    head = f"{'metric':<20} {'mean':>6} {'NaN':>10} {'why':<28} {'calls':>6} {'compl tok':>9} {'judge s':>8}"
    lines += [head, "-" * len(head)]
    for name in METRICS:
        m = r["metrics"].get(name)
        if m is None:
            continue
        scored = m.get("scored", r["samples_done"])
        nan = f"{m['nan_count']}/{scored}"
        lines.append(f"{name:<20} {_num(m['mean']):>6} {nan:>10} {_reasons(m)[:28]:<28} {m['calls']:>6} "
                     f"{m['completion_tokens']:>9} {m['seconds']:>8.1f}")
    return "\n".join(lines)


def ratios(local: dict[str, Any], ragas: dict[str, Any]) -> dict[str, Any]:
    """localeval / Ragas, per sample so that a Ragas run stopped early still compares."""
    n_l, n_r = local["samples_done"], ragas["samples_done"]
    if not n_r:
        return {"note": "Ragas finished no sample"}

    def per(r: dict[str, Any], key: str, n: int) -> float:
        return r[key] / n

    out = {key: round(per(local, key, n_l) / per(ragas, key, n_r), 4) if ragas[key] else None
           for key in ("wall_seconds", "judge_calls", "completion_tokens")}
    out["speedup"] = round(per(ragas, "wall_seconds", n_r) / per(local, "wall_seconds", n_l), 2)
    out["ragas_seconds_for_all_samples"] = round(per(ragas, "wall_seconds", n_r) * ragas["samples"], 1)
    if local.get("process_seconds"):  # whole processes: start-up, imports, loading and scoring
        ragas_whole, basis = ragas_process_seconds(ragas)
        out["whole_process_speedup"] = round(ragas_whole / local["process_seconds"], 2)
        out["ragas_whole_seconds"], out["ragas_whole_basis"] = round(ragas_whole, 1), basis
    out["basis"] = "per sample" if n_r == n_l else f"per sample: Ragas finished {n_r} of {ragas['samples']}"
    return out


def ragas_process_seconds(ragas: dict[str, Any]) -> tuple[float, str]:
    """Ragas' whole run for all its samples, and how it was measured."""
    finished = ragas["samples_done"] == ragas["samples"]
    if finished and ragas.get("process_seconds"):
        return float(ragas["process_seconds"]), "its process, from start to exit"
    scoring = ragas["wall_seconds"] / ragas["samples_done"] * ragas["samples"]
    basis = "its model loading and scoring (its interpreter start and imports were not timed, in Ragas' favour)"
    if not finished:
        basis += f"; scoring projected from the {ragas['samples_done']} samples it finished"
    return float(ragas["load_seconds"]) + scoring, basis


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n", type=int, default=10, help="ClapNQ samples")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--top-k", type=int, default=3)
    parser.add_argument("--wrong-share", type=float, default=0.3)
    add_judge_arguments(parser)
    parser.add_argument("--skip-ragas", action="store_true", help="run localeval only")
    parser.add_argument("--ragas-result", default=None,
                        help="use this ragas_run.py JSON, measured before on the same samples, instead of "
                             "running Ragas again (the samples' digest must match)")
    parser.add_argument("--ragas-python", default=str(RAGAS_PYTHON))
    parser.add_argument("--ragas-json", default=None, help="where ragas_run.py writes (default: results/)")
    parser.add_argument("--ragas-max-tokens", type=int, default=1024, help="Ragas' default max_tokens")
    parser.add_argument("--ragas-time-limit", type=float, default=None,
                        help="Ragas starts no new sample after this many seconds")
    parser.add_argument("--no-json-stop", action="store_true",
                        help="Ragas adapter: generate to EOS or max tokens, not only until the JSON closes")
    parser.add_argument("--progress", action="store_true", help="show localeval's progress bars")
    parser.add_argument("--in-process", action="store_true",
                        help="run localeval in this process (its engine's time split is printed; start-up "
                             "is not timed); default: `localeval evaluate` in its own process, timed whole")
    parser.add_argument("--run-dir", default=str(REPO / "runs" / "bench-speed-localeval"))
    parser.add_argument("--out", default=str(RESULTS / "speed_vs_ragas.json"))
    args = parser.parse_args(argv)

    machine = describe_machine()
    samples = build_samples(args.n, seed=args.seed, top_k=args.top_k, wrong_share=args.wrong_share)
    print(f"{len(samples)} ClapNQ samples (seed {args.seed}, top-k {args.top_k}); machine: "
          f"{machine_line(machine)}", flush=True)
    if args.ragas_result:  # a Ragas result for other samples stops the run before localeval's side
        check_same_samples(samples, json.loads(Path(args.ragas_result).read_text()), Path(args.ragas_result))
    if args.in_process or args.engine == "scripted":  # the scripted judge has no command line
        local = run_localeval(samples, args)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            local = run_localeval_process(write_jsonl(samples, Path(tmp) / "samples.jsonl"), args)
    print(system_table(local), flush=True)
    if local.get("process_seconds"):
        print(f"   whole process: {local['process_seconds']:.1f} s ({local['command']})", flush=True)
    if local.get("engine_profile"):
        p = local["engine_profile"]
        print("   engine time: " + ", ".join(f"{k.removesuffix('_seconds')} {p.get(k, 0):.1f} s" for k in
              ("prefix_seconds", "prefill_seconds", "decode_seconds", "grammar_seconds")) +
              f" of {p.get('generate_seconds', 0):.1f} s; {int(p.get('decode_steps', 0))} decode steps for "
              f"{int(p.get('decode_tokens', 0))} tokens", flush=True)
    ragas = None
    if args.ragas_result:
        ragas = reuse_ragas(samples, Path(args.ragas_result))
        print(system_table(ragas))
    elif not args.skip_ragas:
        with tempfile.TemporaryDirectory() as tmp:
            ragas = run_ragas(write_jsonl(samples, Path(tmp) / "samples.jsonl"), args)
        print(system_table(ragas))
    result: dict[str, Any] = {
        "command": "python -m benchmarks.speed.speed_vs_ragas " + " ".join(sys.argv[1:] if argv is None else argv),
        "machine": machine, "machine_load_at_end": [round(x, 2) for x in os.getloadavg()],
        "samples": {"source": "ClapNQ dev", "n": args.n, "seed": args.seed, "top_k": args.top_k,
                    "wrong_share": args.wrong_share},
        "metrics": list(METRICS), "localeval": local, "ragas": ragas,
        "ratio_localeval_over_ragas": ratios(local, ragas) if ragas else None,
    }
    if ragas:
        r = result["ratio_localeval_over_ragas"]
        if "speedup" in r:
            print(f"\nlocaleval / Ragas ({r['basis']}): wall time {r['wall_seconds']}, judge calls "
                  f"{r['judge_calls']}, completion tokens {r['completion_tokens']}; localeval is "
                  f"{r['speedup']}x faster (Ragas would need about {r['ragas_seconds_for_all_samples']:.0f} s "
                  f"for all {ragas['samples']} samples)")
            if "whole_process_speedup" in r:
                print(f"whole processes: localeval {local['process_seconds']:.0f} s, "
                      f"Ragas {r['ragas_whole_seconds']:.0f} s "
                      f"({r['ragas_whole_basis']}): localeval is {r['whole_process_speedup']}x faster")
    from benchmarks.harness.bench import write_json

    print(f"wrote {write_json(args.out, result)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
