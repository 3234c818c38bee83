"""speed/agents_vs_ragas.py stays importable: its arguments, the conversations it builds, the command it times."""

from __future__ import annotations

import json
from pathlib import Path

import benchmarks.speed.agents_vs_ragas as avr
from localeval.data import load_samples


def test_arguments_default_to_one_thread_and_the_bundled_judge():
    args = avr.parse_args(["--n", "3", "--ragas-time-limit", "60"])
    assert args.n == 3 and args.threads == 1 and args.ragas_time_limit == 60.0
    assert args.judge.endswith("smollm2-135m-instruct") and not args.skip_ragas


def test_conversations_are_deterministic_varied_and_in_ragas_shape(tmp_path: Path):
    rows = avr.build_conversations(12, seed=3)
    assert rows == avr.build_conversations(12, seed=3) and rows != avr.build_conversations(12, seed=4)
    for row in rows:
        messages = row["user_input"]
        assert messages[0]["type"] == "human" and 1 <= sum(m["type"] == "human" for m in messages) <= 3
        assert row["reference"] and row["reference_topics"] and row["reference_tool_calls"]
        calls = [call for m in messages for call in m.get("tool_calls", [])]
        assert calls and all(isinstance(call["args"], dict) and call["args"] for call in calls)
        assert len(calls) == sum(m["type"] == "tool" for m in messages)
    names = {call["name"] for row in rows for call in row["reference_tool_calls"]}
    assert {"weather_lookup", "book_table", "flight_search", "convert_currency"} <= names
    path = avr.write_jsonl(rows, tmp_path / "c.jsonl")
    assert [json.loads(line) for line in path.read_text().splitlines()] == rows
    assert len(load_samples(path)) == 12  # localeval's own reader accepts every conversation


def test_localeval_runs_as_the_command_a_user_types(tmp_path: Path):
    args = avr.parse_args(["--run-dir", str(tmp_path / "run")])
    command = avr.localeval_command(Path("c.jsonl"), args)
    assert command[1:5] == ["-m", "localeval", "evaluate", "c.jsonl"] and "--no-cache" in command
    assert command[command.index("--metrics") + 1] == ",".join(avr.METRICS)
    assert command[command.index("--threads") + 1] == "1"


def test_ratio_per_conversation_when_ragas_stopped_early():
    local = {"samples_done": 4, "wall_seconds": 40.0, "process_seconds": 60.0, "judge_calls": 20,
             "completion_tokens": 800}
    ragas = {"samples": 4, "samples_done": 2, "wall_seconds": 200.0, "load_seconds": 5.0, "judge_calls": 14,
             "completion_tokens": 3000}
    out = avr.ratios(local, ragas)
    assert out["scoring_speedup"] == 10.0 and out["ragas_whole_seconds"] == 405.0
    assert out["judge_calls_per_conversation"] == [5.0, 7.0]
