"""The server engine from the command line: ``--engine server --server-url``, its options checked, the API key from
the environment or a file and found nowhere in the run folder or the output, rescore and estimate on its runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localeval.cli import main

DEMO = "examples/rag_demo.jsonl"
METRICS = "faithfulness,context_precision"  # judge only: no embedder to load
KEY = "sk-local-8f3a2c91d7e4b6a0"


def _evaluate(url: str, out: Path, *extra: str) -> int:
    return main(["evaluate", DEMO, "--out", str(out), "--metrics", METRICS, "--engine", "server", "--server-url", url,
                 "--no-progress", *extra])


def _everything_in(folder: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file())


def test_evaluate_on_a_judge_server_with_its_key_from_the_environment_leaves_the_key_nowhere(
        played, tmp_path, monkeypatch, capsys) -> None:
    server = played("vllm", key=KEY)
    monkeypatch.setenv("LOCALEVAL_SERVER_API_KEY", KEY)
    assert _evaluate(server.url, tmp_path / "run") == 0
    output = capsys.readouterr()
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["run"]["config"]["engine"]["engine"] == "server"
    assert summary["run"]["config"]["engine"]["extra"]["urls"] == [server.url]
    assert summary["run"]["judge"].startswith("server:vllm:judge:")
    assert summary["run"]["invariance"]["batch_invariant"] is False
    assert {"summary.json", "scores.jsonl", "judge.sqlite", "report.html"} <= {p.name for p in
                                                                              (tmp_path / "run").iterdir()}
    assert KEY.encode() not in _everything_in(tmp_path / "run")
    assert KEY not in output.out + output.err
    assert all(headers["Authorization"] == f"Bearer {KEY}" for _, _, _, headers in server.seen)


def test_a_wrong_key_stops_before_the_run_with_a_message_that_does_not_show_it(played, tmp_path, monkeypatch,
                                                                             capsys) -> None:
    server = played("vllm", key=KEY)
    monkeypatch.setenv("LOCALEVAL_SERVER_API_KEY", "sk-wrong-0000")
    assert _evaluate(server.url, tmp_path / "run") == 1
    err = capsys.readouterr().err
    assert f"the judge server at {server.url} refused the API key (HTTP 401: Unauthorized)" in err
    assert "LOCALEVAL_SERVER_API_KEY" in err and "sk-wrong-0000" not in err and KEY not in err
    assert not (tmp_path / "run" / "summary.json").exists()


def test_the_key_may_come_from_a_file_or_a_variable_named_for_it(played, tmp_path, monkeypatch, capsys) -> None:
    server = played("vllm", key=KEY)
    (tmp_path / "key").write_text(KEY + "\n")
    assert _evaluate(server.url, tmp_path / "a", "--server-api-key-file", str(tmp_path / "key")) == 0
    monkeypatch.setenv("JUDGE_KEY", KEY)
    assert _evaluate(server.url, tmp_path / "b", "--server-api-key-env", "JUDGE_KEY") == 0
    assert b"JUDGE_KEY" in (tmp_path / "b" / "summary.json").read_bytes()  # where it came from, not what it is
    assert KEY.encode() not in _everything_in(tmp_path / "a") + _everything_in(tmp_path / "b")
    assert _evaluate(server.url, tmp_path / "c", "--server-api-key-env", "UNSET_KEY_VAR") == 1
    assert "the environment variable UNSET_KEY_VAR that should hold the judge server's API key is not set" in \
        capsys.readouterr().err


@pytest.mark.parametrize(("argv", "said"), [
    (["--engine", "server"], "--engine server needs --server-url http://HOST:PORT/v1"),
    (["--server-url", "http://127.0.0.1:9/v1"], "--server-url takes --engine server"),
    (["--engine", "server", "--server-url", "http://127.0.0.1:9/v1", "--judge", "smollm2-135m-instruct"],
     "--judge cannot work with a judge server: it serves its own model (name it with --server-model)"),
    (["--engine", "server", "--server-url", "http://127.0.0.1:9/v1", "--deterministic"],
     "--deterministic cannot work with a judge server"),
    (["--engine", "server", "--server-url", "gpu-box:8000"], "--server-url takes http:// or https:// URLs"),
])
def test_the_server_options_say_what_is_missing_or_does_not_fit(argv, said, tmp_path, capsys) -> None:
    """Usage errors: exit 2, before anything is loaded or asked."""
    assert main(["evaluate", DEMO, "--out", str(tmp_path / "run"), "--metrics", METRICS, "--no-progress", *argv]) == 2
    assert said in capsys.readouterr().err


def test_rescore_needs_no_server_and_estimate_runs_on_one(played, tmp_path, capsys) -> None:
    server = played("llamacpp")
    assert _evaluate(server.url, tmp_path / "run") == 0
    server.stop()
    assert main(["rescore", str(tmp_path / "run"), "--no-progress"]) == 0
    other = played("llamacpp")
    assert main(["estimate", DEMO, "--metrics", METRICS, "--engine", "server", "--server-url", other.url,
                 "--sample", "2", "--no-progress"]) == 0
    assert "judge calls" in capsys.readouterr().out
