"""speed/speed_vs_ragas.py's whole-process timing: the command it times, and how Ragas' whole run is counted."""

from __future__ import annotations

from pathlib import Path

import pytest

import benchmarks.speed.speed_vs_ragas as svr


def _args(*argv: str):
    parser = svr.argparse.ArgumentParser()
    svr.add_judge_arguments(parser)
    parser.add_argument("--progress", action="store_true")
    parser.add_argument("--run-dir", default="runs/x")
    return parser.parse_args(list(argv))


def test_localeval_runs_as_the_command_a_user_types_with_the_same_settings():
    command = svr.localeval_command(Path("s.jsonl"), _args("--threads", "1", "--dtype", "bfloat16"))
    assert command[1:4] == ["-m", "localeval", "evaluate"] and command[4] == "s.jsonl"
    assert ",".join(svr.METRICS) in command and "--no-cache" in command and "--no-progress" in command
    assert command[command.index("--threads") + 1] == "1" and command[command.index("--dtype") + 1] == "bfloat16"
    plain = svr.localeval_command(Path("s.jsonl"), _args())
    assert "--dtype" not in plain and "--stop-repeats" not in plain  # auto: the engine's own default
    assert "--stop-repeats" in svr.localeval_command(Path("s.jsonl"), _args("--stop-repeats"))
    assert "--judge-every-copy" not in plain  # the default merges repeated statements
    assert "--judge-every-copy" in svr.localeval_command(Path("s.jsonl"), _args("--judge-every-copy"))


def test_ragas_whole_run_is_its_process_when_timed_else_loading_and_scoring_in_its_favour():
    timed = {"samples": 2, "samples_done": 2, "process_seconds": 130.0, "load_seconds": 10.0, "wall_seconds": 100.0}
    assert svr.ragas_process_seconds(timed) == (130.0, "its process, from start to exit")
    reused = {**timed, "process_seconds": None}
    seconds, basis = svr.ragas_process_seconds(reused)
    assert seconds == 110.0 and "in Ragas' favour" in basis
    stopped = {**reused, "samples": 4}  # finished 2 of 4: scoring projected per sample
    seconds, basis = svr.ragas_process_seconds(stopped)
    assert seconds == pytest.approx(210.0) and "projected from the 2 samples" in basis


def test_the_ratio_gains_the_whole_process_speedup():
    local = {"samples_done": 2, "wall_seconds": 40.0, "judge_calls": 30, "completion_tokens": 900,
             "process_seconds": 55.0}
    ragas = {"samples": 2, "samples_done": 2, "wall_seconds": 100.0, "judge_calls": 12, "completion_tokens": 1200,
             "load_seconds": 10.0}
    out = svr.ratios(local, ragas)
    assert out["speedup"] == 2.5 and out["whole_process_speedup"] == 2.0 and out["ragas_whole_seconds"] == 110.0


def test_the_system_names_the_dtype_the_judge_ran_in_and_the_repeat_guard():
    usage = {"judge_calls": 1, "completion_tokens": 2, "prompt_tokens": 3, "engine_seconds": 4.0}
    summary = {"total": {"samples": 1, "wall_seconds": 5.0, "samples_per_second": 0.2, "judge_calls": 1,
                         "engine_calls": 1, "rounds": 1, "prompt_tokens": 3, "completion_tokens": 2},
               "metrics": {name: {"mean": 0.5} for name in svr.METRICS},
               "usage": {name: usage for name in svr.METRICS},
               "run": {"judge": "transformers:judge@abc:float32:stop-repeats"}}
    figures = svr.localeval_figures(summary, _args("--stop-repeats"))
    assert figures["system"].endswith("(transformers, float32 + stop-repeats)")
    summary["run"]["judge"] = "transformers:judge@abc:bfloat16"
    assert svr.localeval_figures(summary, _args())["system"].endswith("(transformers, bfloat16)")
