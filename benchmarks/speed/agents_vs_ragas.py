"""Speed and NaN rate of the agent metrics: localeval against Ragas 0.4.3, same judge, same conversations.

    python -m benchmarks.speed.agents_vs_ragas --n 8 --threads 1 [--ragas-time-limit 900]

Builds N conversations from a seeded generator (1-3 human turns, tool calls with arguments, tool outputs, a
final AI answer; reference tool calls, a reference outcome and reference topics; some with a wrong argument,
a missed call or an off-topic question answered or refused) and writes them as JSONL in Ragas'
``MultiTurnSample`` shape. localeval scores them as a user would, ``localeval evaluate ... --no-cache``, in its
own process timed from start to exit; Ragas reads the same file with ``EvaluationDataset.from_jsonl`` and
scores it with its collections classes through ``benchmarks/ragas/ragas_agents_run.py`` in
``benchmarks/.ragas-venv`` (the adapter of ``speed_vs_ragas``: one request at a time). Metrics:
agent goal accuracy with and without reference, topic adherence (f1), and the model-free tool call accuracy
and F1. Writes ``benchmarks/speed/results/agents_vs_ragas_nN.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.harness.bench import DEFAULT_JUDGE, REPO, describe_machine, machine_line, model_path, write_json
from benchmarks.speed.speed_vs_ragas import _num, _reasons, ragas_process_seconds

RESULTS = Path(__file__).resolve().parent / "results"
RAGAS_PYTHON = REPO / "benchmarks" / ".ragas-venv" / "bin" / "python"
METRICS = ("agent_goal_accuracy_with_reference", "agent_goal_accuracy_without_reference", "topic_adherence",
           "tool_call_accuracy", "tool_call_f1")
CITIES = ("Lyon", "Paris", "Berlin", "Madrid", "Oslo", "Rome", "Vienna", "Porto")
CUISINES = ("French", "Italian", "Japanese", "Indian", "Lebanese")
PLACES = ("Chez Paul", "Le Bouchon", "Trattoria Sole", "Sakura", "Maison Rouge")
OFF_TOPIC = (("Who won the football match last night?", "The home team won 2-1."),
             ("Can you recommend a good novel?", "Try 'The Remains of the Day' by Kazuo Ishiguro."),
             ("What is the capital of Australia?", "The capital of Australia is Canberra."))


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args}


def _task(rng: random.Random, kind: str) -> tuple[str, str, str, list[tuple[dict[str, Any], str]], str]:
    """(topic, request, reference outcome, [(tool call, its output)], final answer) of one task."""
    city = rng.choice(CITIES)
    if kind == "weather":
        unit, temp = rng.choice(("celsius", "fahrenheit")), rng.randint(5, 30)
        sky = rng.choice(("sun", "rain", "clouds"))
        return (kind, f"What will the weather be like in {city} tomorrow, in {unit}?",
                f"The user learns tomorrow's forecast for {city} in {unit}.",
                [(_call("weather_lookup", city=city, unit=unit), f"{city} tomorrow: {temp} degrees, {sky}.")],
                f"Tomorrow {city} will reach {temp} degrees {unit}, with {sky}.")
    if kind == "restaurants":
        cuisine, people, place = rng.choice(CUISINES), rng.randint(2, 6), rng.choice(PLACES)
        hour = f"{rng.randint(18, 21)}:{rng.choice(('00', '30'))}"
        return (kind, f"Find me a {cuisine} restaurant in {city} and book it for {people} at {hour}.",
                f"A table for {people} at a {cuisine} restaurant in {city} is booked for {hour}.",
                [(_call("restaurant_search", cuisine=cuisine, city=city), f"Found: {place}."),
                 (_call("book_table", restaurant=place, people=people, time=hour),
                  f"Booked: {place}, {people} people, {hour}.")],
                f"Your table for {people} at {place} is booked for {hour}.")
    if kind == "flights":
        dest, day = rng.choice([c for c in CITIES if c != city]), rng.choice(("Monday", "Friday", "Sunday"))
        return ("travel", f"Find a flight from {city} to {dest} on {day}.",
                f"The user gets a flight from {city} to {dest} on {day}.",
                [(_call("flight_search", origin=city, destination=dest, day=day),
                  f"Flight AF{rng.randint(100, 999)} leaves {city} at {rng.randint(6, 20)}:15 on {day}.")],
                f"There is a flight from {city} to {dest} on {day}; details above.")
    amount, cur = rng.choice((50, 120, 300, 75)), rng.choice(("USD", "GBP", "CHF"))
    converted = round(amount * rng.uniform(0.8, 1.2), 2)
    return ("finance", f"How much is {amount} EUR in {cur}?", f"The user learns what {amount} EUR is in {cur}.",
            [(_call("convert_currency", amount=amount, source="EUR", target=cur),
              f"{amount} EUR = {converted} {cur}.")],
            f"{amount} EUR is {converted} {cur} at today's rate.")


def build_conversations(n: int, seed: int = 0) -> list[dict[str, Any]]:
    """N varied conversations in Ragas' MultiTurnSample shape, the same for the same seed."""
    rng = random.Random(seed)
    rows = []
    kinds = ["weather", "restaurants", "flights", "currency"]
    rng.shuffle(kinds)
    for i in range(n):  # every kind of task in turn, the details drawn
        topic, request, reference, calls, answer = _task(rng, kinds[i % len(kinds)])
        messages: list[dict[str, Any]] = [{"content": request, "type": "human"}]
        made = [dict(call, args=dict(call["args"])) for call, _ in calls]
        if rng.random() < 0.35:  # a wrong argument: the agent's call differs from the reference
            key = rng.choice(sorted(made[-1]["args"]))
            value = made[-1]["args"][key]
            made[-1]["args"][key] = value + 1 if isinstance(value, int) else f"{value}x"
        if len(made) > 1 and rng.random() < 0.15:  # a missed call
            made, calls = made[:1], calls[:1]
        for i, (call, (_, output)) in enumerate(zip(made, calls, strict=True)):
            messages.append({"content": "" if i else "Let me check.", "type": "ai", "tool_calls": [call]})
            messages.append({"content": output, "type": "tool"})
        messages.append({"content": answer, "type": "ai"})
        topics = [topic] + ([rng.choice(("weather", "restaurants", "travel", "finance"))] if rng.random() < 0.4 else [])
        for _ in range(rng.randint(0, 2)):  # 1-3 human turns in all
            question, reply = rng.choice(OFF_TOPIC)
            refused = rng.random() < 0.5
            messages += [{"content": question, "type": "human"},
                         {"content": f"Sorry, I can only help with {' and '.join(dict.fromkeys(topics))}." if refused
                          else reply, "type": "ai"}]
        rows.append({"user_input": messages, "reference": reference, "reference_tool_calls": [c for c, _ in calls],
                     "reference_topics": list(dict.fromkeys(topics))})
    return rows


def write_jsonl(rows: list[dict[str, Any]], path: Path) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    return path


def localeval_command(data: Path, args: argparse.Namespace) -> list[str]:
    command = [sys.executable, "-m", "localeval", "evaluate", str(data), "--out", args.run_dir, "--metrics",
               ",".join(METRICS), "--no-cache", "--no-progress", "--no-report", "--replace",
               "--judge", model_path(args.judge)]
    return command + (["--threads", str(args.threads)] if args.threads else [])


def run_localeval(data: Path, args: argparse.Namespace) -> dict[str, Any]:
    """``localeval evaluate`` in its own process, timed from start to exit; figures from summary.json."""
    import localeval

    shutil.rmtree(args.run_dir, ignore_errors=True)
    command = localeval_command(data, args)
    print("running localeval:", " ".join(command), file=sys.stderr, flush=True)
    started = time.perf_counter()
    subprocess.run(command, env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}, check=True)
    process = time.perf_counter() - started
    summary = json.loads((Path(args.run_dir) / "summary.json").read_text())
    t = summary["total"]
    metrics = {}
    for name in METRICS:
        m, u = summary["metrics"][name], summary["usage"].get(name, {})
        metrics[name] = {"mean": m.get("mean"), "valid": m.get("valid"), "nan_count": m.get("nan_count"),
                         "nan_share": m.get("nan_share"), "nan_reasons": m.get("nan_reasons", {}),
                         "calls": u.get("judge_calls", 0), "completion_tokens": u.get("completion_tokens", 0),
                         "prompt_tokens": u.get("prompt_tokens", 0), "seconds": u.get("engine_seconds", 0.0)}
    return {"system": f"localeval {localeval.__version__} (transformers)", "samples": t["samples"],
            "samples_done": t["samples"], "finished": True, "wall_seconds": t["wall_seconds"],
            "process_seconds": round(process, 3), "load_seconds": round(process - t["wall_seconds"], 3),
            "samples_per_second": t["samples_per_second"], "judge_calls": t["judge_calls"],
            "engine_calls": t.get("engine_calls"), "rounds": t.get("rounds"), "prompt_tokens": t["prompt_tokens"],
            "completion_tokens": t["completion_tokens"], "metrics": metrics, "judge": summary["run"]["judge"],
            "command": " ".join(command[2:]).replace(str(data), "CONVERSATIONS.jsonl")}


def run_ragas(data: Path, args: argparse.Namespace) -> dict[str, Any]:
    """ragas_agents_run.py in the Ragas venv, timed from start to exit; its JSON (partial when stopped)."""
    python = Path(args.ragas_python)
    if not python.exists():
        raise SystemExit(f"{python} not found: run `bash benchmarks/ragas/setup_ragas.sh`, or pass --skip-ragas")
    out = Path(args.ragas_json or REPO / "runs" / f"ragas_agents_n{args.n}.json")
    command = [str(python), "-m", "benchmarks.ragas.ragas_agents_run", "--samples", str(data),
               "--judge", model_path(args.judge), "--out", str(out), "--max-tokens", str(args.ragas_max_tokens)]
    command += ["--threads", str(args.threads)] if args.threads else []
    command += ["--time-limit", str(args.ragas_time_limit)] if args.ragas_time_limit else []
    env = {**os.environ, "RAGAS_DO_NOT_TRACK": "true", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    print("running Ragas:", " ".join(command), file=sys.stderr, flush=True)
    started = time.perf_counter()
    hard_limit = args.ragas_time_limit * 2 + 600 if args.ragas_time_limit else None  # one conversation may overrun
    stopped = None
    try:
        subprocess.run(command, env=env, cwd=REPO, check=True, timeout=hard_limit)
    except subprocess.TimeoutExpired:
        stopped = f"killed after {hard_limit:.0f} s"
    data_out = json.loads(out.read_text())
    data_out["process_seconds"] = round(time.perf_counter() - started, 3)
    data_out["stopped"] = stopped or data_out.get("stopped")
    data_out["command"] = " ".join(command[1:]).replace(str(data), "CONVERSATIONS.jsonl")
    return data_out


def system_table(r: dict[str, Any]) -> str:
    done = str(r["samples"]) if r.get("finished") else f"{r['samples_done']}/{r['samples']}"
    lines = [f"== {r['system']}: {done} conversations, whole process {_num(r.get('process_seconds'), '.1f')} s "
             f"(scoring {r['wall_seconds']:.1f} s), {r['judge_calls']} judge calls, {r['prompt_tokens']} prompt + "
             f"{r['completion_tokens']} completion tokens"]
    if r.get("stopped"):
        lines.append(f"   stopped early: {r['stopped']}; figures cover the conversations it finished")
    head = f"{'metric':<38} {'mean':>6} {'NaN':>10} {'why':<30} {'calls':>6} {'compl tok':>9}"
    lines += [head, "-" * len(head)]
    for name in METRICS:
        m = r["metrics"].get(name)
        if m is not None:
            nan = f"{m['nan_count']}/{m.get('scored', r['samples_done'])}"
            lines.append(f"{name:<38} {_num(m['mean']):>6} {nan:>10} {_reasons(m)[:30]:<30} {m['calls']:>6} "
                         f"{m['completion_tokens']:>9}")
    return "\n".join(lines)


def ratios(local: dict[str, Any], ragas: dict[str, Any]) -> dict[str, Any]:
    """Ragas / localeval per conversation (Ragas may have stopped early), and whole processes."""
    n_l, n_r = local["samples_done"], ragas["samples_done"]
    if not n_r:
        return {"note": "Ragas finished no conversation"}
    ragas_whole, basis = ragas_process_seconds(ragas)
    return {"scoring_speedup": round(ragas["wall_seconds"] / n_r / (local["wall_seconds"] / n_l), 2),
            "whole_process_speedup": round(ragas_whole / local["process_seconds"], 2),
            "ragas_whole_seconds": round(ragas_whole, 1), "ragas_whole_basis": basis,
            "judge_calls_per_conversation": [round(local["judge_calls"] / n_l, 2),
                                             round(ragas["judge_calls"] / n_r, 2)],
            "completion_tokens_per_conversation": [round(local["completion_tokens"] / n_l, 1),
                                                   round(ragas["completion_tokens"] / n_r, 1)]}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n", type=int, default=8, help="conversations")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--judge", default=DEFAULT_JUDGE, help="local judge model folder (both systems)")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads, both systems")
    parser.add_argument("--skip-ragas", action="store_true", help="run localeval only")
    parser.add_argument("--ragas-python", default=str(RAGAS_PYTHON))
    parser.add_argument("--ragas-json", default=None, help="where ragas_agents_run.py writes while it runs")
    parser.add_argument("--ragas-max-tokens", type=int, default=1024, help="Ragas' default max_tokens")
    parser.add_argument("--ragas-time-limit", type=float, default=None,
                        help="Ragas starts no new conversation after this many seconds")
    parser.add_argument("--run-dir", default=str(REPO / "runs" / "bench-agents-localeval"))
    parser.add_argument("--out", default=None, help="default: results/agents_vs_ragas_nN.json")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    machine = describe_machine()
    rows = build_conversations(args.n, args.seed)
    print(f"{len(rows)} conversations (seed {args.seed}); machine: {machine_line(machine)}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        data = write_jsonl(rows, Path(tmp) / "conversations.jsonl")
        local = run_localeval(data, args)
        print(system_table(local), flush=True)
        ragas = None if args.skip_ragas else run_ragas(data, args)
    if ragas:
        print(system_table(ragas), flush=True)
    ratio = ratios(local, ragas) if ragas else None
    if ratio and "scoring_speedup" in ratio:
        print(f"\nlocaleval is {ratio['whole_process_speedup']}x faster, whole processes (localeval "
              f"{local['process_seconds']:.0f} s, Ragas {ratio['ragas_whole_seconds']:.0f} s: "
              f"{ratio['ragas_whole_basis']}); {ratio['scoring_speedup']}x on scoring per conversation")
    given = sys.argv[1:] if argv is None else argv
    result = {"command": "python -m benchmarks.speed.agents_vs_ragas " + " ".join(given),
              "machine": machine, "machine_load_at_end": [round(x, 2) for x in os.getloadavg()],
              "conversations": {"generator": "build_conversations", "n": args.n, "seed": args.seed, "rows": rows},
              "metrics": list(METRICS), "localeval": local, "ragas": ragas, "ragas_over_localeval": ratio}
    print(f"wrote {write_json(args.out or RESULTS / f'agents_vs_ragas_n{args.n}.json', result)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
