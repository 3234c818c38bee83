"""One judge cache shared by the runs of a comparison (--cache FILE): an ask the first run answered is served the
same answer in the second, which asks the engine nothing for it, so a judge that is not batch-invariant compares."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import localeval
import localeval.api
from localeval.cli import main
from localeval.engine.base import Invariance, Request
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.report.compare import compare_runs

ROWS = [{"id": f"q{i}", "user_input": f"Where does river {i} flow?",
         "response": f"River {i} flows into lake {i}. River {i} is cold.",
         "reference": f"River {i} flows into lake {i}.",
         "retrieved_contexts": [f"River {i} flows into lake {i}.", "Owls hunt at night."]} for i in range(4)]


class Batched(ScriptedEngine):
    """A judge whose answers depend on its batch: an NLI verdict flips with the number of asks in the call."""

    invariance = Invariance(False, "answers change with the batch")

    def __init__(self) -> None:
        super().__init__(self.answer)
        self.size = 0

    def generate(self, requests: list[Request], on_result: Any = None) -> Any:
        self.size = len(requests)
        return super().generate(requests, on_result)

    def answer(self, label: str, data: dict[str, Any], request: Request) -> Any:
        answer = rule_script(label, data, request)
        if label == "nli":
            for verdict in answer["verdicts"]:
                verdict["verdict"] = self.size % 2
        return answer


def test_a_shared_cache_serves_the_second_run_and_compares_cleanly(tmp_path: Path) -> None:
    cache = tmp_path / "shared.sqlite"
    first, second = Batched(), Batched()
    localeval.evaluate(ROWS, metrics="faithfulness", judge=first, out=tmp_path / "a", cache=cache, progress=False)
    changed = [{**r, "response": "I do not know."} if r["id"] == "q3" else r for r in ROWS]  # B changes one answer
    localeval.evaluate(changed, metrics="faithfulness", judge=second, out=tmp_path / "b", cache=cache, progress=False)
    assert len(first.requests) == 8  # statements, then NLI, for four samples
    assert [r.label for r in second.requests] == ["statements", "nli"]  # only the changed sample's asks
    a, b = (json.loads((tmp_path / r / "scores.jsonl").read_text().splitlines()[0]) for r in "ab")
    assert a["metrics"] == b["metrics"]  # q0: the same asks, the same answers, whatever shared the batch
    c = compare_runs(tmp_path / "a", tmp_path / "b")
    assert c.warnings == []  # both runs recorded one cache: no invariance warning


def test_without_a_shared_cache_the_same_ask_can_differ_and_compare_warns(tmp_path: Path) -> None:
    localeval.evaluate(ROWS, metrics="faithfulness", judge=Batched(), out=tmp_path / "a", progress=False)
    localeval.evaluate(ROWS[:3], metrics="faithfulness", judge=Batched(), out=tmp_path / "b", progress=False)
    a, b = (json.loads((tmp_path / r / "scores.jsonl").read_text().splitlines()[0]) for r in "ab")
    assert a["metrics"]["faithfulness"]["value"] != b["metrics"]["faithfulness"]["value"]  # batch of 4 vs 3
    warnings = compare_runs(tmp_path / "a", tmp_path / "b").warnings
    assert len(warnings) == 2 and all("one shared --cache FILE" in w for w in warnings)


def test_the_command_s_cache_is_shared_by_two_run_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engines: list[ScriptedEngine] = []

    def load_judge(path: object, options: object = None, log_dir: object = None) -> ScriptedEngine:
        engines.append(ScriptedEngine(rule_script))
        return engines[-1]

    monkeypatch.setattr("localeval.run.models.resolve_model", lambda name, kind: Path(str(name)))
    monkeypatch.setattr("localeval.run.models.load_judge", load_judge)
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    for out in ("a", "b"):
        assert main(["evaluate", str(data), "--out", str(tmp_path / out), "--metrics", "faithfulness", "--judge", "j",
                     "--cache", str(tmp_path / "shared.sqlite"), "--no-progress", "--no-report"]) == 0
    assert len(engines[0].requests) == 8 and engines[1].requests == []
    assert not (tmp_path / "b" / "judge.sqlite").exists()
    runs = [json.loads((tmp_path / out / "summary.json").read_text())["run"] for out in ("a", "b")]
    assert runs[0]["cache"] == runs[1]["cache"] == str((tmp_path / "shared.sqlite").resolve())
