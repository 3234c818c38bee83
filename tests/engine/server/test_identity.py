"""What each played server says of itself, read the way ``identity.py`` reads it: its kind from where it says it,
the model, its version and weights, the window and the tokenizer; and the errors that say what to fix."""

from __future__ import annotations

import pytest

from localeval.engine.server.identity import CHAT_TOKENIZE, TEMPLATE_TOKENIZE, discover, root_of
from localeval.engine.server.transport import Transport
from localeval.errors import LocalevalError


def _identity(server, **options):
    transport = Transport(root_of(server.url), retries=0)
    try:
        return discover(transport, server.url, **options)
    finally:
        transport.close()


@pytest.mark.parametrize(("kind", "found", "model", "source", "version", "window", "tokenizer"), [
    ("vllm", "vllm", "judge", "/models/smollm2", "0.32.0", 4096, CHAT_TOKENIZE),
    ("vllm-old", "vllm-legacy", "judge", "/models/smollm2", "0.9.2", 4096, ""),  # before structured_outputs
    ("sglang", "sglang", "judge", "/models/smollm2", "0.5.4", 4096, CHAT_TOKENIZE),
    ("llamacpp", "llamacpp", "../models/judge.gguf", "../models/judge.gguf", "b6500-abc1234", 4096,
     TEMPLATE_TOKENIZE),
    ("ollama", "ollama", "judge:latest", "sha256:5a0e", "0.12.6", 4096, ""),
    ("openai", "openai", "judge", "", "", None, ""),
])
def test_each_server_kind_is_told_from_where_it_says_it(played, kind, found, model, source, version, window,
                                                        tokenizer) -> None:
    identity = _identity(played(kind))
    assert (identity.kind, identity.model, identity.source, identity.version) == (found, model, source, version)
    assert (identity.window, identity.tokenizer) == (window, tokenizer)


def test_the_judge_names_kind_model_weights_and_version_so_another_model_behind_the_url_misses_the_cache(
        played) -> None:
    one = _identity(played("vllm")).judge
    assert one == "vllm:judge:/models/smollm2:0.32.0"
    assert _identity(played("vllm", version="0.33.0")).judge != one
    assert _identity(played("vllm", model="other")).judge != one
    assert _identity(played("openai")).judge == "openai:judge:unversioned"


def test_llama_server_says_its_slots(played) -> None:
    assert _identity(played("llamacpp")).slots == 3


def test_a_named_kind_is_taken_at_the_users_word(played) -> None:
    assert _identity(played("vllm"), kind="openai").kind == "openai"


def test_the_model_is_the_only_one_listed_unless_named_and_a_wrong_name_lists_the_served_ones(played) -> None:
    server = played("vllm")
    assert _identity(server, model="judge").model == "judge"
    with pytest.raises(LocalevalError, match=r"does not serve 'gpt-4'; it serves: judge"):
        _identity(server, model="gpt-4")


def test_an_ollama_model_is_named_with_or_without_its_tag_and_its_window_is_its_num_ctx(played) -> None:
    server = played("ollama", window=8192)
    assert _identity(server, model="judge").model == "judge"
    assert _identity(server).window == 8192  # from /api/show's parameters
    assert _identity(server, max_model_len=2048).window == 2048  # the num_ctx localeval then sends
    with pytest.raises(LocalevalError, match=r"no model 'llama3'.*ollama pull llama3"):
        _identity(server, model="llama3")


def test_max_model_len_caps_the_window_a_server_says(played) -> None:
    assert _identity(played("vllm", window=8192), max_model_len=2048).window == 2048
    assert _identity(played("openai"), max_model_len=2048).window == 2048


def test_an_unreachable_url_says_how_to_check_it() -> None:
    transport = Transport("http://127.0.0.1:9", retries=0)
    with pytest.raises(LocalevalError, match=r"cannot be reached .*is it up, and is this its OpenAI base URL"):
        discover(transport, "http://127.0.0.1:9/v1")


def test_an_unknown_kind_lists_the_known_ones(played) -> None:
    with pytest.raises(LocalevalError, match=r"unknown server kind 'tgi'; use auto or one of vllm, vllm-legacy"):
        _identity(played("vllm"), kind="tgi")


def test_the_root_is_the_url_without_its_openai_v1() -> None:
    assert root_of("http://gpu:8000/v1") == "http://gpu:8000"
    assert root_of("https://gateway/llm/v1/") == "https://gateway/llm"
