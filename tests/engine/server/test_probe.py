"""Enforcement proved before a run (``probe.py``): a server that takes a schema and ignores it stops the run with
its URL and the fix, never unconstrained output; free whitespace is noted; ``--soft`` is checked before the run."""

from __future__ import annotations

import json
import warnings

import pytest

from localeval.api import evaluate
from localeval.config import JudgeOptions
from localeval.embed import HashEmbedder
from localeval.engine.server import ServerEngine
from localeval.engine.server.probe import probe_request
from localeval.errors import LocalevalError

DEMO = "examples/rag_demo.jsonl"


def test_the_probe_schema_forces_a_random_key_and_value_no_model_writes_by_chance() -> None:
    request, forced = probe_request()
    (key, value), = forced.items()
    assert request.schema["properties"][key] == {"type": "string", "enum": [value]}
    assert request.schema["required"] == [key, "verdict"] and request.schema["additionalProperties"] is False
    assert probe_request()[1] != forced  # drawn afresh each time


@pytest.mark.parametrize("kind", ["vllm", "sglang", "llamacpp", "ollama", "openai"])
def test_a_server_that_enforces_passes_the_probe_in_its_own_spelling(played, kind) -> None:
    server = played(kind)
    ServerEngine(server.url).connect()
    probe = server.chats()[-1]
    assert "Say hello" in probe["messages"][-1]["content"]


def test_the_removed_guided_json_accepted_and_ignored_is_caught_with_the_fix(played) -> None:
    server = played("vllm")  # vLLM 0.32: guided_json accepted, HTTP 200, unconstrained
    with pytest.raises(LocalevalError) as stopped:
        ServerEngine(server.url, kind="vllm-legacy").connect()
    message = str(stopped.value)
    assert f"the judge server at {server.url} (vllm-legacy) accepts a JSON schema sent as guided_json but does not " \
           "enforce it" in message
    assert "Hello! How can I help you today?" in message and "never asks a judge unconstrained" in message
    assert "use --server-kind vllm, which sends structured_outputs" in message
    assert len(server.chats()) == 1  # the probe alone: no ask was sent


def test_a_server_that_ignores_every_schema_stops_the_run_before_any_ask(played, tmp_path) -> None:
    server = played("openai", enforce=False)
    with pytest.raises(LocalevalError, match=r"does not enforce it.*--server-kind vllm, sglang, llamacpp or ollama"):
        evaluate(DEMO, metrics="faithfulness", embedder=HashEmbedder(), out=tmp_path / "run", progress=False,
                 judge_options=JudgeOptions.server(server.url))
    assert len(server.chats()) == 1 and not (tmp_path / "run" / "summary.json").exists()


def test_an_old_vllm_is_sent_guided_json_which_it_enforces(played) -> None:
    server = played("vllm-old")
    assert ServerEngine(server.url).connect().dialect.kind == "vllm-legacy"
    assert "guided_json" in server.chats()[-1]


def test_free_whitespace_in_the_servers_json_is_noted_with_the_flags_that_make_it_compact(played) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        engine = ServerEngine(played("vllm", compact=False).url).connect()
    assert any("lets its grammar write free whitespace" in note and "disable_any_whitespace true" in note
               for note in engine.notes)
    assert any("free whitespace" in str(w.message) for w in caught)
    assert not any("whitespace" in note for note in ServerEngine(played("vllm").url).connect().notes)


def test_soft_verdicts_need_logprobs_after_the_grammars_mask_and_say_so_before_the_run(played, tmp_path) -> None:
    ServerEngine(played("vllm").url).connect().require_soft()  # masked: every token with mass at a verdict is 0 or 1
    raw = played("llamacpp", masked=False)  # probabilities before the grammar (llama.cpp README, n_probs)
    with pytest.raises(LocalevalError, match=r"--soft needs .* taken before its grammar's mask.*Run without --soft"):
        ServerEngine(raw.url).connect().require_soft()
    asked = len(raw.chats())
    with pytest.raises(LocalevalError, match=r"--soft needs"):
        evaluate(DEMO, metrics="faithfulness", embedder=HashEmbedder(), soft=True, progress=False,
                 judge_options=JudgeOptions.server(raw.url))
    assert all("Say hello" in json.dumps(body) for body in raw.chats()[asked:])  # probes only, no ask
