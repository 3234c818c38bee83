"""The server engine on played servers: a round in flight together, prefixes sent together, n as each server takes
it, tokens and the window from the server, soft verdicts renormalised over the allowed tokens, several servers."""

from __future__ import annotations

import json
import math
import threading
import time

import pytest

from localeval.api import evaluate
from localeval.config import JudgeOptions
from localeval.embed import HashEmbedder
from localeval.engine.base import Request, invariance_of
from localeval.engine.server import ServerEngine
from localeval.nan import Nan

DEMO = "examples/rag_demo.jsonl"
VERDICT = {"type": "object", "properties": {"reason": {"type": "string"}, "verdict": {"type": "integer",
                                                                                     "enum": [0, 1]}},
           "required": ["reason", "verdict"], "additionalProperties": False}


def _ask(text: str = "is it so?", **fields) -> Request:
    return Request(messages=(("system", "You judge."), ("user", json.dumps({"answer": text, "context": text}))),
                   schema=VERDICT, max_tokens=fields.pop("max_tokens", 60), **fields)


def test_a_rounds_asks_are_in_flight_together_not_one_by_one(played) -> None:
    server = played("vllm", faults=["slow:0.4"] * 8)
    engine = ServerEngine(server.url).connect()
    server.faults.extend(["slow:0.4"] * 8)
    started = time.perf_counter()
    results = engine.generate([_ask(f"a{i}") for i in range(8)])
    assert time.perf_counter() - started < 2.4  # one by one: 3.2 s (room for a busy machine)
    assert all(r.choices[0].finish_reason == "stop" for r in results)


def test_the_concurrency_option_caps_the_asks_in_flight(played) -> None:
    server = played("vllm")
    engine = ServerEngine(server.url, concurrency=2).connect()
    server.faults.extend(["slow:0.2"] * 6)
    started = time.perf_counter()
    engine.generate([_ask(f"a{i}") for i in range(6)])
    assert time.perf_counter() - started >= 0.6  # three waves of two


def test_answers_come_back_in_request_order_and_are_reported_as_each_arrives_in_the_calling_thread(played) -> None:
    engine = ServerEngine(played("vllm").url).connect()
    reported: list[tuple[int, str]] = []
    asks = [_ask(text) for text in ("zebra", "apple", "mango")]
    results = engine.generate(asks, on_result=lambda i, r: reported.append((i, threading.current_thread().name)))
    assert sorted(i for i, _ in reported) == [0, 1, 2]
    assert {name for _, name in reported} == {threading.current_thread().name}
    assert [json.loads(r.choices[0].text)["reason"] for r in results] == ["word overlap"] * 3


def test_asks_that_share_a_prefix_are_sent_one_after_the_other(played) -> None:
    server = played("vllm")
    engine = ServerEngine(server.url, concurrency=1).connect()
    other = Request(messages=(("system", "Another prompt."), ("user", "{}")), schema=VERDICT)
    engine.generate([_ask("b"), other, _ask("a"), other, _ask("c")])
    systems = [body["messages"][0]["content"] for body in server.chats()[1:]]
    assert systems == ["Another prompt."] * 2 + ["You judge."] * 3


def test_seeded_samples_go_as_n_where_the_server_takes_it_and_as_seeded_requests_where_not(played) -> None:
    vllm = played("vllm")
    result = ServerEngine(vllm.url).connect().generate([_ask(n=3, temperature=0.7, seed=11)])[0]
    body = vllm.chats()[-1]
    assert (body["n"], body["seed"], len(result.choices)) == (3, 11, 3)
    llama = played("llamacpp")
    result = ServerEngine(llama.url).connect().generate([_ask(n=3, temperature=0.7, seed=11)])[0]
    assert sorted((b.get("n"), b["seed"]) for b in llama.chats()[1:]) == [(None, 11), (None, 12), (None, 13)]
    assert len(result.choices) == 3


def test_a_greedy_ask_for_n_answers_is_asked_once_since_greedy_answers_are_the_same(played) -> None:
    server = played("vllm")  # vLLM refuses n > 1 when greedy (HTTP 400)
    result = ServerEngine(server.url).connect().generate([_ask(n=3)])[0]
    assert "n" not in server.chats()[-1] and len(result.choices) == 3 and result.error is None


def test_tokens_come_from_the_servers_usage(played) -> None:
    engine = ServerEngine(played("sglang").url).connect()
    result = engine.generate([_ask()])[0]
    body = {"role": "user", "content": json.dumps({"answer": "is it so?", "context": "is it so?"})}
    prompt = sum(len(m["content"]) // 4 + 4 for m in ({"content": "You judge."}, body)) + 2
    assert (result.prompt_tokens, result.cached_prompt_tokens) == (prompt, prompt // 2)
    assert result.choices[0].completion_tokens == len(result.choices[0].text) // 3 + 1
    assert engine.prefix_cache_hit_rate == pytest.approx((prompt // 2) / prompt)


def test_the_servers_tokenizer_counts_an_ask_near_the_window_and_an_estimate_does_elsewhere(played) -> None:
    server = played("vllm", window=1000)
    engine = ServerEngine(server.url).connect()
    before = len(server.seen)
    short, near, long = _ask("x"), _ask("word " * 60, max_tokens=300), _ask("word " * 300, max_tokens=100)
    engine.count_prompt_tokens(short)
    assert engine.counter.counted == 0 and len(server.seen) == before  # well inside: no request at all
    assert engine.count_prompt_tokens(near) < 300  # near: the template counted once, and the bound fits
    assert engine.counter.counted == 1
    assert engine.count_prompt_tokens(long) == sum(len(c) // 4 + 4 for _, c in long.messages) + 2
    assert engine.counter.counted == 2


def test_an_ask_longer_than_the_window_scores_nan_context_too_long(played) -> None:
    result = evaluate(DEMO, metrics="faithfulness", embedder=HashEmbedder(), progress=False,
                      judge_options=JudgeOptions.server(played("vllm", window=200).url))
    assert all(o == Nan("context_too_long") for o in result.scores("faithfulness"))


def test_a_servers_400_for_a_prompt_too_long_becomes_context_too_long(played) -> None:
    server = played("openai")  # says no window: the ask is sent, and the server refuses it
    engine = ServerEngine(server.url).connect()
    server.window = 100
    result = engine.generate([_ask("word " * 200)])[0]
    assert result.choices[0].finish_reason == "context_too_long" and result.prompt_tokens > 100


def test_soft_verdicts_are_p1_renormalised_over_the_0_and_1_the_grammar_allows(played) -> None:
    result = ServerEngine(played("vllm").url).connect().generate([_ask(soft=True)])[0]
    choice = result.choices[0]
    verdict = json.loads(choice.text)["verdict"]
    assert choice.verdict_probs == (pytest.approx(0.8 if verdict else 0.2),)
    p1 = choice.verdict_probs[0]
    assert math.isclose(p1 + (1 - p1), 1.0)


def test_several_servers_share_a_round(played) -> None:
    one, two = played("vllm"), played("vllm")
    engine = ServerEngine([one.url, two.url], concurrency=1).connect()
    for server in (one, two):
        server.faults.extend(["slow:0.1"] * 10)
    engine.generate([_ask(f"a{i}") for i in range(10)])
    assert len(one.chats()) > 2 and len(two.chats()) > 2  # each took a share (besides its probe)
    assert len(one.chats()) + len(two.chats()) == 12


def test_servers_that_serve_different_judges_are_refused(played) -> None:
    with pytest.raises(Exception, match=r"do not serve one judge: .* serves vllm:judge:.*0.32.0, .* serves "
                                        r"vllm:judge:.*0.31.0"):
        ServerEngine([played("vllm").url, played("vllm", version="0.31.0").url]).connect()


def test_a_server_is_not_batch_invariant_and_says_to_share_a_cache(played) -> None:
    said = invariance_of(ServerEngine(played("vllm").url).connect())
    assert said.batch_invariant is False and "batches each ask" in said.note


def test_the_fingerprint_names_the_served_judge(played) -> None:
    assert ServerEngine(played("vllm").url).connect().fingerprint == "server:vllm:judge:/models/smollm2:0.32.0"


@pytest.mark.slow  # a fresh interpreter imports localeval
def test_importing_localeval_never_imports_the_server_engine_or_httpx() -> None:
    import subprocess
    import sys

    code = ("import sys, localeval, localeval.api, localeval.cli.app\n"
            "assert 'httpx' not in sys.modules and 'localeval.engine.server' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)
