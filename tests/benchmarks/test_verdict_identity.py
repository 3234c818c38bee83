"""The verdict-identity benchmark: what counts as a verdict, the reason bound, the shares it reports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import benchmarks.identity.verdict_identity as vi
from localeval.engine.base import Choice, Request, Result

ROOT = Path(__file__).resolve().parents[2]


def _result(*texts: str) -> Result:
    return Result([Choice(t, 5, "stop") for t in texts], prompt_tokens=10)


def test_verdicts_are_the_integers_at_their_place_and_text_answers_have_none():
    assert vi.verdicts('{"reason":"r","verdict":1}') == [(".verdict", 1)]
    assert vi.verdicts('{"items":[{"verdict":0},{"verdict":1}],"n":3}') == [
        (".items[0].verdict", 0), (".items[1].verdict", 1), (".n", 3)]
    assert vi.verdicts('{"statements":["a","b"]}') == []
    assert vi.verdicts("not json") is None


def test_bound_reasons_lowers_every_reason_and_keeps_a_tighter_one():
    schema = {"type": "object", "properties": {
        "reason": {"type": "string", "maxLength": 160},
        "items": {"type": "array", "items": {"type": "object", "properties": {
            "reason": {"type": "string", "maxLength": 30}, "verdict": {"type": "integer"}}}}}}
    bounded = vi.bound_reasons(schema, 40)
    assert bounded["properties"]["reason"]["maxLength"] == 40
    assert bounded["properties"]["items"]["items"]["properties"]["reason"]["maxLength"] == 30
    assert schema["properties"]["reason"]["maxLength"] == 160  # the original is left alone


def test_compare_counts_verdict_asks_verdicts_and_text_asks_apart():
    ask = Request(messages=(("user", "q"),), schema={}, label="nli")
    text_ask = Request(messages=(("user", "q"),), schema={}, label="statements")
    reference = [(ask, _result('{"items":[{"verdict":1},{"verdict":0}]}')),
                 (ask, _result('{"reason":"a","verdict":1}')),
                 (text_ask, _result('{"statements":["x"]}'))]
    answers = [_result('{"items":[{"verdict":1},{"verdict":1}]}'),  # one of two verdicts moved
               _result('{"reason":"other words","verdict":1}'),  # reason differs: still the same verdict
               _result('{"statements":["y"]}')]
    out = vi.compare(reference, answers)
    assert (out["verdict_asks"], out["verdict_asks_identical"]) == (2, 0.5)
    assert (out["verdicts"], out["verdicts_identical"]) == (3, pytest.approx(2 / 3, abs=1e-4))
    assert (out["text_asks"], out["text_asks_identical"]) == (1, 0.0)
    assert out["per_prompt"]["nli"]["identical"] == 0.5 and out["per_prompt"]["statements"]["text_identical"] == 0.0


def test_candidates_parse_dtype_and_reason_bound():
    assert vi.Candidate.parse("bfloat16+reason=80") == vi.Candidate("bfloat16+reason=80", "bfloat16", 80)
    assert vi.Candidate.parse("float32+drafts=0") == vi.Candidate("float32+drafts=0", "float32", None, 0)
    assert vi.Candidate.parse("reason=40") == vi.Candidate("reason=40", "float32", 40)
    assert vi.Candidate.parse("float32").reason_chars is None


@pytest.mark.slow  # runs the script in a subprocess
def test_the_script_runs_with_the_scripted_judge(tmp_path):
    done = subprocess.run([sys.executable, "-m", "benchmarks.identity.verdict_identity", "--engine", "scripted",
                           "--clapnq", "2", "--wikieval", "2", "--candidates", "float32,bfloat16+reason=40",
                           "--out", str(tmp_path / "v.json")], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads((tmp_path / "v.json").read_text())
    assert [c["candidate"] for c in data["candidates"]] == ["float32", "bfloat16+reason=40"] and not data["partial"]
    first = data["candidates"][0]
    assert first["verdict_asks"] > 10 and first["text_asks"] > 0  # NLI verdicts and statement lists both met
    assert first["verdict_asks_identical"] == 1.0  # a rule-based judge answers the same asks alike
    assert data["reasons"]["count"] > 0 and data["reasons"]["bounds"]
