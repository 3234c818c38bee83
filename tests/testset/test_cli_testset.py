"""The ``testset`` command, with the judge and embedder loaders swapped for fakes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localeval.cli import main
from localeval.cli.testset import default_cache
from localeval.data import load_samples
from localeval.embed import HashEmbedder
from localeval.engine.scripted import ScriptedEngine

from .fakes import handbook_script


def _run(argv: list[str]) -> int:
    return main(argv)


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> list[ScriptedEngine]:
    engines: list[ScriptedEngine] = []

    def judge(path: object, options: object = None) -> ScriptedEngine:
        engines.append(ScriptedEngine(handbook_script))
        return engines[-1]

    monkeypatch.setattr("localeval.run.models.load_judge", judge)
    monkeypatch.setattr("localeval.run.models.load_embedder", lambda path: HashEmbedder())
    return engines


def test_the_command_writes_rows_reports_counts_and_says_what_to_fill_in(
        docs: Path, tmp_path: Path, fakes: list[ScriptedEngine], capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sets" / "testset.jsonl"
    code = _run(["testset", str(docs), "--size", "5", "--out", str(out), "--unanswerable", "0.2",
                 "--mix", "single_hop_specific=1", "--graph-out", str(tmp_path / "graph.json"), "--no-progress"])
    printed = capsys.readouterr().out
    assert code == 0
    assert [s.extra["synthesizer"] for s in load_samples(out)] == ["single_hop_specific"] * 4 + ["unanswerable"]
    assert "single_hop_specific        4      4" in printed and "unanswerable               1      1" in printed
    assert "rejected:" in printed and "response, retrieved_contexts" in printed
    assert default_cache(out) == tmp_path / "sets" / "testset.cache.sqlite" and default_cache(out).is_file()
    assert (tmp_path / "graph.json").is_file()

    code = _run(["testset", str(docs), "--size", "5", "--out", str(out), "--unanswerable", "0.2",
                 "--mix", "single_hop_specific=1", "--graph-out", str(tmp_path / "graph.json"), "--no-progress"])
    assert code == 0 and fakes[-1].calls == []  # the rerun is answered from the cache
    assert "(reused)" in capsys.readouterr().out


def test_rejected_rows_go_next_to_the_output(docs: Path, tmp_path: Path, fakes: list[ScriptedEngine],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "t.jsonl"
    _run(["testset", str(docs), "--size", "8", "--out", str(out), "--no-cache", "--no-progress"])
    printed = capsys.readouterr().out
    rejected = tmp_path / "t.rejected.jsonl"
    assert rejected.is_file() and "duplicate_question" in printed
    reasons = {json.loads(line)["reason"] for line in rejected.read_text().splitlines()}
    assert reasons == {"duplicate_question"}
    assert not default_cache(out).exists()


def test_bad_options_are_refused(docs: Path, tmp_path: Path, fakes: list[ScriptedEngine],
                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["testset", str(docs), "--size", "4", "--out", str(tmp_path / "t.jsonl"), "--unanswerable", "2"]) == 2
    assert "give a share between 0 and 1" in capsys.readouterr().err
    assert _run(["testset", str(docs), "--size", "4", "--out", str(tmp_path / "t.jsonl"), "--mix", "simple=1"]) == 2
    assert "localeval: " in (err := capsys.readouterr().err) and "unknown question type" in err
    assert _run(["testset", str(docs), "--size", "4", "--out", str(tmp_path / "t.jsonl"), "--styles", "loud"]) == 2
    assert "query style" in capsys.readouterr().err
    assert fakes == []  # refused before a model loads
    assert fakes == []  # no judge was loaded for bad options
