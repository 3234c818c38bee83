"""Bulk runs on Ray: chunks go whole to scripted replicas, the driver keeps the run folder and the one cache,
and the chunk of a replica that dies is sent again."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

import pytest

import localeval
from localeval.engine.base import Request
from localeval.engine.ray_engine import RayEngine
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.store.chunks import CHUNKS

METRICS = "faithfulness,context_precision"


def _rows(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"s{i}",
            "user_input": f"Where is city {i}?",
            "response": f"City {i} lies on the river Alpha. City {i} has {i % 4} bridges." if i % 5 else "Not sure.",
            "retrieved_contexts": [f"City {i} lies on the river Alpha.", "Bananas are yellow.", f"City {i} is old."],
            "reference": f"City {i} lies on the river Alpha.",
        }
        for i in range(n)
    ]


def _logging(log: str, die_at: int | None = None, marker: str = "") -> Any:
    """A replica factory: a rule-script judge that appends its process id to ``log`` for every ask and, with
    ``die_at``, ends its process (os._exit, no clean-up) on that ask, on the first replica to get there only."""
    asked = [0]

    def script(label: str, data: dict[str, Any], request: Request) -> Any:
        asked[0] += 1
        if asked[0] == die_at:
            try:
                os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
            except FileExistsError:
                pass  # another replica died already: this one lives
            else:
                os._exit(1)
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()}\n")
        return rule_script(label, data, request)

    return functools.partial(ScriptedEngine, script)  # a closure travels to the replicas by value


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The data set scored in this process, in chunks of 4: what every Ray run must match."""
    out = tmp_path_factory.mktemp("local") / "run"
    localeval.evaluate(_rows(18), metrics=METRICS, judge=ScriptedEngine(rule_script), out=out, progress=False,
                       report=False, chunk_size=4)
    return out


def _evaluate(engine: RayEngine, out: Path) -> Any:
    return localeval.evaluate(_rows(18), metrics=METRICS, judge=engine, out=out, progress=False, report=False,
                              chunk_size=4)


@pytest.mark.slow  # starts a local Ray cluster
@pytest.mark.parametrize("replicas", [1, 2])
def test_chunks_through_one_or_two_replicas_score_like_one_process(
        ray_cluster: Any, tmp_path: Path, local_run: Path, replicas: int) -> None:
    log = tmp_path / "asks.log"
    engine = RayEngine(replicas, _logging(str(log)))
    try:
        _evaluate(engine, tmp_path / "run")
    finally:
        engine.close()
    assert (tmp_path / "run/scores.jsonl").read_text() == (local_run / "scores.jsonl").read_text()
    summary = json.loads((tmp_path / "run/summary.json").read_text())
    assert summary["metrics"] == json.loads((local_run / "summary.json").read_text())["metrics"]
    assert summary["total"]["judge_calls"] == 90  # 18 samples, 5 asks each, every one asked once
    pids = log.read_text().split()
    assert len(pids) == 90 and len(set(pids)) == replicas  # every replica scored chunks
    assert len((tmp_path / "run" / CHUNKS).read_text().splitlines()) == 1 + 5
    again = ScriptedEngine(rule_script)  # the replicas' answers are in the driver's cache
    localeval.evaluate(_rows(18), metrics=METRICS, judge=again, cache=tmp_path / "run/judge.sqlite", progress=False)
    assert again.calls == []


@pytest.mark.slow  # starts a local Ray cluster
def test_a_replica_that_dies_mid_chunk_costs_only_its_chunk(ray_cluster: Any, tmp_path: Path, local_run: Path) -> None:
    log, marker = tmp_path / "asks.log", tmp_path / "died"
    engine = RayEngine(2, _logging(str(log), die_at=7, marker=str(marker)))  # 7th ask: inside its first chunk
    try:
        _evaluate(engine, tmp_path / "run")
        assert marker.exists() and len(engine.actors) == 1  # one replica died, and got no more work
    finally:
        engine.close()
    assert (tmp_path / "run/scores.jsonl").read_text() == (local_run / "scores.jsonl").read_text()
    assert json.loads((tmp_path / "run/summary.json").read_text())["metrics"] == json.loads(
        (local_run / "summary.json").read_text())["metrics"]
    assert 90 <= len(log.read_text().split()) <= 90 + 20  # at most one chunk (4 samples, 5 asks each) asked again
