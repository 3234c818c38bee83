"""Faults at the scale of a run (``dispatch.py``, ``engine.py``, the scheduler): a server gone mid-run stops it naming
the URL with every answer so far in the cache, and the same command resumes; a server of several gone leaves the
round to the others; a refused ask is its own NaN with the server's reason; a cached rerun sends no ask."""

from __future__ import annotations

import pytest
from played_servers import PlayedServer

from localeval.api import evaluate, load_judge
from localeval.config import JudgeOptions
from localeval.embed import HashEmbedder
from localeval.errors import JudgeDied
from localeval.nan import Nan
from localeval.store.cache import JudgeCache

DEMO = "examples/rag_demo.jsonl"
METRICS = "faithfulness,answer_relevancy"  # faithfulness asks twice: its statements, then their verdicts


def _run(url: str, out, **options):
    return evaluate(DEMO, metrics=METRICS, embedder=HashEmbedder(), out=out, progress=False,
                    judge_options=JudgeOptions.server(url, retries=1, **options))


def _scores(result) -> dict[str, list]:
    return {name: result.scores(name) for name in METRICS.split(",")}


def _answers(cache) -> int:
    with JudgeCache(cache) as store:
        return int(store.stats()["answers"])


def test_a_server_gone_mid_run_stops_it_naming_the_url_and_the_same_command_resumes(played, tmp_path) -> None:
    reference = _scores(_run(played("vllm").url, tmp_path / "reference"))
    server = played("vllm", faults=["ok"] * 13 + ["die"])  # the probe, round 1's 12 asks, then a kill in round 2
    with pytest.raises(JudgeDied) as died:
        _run(server.url, tmp_path / "run")
    message = str(died.value)
    cache = tmp_path / "run" / "judge.sqlite"
    kept = _answers(cache)
    assert f"the judge engine died (the judge server at {server.url} is gone: " in message and "(2 tries)" in message
    assert f"The {kept} answers received this run are kept in the judge cache {cache}" in message
    assert 12 <= kept < 18 and not (tmp_path / "run" / "summary.json").exists()
    with PlayedServer("vllm", port=server.port) as restarted:  # the same URL, the same command
        resumed = _run(restarted.url, tmp_path / "run")
        asked = len(restarted.chats()) - 1  # besides its probe
    assert asked == 18 - kept and _scores(resumed) == reference  # only what was missing


def test_a_cached_rerun_sends_no_ask(played, tmp_path) -> None:
    server = played("vllm")
    first = _run(server.url, tmp_path / "run")
    sent = len(server.chats())
    again = _run(server.url, tmp_path / "run")
    assert len(server.chats()) == sent + 1  # the probe alone
    assert _scores(again) == _scores(first)


def test_a_server_of_two_gone_leaves_the_round_to_the_other(played) -> None:
    steady, dying = played("vllm"), played("vllm", faults=["ok", "ok", "die"])
    engine = load_judge(None, JudgeOptions.server(steady.url, dying.url, retries=1, concurrency=2))
    with pytest.warns(UserWarning, match=rf"the judge server at {dying.url} is gone .* goes on on the 1 other"):
        result = evaluate(DEMO, metrics=METRICS, judge=engine, embedder=HashEmbedder(), progress=True)
    assert all(not isinstance(o, Nan) for scores in _scores(result).values() for o in scores)
    assert len(steady.chats()) > len(dying.chats())


def test_a_refused_ask_is_that_asks_nan_with_the_servers_reason(played, tmp_path) -> None:
    server = played("vllm")
    engine = load_judge(None, JudgeOptions.server(server.url, concurrency=1))
    server.faults.extend(["refuse"])
    result = evaluate(DEMO, metrics="faithfulness", judge=engine, embedder=HashEmbedder(), progress=False)
    outcomes = result.scores("faithfulness")
    assert outcomes.count(Nan("engine_error")) == 1 and sum(not isinstance(o, Nan) for o in outcomes) == 5
    details = [str(row["metrics"]["faithfulness"]) for row in result.rows()]
    assert sum("refused the ask (HTTP 400: Invalid JSON schema: unsupported keyword)" in d for d in details) == 1


def test_429s_and_5xx_on_the_way_are_waited_out(played, tmp_path) -> None:
    server = played("vllm")
    engine = load_judge(None, JudgeOptions.server(server.url, retries=2, concurrency=1))
    server.faults.extend(["429:0.1", "500", "ok", "503", "drop"])
    result = evaluate(DEMO, metrics=METRICS, judge=engine, embedder=HashEmbedder(), progress=False)
    assert all(not isinstance(o, Nan) for scores in _scores(result).values() for o in scores)


def test_a_server_that_refuses_every_ask_alike_stops_the_run(played, tmp_path) -> None:
    server = played("vllm")
    server.faults.extend(["ok"] + ["refuse"] * 40)
    with pytest.raises(JudgeDied, match=r"every one of the 12 asks of an engine call failed with the judge server at "):
        _run(server.url, tmp_path / "run")
