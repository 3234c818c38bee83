"""Each server kind's request body and reply, against the shapes its documentation gives (sources in
played_servers.py): the schema's spelling, neutral sampling, n and seeds, log-probabilities, usage."""

from __future__ import annotations

import math

import pytest

from localeval.engine.base import TOP_LOGPROBS, Request
from localeval.engine.server.dialects import DIALECTS, parse_ollama, parse_openai

SCHEMA = {"type": "object", "properties": {"verdict": {"type": "integer", "enum": [0, 1]}}, "required": ["verdict"]}
ASK = Request(messages=(("system", "judge"), ("user", '{"x": 1}')), schema=SCHEMA, max_tokens=90, temperature=0.7,
              n=3, seed=5)
MESSAGES = [{"role": "system", "content": "judge"}, {"role": "user", "content": '{"x": 1}'}]


@pytest.mark.parametrize(("kind", "spelled"), [
    ("vllm", {"structured_outputs": {"json": SCHEMA}}),  # docs.vllm.ai features/structured_outputs
    ("vllm-legacy", {"guided_json": SCHEMA}),
    ("sglang", {"response_format": {"type": "json_schema",
                                    "json_schema": {"name": "answer", "schema": SCHEMA, "strict": True}}}),
    ("llamacpp", {"json_schema": SCHEMA}),  # llama.cpp tools/server/README.md; an open object: no compact grammar
    ("openai", {"response_format": {"type": "json_schema",
                                    "json_schema": {"name": "answer", "schema": SCHEMA, "strict": True}}}),
])
def test_an_openai_style_body_spells_the_schema_its_servers_way_and_sampling_in_full(kind, spelled) -> None:
    body = DIALECTS[kind].body("judge", ASK, 3, 7, False, 2048)
    assert {k: body[k] for k in spelled} == spelled
    assert body["model"] == "judge" and body["messages"] == MESSAGES and body["max_tokens"] == 90
    assert body["temperature"] == 0.7 and body["seed"] == 7 and body["n"] == 3 and body["stream"] is False
    assert body["top_p"] == 1.0
    if kind in ("vllm", "vllm-legacy", "sglang"):
        assert (body["top_k"], body["min_p"], body["repetition_penalty"]) == (-1, 0.0, 1.0)
    if kind == "llamacpp":
        assert (body["top_k"], body["min_p"], body["repeat_penalty"]) == (0, 0.0, 1.0)
    assert "logprobs" not in body


def test_a_greedy_single_ask_sends_no_seed_or_n_and_soft_asks_for_the_top_logprobs() -> None:
    greedy = Request(messages=ASK.messages, schema=SCHEMA, max_tokens=40, soft=True)
    body = DIALECTS["vllm"].body("judge", greedy, 1, 0, True, None)
    assert "seed" not in body and "n" not in body and body["temperature"] == 0.0
    assert body["logprobs"] is True and body["top_logprobs"] == TOP_LOGPROBS


def test_ollama_asks_its_native_chat_with_format_and_sends_num_ctx_so_it_never_cuts_silently() -> None:
    dialect = DIALECTS["ollama"]
    body = dialect.body("judge:latest", ASK, 1, 6, True, 4096)  # ollama/ollama docs/api.md, Chat (Structured outputs)
    assert dialect.path == "/api/chat" and not dialect.many
    assert body["format"] == SCHEMA and body["stream"] is False and body["messages"] == MESSAGES
    assert body["options"] == {"temperature": 0.7, "num_predict": 90, "num_ctx": 4096, "seed": 6, "top_p": 1.0,
                               "top_k": 0, "min_p": 0.0, "repeat_penalty": 1.0}
    assert body["logprobs"] is True and body["top_logprobs"] == TOP_LOGPROBS


def test_which_kinds_take_n_samples_in_one_request() -> None:
    assert {k for k, d in DIALECTS.items() if d.many} == {"vllm", "vllm-legacy", "sglang"}


def test_a_chat_completion_reply_gives_texts_finishes_usage_and_cached_tokens() -> None:
    reply = parse_openai({
        "choices": [{"index": 1, "message": {"content": "B"}, "finish_reason": "length"},
                    {"index": 0, "message": {"content": "A"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 64}},
    })
    assert [(c.text, c.finish, c.tokens) for c in reply.completions] == [("A", "stop", 4), ("B", "length", 3)]
    assert (reply.prompt_tokens, reply.cached_tokens) == (100, 64)
    # vLLM without --enable-prompt-tokens-details: null details, no cached tokens said
    no_details = {"choices": [], "usage": {"prompt_tokens": 5, "prompt_tokens_details": None}}
    assert parse_openai(no_details).cached_tokens == 0


def test_llama_server_says_its_cached_prompt_tokens_in_its_timings() -> None:
    reply = parse_openai({"choices": [{"index": 0, "message": {"content": "{}"}, "finish_reason": "stop"}],
                          "usage": {"prompt_tokens": 237, "completion_tokens": 2},
                          "timings": {"cache_n": 236, "prompt_n": 1}})  # llama.cpp README, Timings and context usage
    assert (reply.prompt_tokens, reply.cached_tokens, reply.completions[0].tokens) == (237, 236, 2)


def test_log_probabilities_come_back_per_position_with_their_top_tokens() -> None:
    content = [{"token": "1", "logprob": -0.475, "top_logprobs": [{"token": "1", "logprob": -0.475},
                                                                 {"token": "0", "logprob": -0.975}]},
               {"token": "}", "logprob": 0.0, "top_logprobs": []}]
    reply = parse_openai({"choices": [{"index": 0, "message": {"content": "1}"}, "finish_reason": "stop",
                                       "logprobs": {"content": content}}], "usage": {"completion_tokens": 9}})
    steps = reply.completions[0].steps
    assert steps == [[("1", -0.475), ("0", -0.975)], [("}", 0.0)]]
    assert reply.completions[0].tokens == 2  # counted from the positions, not the usage's total
    assert math.isclose(sum(math.exp(lp) for _, lp in steps[0]), 1.0, abs_tol=2e-3)


def test_an_ollama_reply_gives_its_text_reason_counts_and_logprobs() -> None:
    logprobs = [{"token": "{", "logprob": -0.1, "top_logprobs": [{"token": "{", "logprob": -0.1}]}]
    reply = parse_ollama({"message": {"role": "assistant", "content": '{"age": 22}'}, "done_reason": "stop",
                          "done": True, "prompt_eval_count": 34, "eval_count": 12, "logprobs": logprobs})
    completion = reply.completions[0]
    assert (completion.text, completion.finish, completion.tokens) == ('{"age": 22}', "stop", 12)
    assert reply.prompt_tokens == 34
    assert completion.steps == [[("{", -0.1)]]
