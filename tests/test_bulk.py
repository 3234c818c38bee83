"""Bulk runs: chunks scored like one run, written as they finish, resumed at the first unfinished chunk."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import localeval
from localeval.cli import main
from localeval.engine.base import Abilities, Request
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.progress import ChunkProgress
from localeval.result import FolderRows, MemoryRows
from localeval.store.chunks import CHUNKS

METRICS = "faithfulness,context_precision"
NUMBER = re.compile(r"#(\d+)")
WORKER = Path(__file__).with_name("bulk_worker.py")


def rows(n: int) -> list[dict[str, Any]]:
    """Samples whose every field carries ``#i``, so an ask tells which sample it is for."""
    return [
        {
            "id": f"s{i}",
            "user_input": f"Where is city #{i}?",
            "response": f"City #{i} lies on the river Alpha. City #{i} has {i % 4} bridges."
            if i % 5 else "I am not sure.",
            "retrieved_contexts": [f"City #{i} lies on the river Alpha.", f"Bananas #{i} are yellow.",
                                   f"City #{i} has {i % 3} bridges."],
            "reference": f"City #{i} lies on the river Alpha.",
            **({"answerable": False} if i % 7 == 3 else {}),
        }
        for i in range(n)
    ]


def write(path: Path, data: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in data), encoding="utf-8")
    return path


def sample_of(request: Request) -> int:
    match = NUMBER.search(request.messages[-1][1])
    assert match is not None
    return int(match.group(1))


def test_a_chunked_run_scores_and_summarizes_like_one_run(tmp_path: Path) -> None:
    data = rows(23)
    whole = localeval.evaluate(data, metrics=METRICS, judge=ScriptedEngine(rule_script), out=tmp_path / "whole",
                               progress=False, report=False)
    engine = ScriptedEngine(rule_script)
    chunked = localeval.evaluate(write(tmp_path / "d.jsonl", data), metrics=METRICS, judge=engine,
                                 out=tmp_path / "chunked", progress=False, report=False, chunk_size=5)
    assert isinstance(chunked.source, FolderRows) and isinstance(whole.source, FolderRows)  # both read back
    assert (tmp_path / "chunked/scores.jsonl").read_text() == (tmp_path / "whole/scores.jsonl").read_text()
    assert (tmp_path / "chunked/samples.jsonl").read_text() == (tmp_path / "whole/samples.jsonl").read_text()
    one, many = (json.loads((tmp_path / f"{r}/summary.json").read_text()) for r in ("whole", "chunked"))
    assert many["metrics"] == one["metrics"] and many["strata"] == one["strata"]
    assert many["strata"]["unanswerable"]["n"] == 3 and many["strata"]["answerable"]["n"] == 20
    for key in ("asks", "judge_calls", "prompt_tokens", "completion_tokens", "samples"):
        assert many["total"][key] == one["total"][key], key
    assert many["total"]["engine_calls"] == 5 * one["total"]["engine_calls"]  # 5 chunks, same rounds each
    assert many["run"]["chunks"] == {"size": 5, "count": 5} and one["run"]["chunks"] == {"size": 4096, "count": 1}
    assert len(engine.calls) == 10 and max(len({sample_of(r) // 5 for r in c}) for c in engine.calls) == 1
    assert chunked.to_pandas().equals(whole.to_pandas())
    assert chunked.rows() == whole.rows()
    assert any(line.startswith("23 samples in") for line in chunked.table().splitlines())
    assert "batch_invariant" in many["run"]["invariance"] and many["run"]["invariance"] == one["run"]["invariance"]
    log = [json.loads(line) for line in (tmp_path / "chunked" / CHUNKS).read_text().splitlines()]
    assert log[0]["plan"]["chunk_size"] == 5 and [r["rows"] for r in log[1:]] == [5, 5, 5, 5, 3]


def test_without_a_run_folder_the_chunks_come_back_as_one_result() -> None:
    data = rows(12)
    whole = localeval.evaluate(data, metrics=METRICS, judge=ScriptedEngine(rule_script), progress=False)
    chunked = localeval.evaluate(data, metrics=METRICS, judge=ScriptedEngine(rule_script), progress=False,
                                 chunk_size=5)
    assert chunked.rows() == whole.rows() and chunked.summary() == whole.summary()
    assert chunked.output.rounds == 3 * whole.output.rounds


def test_the_engines_default_chunk_size_cuts_a_large_data_set(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(ScriptedEngine, "abilities", Abilities(chunk_samples=4))  # declared by the type
    result = localeval.evaluate(rows(10), metrics=METRICS, judge=ScriptedEngine(rule_script), out=tmp_path / "r",
                                progress=False, report=False)
    assert result.info["chunks"] == {"size": 4, "count": 3}
    engine = ScriptedEngine(rule_script)
    small = localeval.evaluate(rows(4), metrics=METRICS, judge=engine, progress=False)
    assert isinstance(small.source, MemoryRows) and "chunks" not in small.info
    assert small.output.rounds == small.output.engine_calls == len(engine.calls) == 2  # one chunk: one run


class Interrupt:
    """A scripted judge that raises KeyboardInterrupt (what Ctrl-C raises) on its ``at``-th ask."""

    def __init__(self, at: int | None) -> None:
        self.at = at
        self.asked: list[int] = []  # sample number of every ask answered

    def __call__(self, label: str, data: dict[str, Any], request: Request) -> Any:
        if len(self.asked) + 1 == self.at:
            raise KeyboardInterrupt
        self.asked.append(sample_of(request))
        return rule_script(label, data, request)


@pytest.mark.parametrize("stop_at", [41, 47], ids=["between-chunks", "mid-chunk"])
def test_an_interrupted_run_resumes_at_its_first_unfinished_chunk(tmp_path: Path, stop_at: int) -> None:
    # 4 samples a chunk, 5 asks a sample (statements, NLI, 3 contexts): ask 41 is chunk 2's first, 47 its 7th
    data = write(tmp_path / "d.jsonl", rows(14))
    reference = localeval.evaluate(data, metrics=METRICS, judge=ScriptedEngine(rule_script), progress=False,
                                   out=tmp_path / "reference", report=False, chunk_size=4)
    run = tmp_path / "run"
    first = Interrupt(stop_at)
    with pytest.raises(KeyboardInterrupt):
        localeval.evaluate(data, metrics=METRICS, judge=ScriptedEngine(first), out=run, progress=False, chunk_size=4)
    finished = [json.loads(line) for line in (run / CHUNKS).read_text().splitlines()[1:]]
    assert [r["chunk"] for r in finished] == [0, 1]
    at_kill = [json.loads(line)["id"] for line in (run / "scores.jsonl").read_text().splitlines()]
    assert at_kill == [f"s{i}" for i in range(8)]  # every finished chunk's rows, nothing of chunk 2
    second = Interrupt(None)
    localeval.evaluate(data, metrics=METRICS, judge=ScriptedEngine(second), out=run, progress=False, chunk_size=4)
    assert (run / "scores.jsonl").read_text() == (tmp_path / "reference/scores.jsonl").read_text()
    assert json.loads((run / "summary.json").read_text())["metrics"] == {
        name: s.to_dict() for name, s in reference.summary().items()}
    assert sorted(first.asked[:40]) == [i for i in range(8) for _ in range(5)]
    # no answered ask is made again: chunks 0 and 1 are finished, and the answers chunk 2 had when the run
    # stopped were committed to the cache then
    remaining = Counter(i for i in range(8, 14) for _ in range(5)) - Counter(first.asked[40:])
    assert len(first.asked) == stop_at - 1 and sorted(second.asked) == sorted(remaining.elements())


def test_a_run_under_another_plan_starts_over_and_a_finished_run_asks_nothing(tmp_path: Path) -> None:
    data = write(tmp_path / "d.jsonl", rows(9))
    run = tmp_path / "run"
    localeval.evaluate(data, metrics="faithfulness", judge=ScriptedEngine(rule_script), out=run, progress=False,
                       chunk_size=4, report=False)
    again = ScriptedEngine(rule_script)
    localeval.evaluate(data, metrics="faithfulness", judge=again, out=run, progress=False, chunk_size=4, report=False)
    assert again.calls == []
    wider = ScriptedEngine(rule_script)
    result = localeval.evaluate(data, metrics=METRICS, judge=wider, out=run, progress=False, chunk_size=4,
                                report=False)
    assert {r.label for r in wider.requests} == {"context_usefulness"}  # faithfulness came from the cache
    assert result.sample_count == 9 and set(result.rows()[0]["metrics"]) == {"faithfulness", "context_precision"}


def test_a_log_line_cut_short_by_a_kill_is_dropped(tmp_path: Path) -> None:
    data = write(tmp_path / "d.jsonl", rows(9))
    run = tmp_path / "run"
    localeval.evaluate(data, metrics=METRICS, judge=ScriptedEngine(rule_script), out=run, progress=False,
                       chunk_size=4, report=False)
    reference = (run / "scores.jsonl").read_text()
    log = (run / CHUNKS).read_text().splitlines()
    (run / CHUNKS).write_text("\n".join(log[:2]) + "\n" + log[2][:30])  # chunk 1's line half written
    engine = ScriptedEngine(rule_script, fingerprint="scripted")
    localeval.evaluate(data, metrics=METRICS, judge=engine, out=run, progress=False, chunk_size=4, report=False,
                       cache=False)
    assert {sample_of(r) for r in engine.requests} == set(range(4, 9))
    assert (run / "scores.jsonl").read_text() == reference


def test_chunk_progress_gives_rate_chunks_and_time_left() -> None:
    clock = iter([0.0, 10.0, 20.0])
    shown = ChunkProgress(1_000_000, 250, 4000, 1, enabled=False, clock=lambda: next(clock))
    assert shown.chunk_done(4000) == "chunk 2/250: 8,000/1,000,000 samples, 400.0 samples/s, 0:10 elapsed, ETA 41:20"
    assert shown.chunk_done(4000).startswith("chunk 3/250: 12,000/1,000,000 samples, 400.0 samples/s, 0:20")


def test_the_cli_takes_a_chunk_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    monkeypatch.setattr("localeval.run.models.load_judge", lambda *a, **k: ScriptedEngine(rule_script))
    monkeypatch.setattr("localeval.run.models.resolve_model", lambda *a, **k: tmp_path)
    data = write(tmp_path / "d.jsonl", rows(7))
    assert main(["evaluate", str(data), "--metrics", METRICS, "--out", str(tmp_path / "run"), "--chunk-size", "3",
                 "--no-report"]) == 0
    assert "chunk 3/3: 7/7 samples" in capsys.readouterr().err
    assert len((tmp_path / "run" / CHUNKS).read_text().splitlines()) == 4
    assert json.loads((tmp_path / "run/summary.json").read_text())["run"]["config"]["chunk_size"] == 3


@pytest.mark.slow  # worker subprocesses, SIGKILLed and resumed
@pytest.mark.parametrize("kill_at", [41, 47], ids=["between-chunks", "mid-chunk"])
def test_a_killed_chunked_run_resumes_with_the_same_scores_and_no_ask_repeated(tmp_path: Path, kill_at: int) -> None:
    data = write(tmp_path / "d.jsonl", rows(14))
    reference, run = tmp_path / "reference", tmp_path / "run"
    subprocess.run([sys.executable, str(WORKER), str(data), str(reference), "4", str(tmp_path / "ref.log")], check=True)
    killed = subprocess.run([sys.executable, str(WORKER), str(data), str(run), "4", str(tmp_path / "first.log"),
                             str(kill_at)], check=False)
    assert killed.returncode == -9
    assert [json.loads(line)["chunk"] for line in (run / CHUNKS).read_text().splitlines()[1:]] == [0, 1]
    assert [json.loads(line)["id"] for line in (run / "scores.jsonl").read_text().splitlines()] == [
        f"s{i}" for i in range(8)]
    subprocess.run([sys.executable, str(WORKER), str(data), str(run), "4", str(tmp_path / "second.log")], check=True)
    assert (run / "scores.jsonl").read_text() == (reference / "scores.jsonl").read_text()
    assert json.loads((run / "summary.json").read_text())["metrics"] == json.loads(
        (reference / "summary.json").read_text())["metrics"]
    first = [int(line.split()[1]) for line in (tmp_path / "first.log").read_text().splitlines()]
    second = [int(line.split()[1]) for line in (tmp_path / "second.log").read_text().splitlines()]
    assert len(first) == kill_at - 1 and sorted(set(first[:40])) == list(range(8))
    assert sorted(set(second)) == list(range(8, 14))  # nothing of a finished chunk was asked again
    assert len(second) <= 30  # chunks 2 and 3: 6 samples, 5 asks each, fewer where the cache answered


def test_the_chunked_frame_reads_nan_reasons_from_disk(tmp_path: Path) -> None:
    def script(label: str, data: dict[str, Any], request: Request) -> Any:
        if label == "statements" and "#2 " in request.messages[-1][1]:
            raise RuntimeError("the judge choked")
        return rule_script(label, data, request)

    result = localeval.evaluate(rows(6), metrics="faithfulness", judge=ScriptedEngine(script), out=tmp_path / "r",
                                progress=False, chunk_size=4)
    frame = result.to_pandas()
    assert frame.loc["s2", "faithfulness__nan_reason"] == "engine_error" and pd.isna(frame.loc["s2", "faithfulness"])
    assert result.summary()["faithfulness"].nan_reasons == {"engine_error": 1}
    assert (tmp_path / "r/report.html").exists()


def test_estimate_projects_time_and_disk_of_a_larger_run_from_a_file_read_in_chunks(tmp_path: Path) -> None:
    from localeval.estimate import estimate

    data = write(tmp_path / "d.jsonl", rows(40))
    engine = ScriptedEngine(rule_script)
    est = estimate(data, METRICS, engine, sample=8, total=1_000_000, progress=False)
    assert est.measured_samples == 8 and est.total_samples == 1_000_000 and len(engine.requests) == 40
    assert est.projected["total"]["judge_calls"] == pytest.approx(5 * 1_000_000)
    run = tmp_path / "run"
    localeval.evaluate(data, metrics=METRICS, judge=ScriptedEngine(rule_script), out=run, progress=False,
                       report=False)
    for name in ("scores.jsonl", "samples.jsonl"):  # what 40 samples wrote, scaled, within a fifth
        assert est.disk[name] == pytest.approx((run / name).stat().st_size * 25_000, rel=0.2), name
    assert 1e9 < est.disk["judge.sqlite"] < 4e9  # some 2 kB a sample: 5 answers, each key stored twice
    lines = est.table().splitlines()
    assert lines[0] == "measured on 8 of 1000000 samples (x125000.0):"
    assert lines[-1].startswith("projected disk: ") and "245 chunk(s) of 4096 samples" in lines[-1]


def test_a_rescored_chunked_run_reruns_from_its_cache_alone(tmp_path: Path) -> None:
    from localeval.rescore import rescore

    data = write(tmp_path / "d.jsonl", rows(9))
    run = tmp_path / "run"
    localeval.evaluate(data, metrics=METRICS, judge=ScriptedEngine(rule_script), out=run, progress=False,
                       chunk_size=4, report=False)
    scores = (run / "scores.jsonl").read_text()
    assert rescore(run).info["rescore_misses"] == 0 and (run / "scores.jsonl").read_text() == scores
    assert not (run / CHUNKS).exists()  # its offsets no longer describe the files: a rerun starts over
    again = ScriptedEngine(rule_script)
    localeval.evaluate(data, metrics=METRICS, judge=again, out=run, progress=False, chunk_size=4, report=False)
    assert again.calls == [] and (run / "scores.jsonl").read_text() == scores


def test_a_chunked_result_saves_a_copy_of_its_run_folder(tmp_path: Path) -> None:
    result = localeval.evaluate(rows(9), metrics=METRICS, judge=ScriptedEngine(rule_script), out=tmp_path / "run",
                                progress=False, chunk_size=4, report=False)
    copy = result.save(tmp_path / "copy")
    for name in ("scores.jsonl", "samples.jsonl"):
        assert (copy / name).read_text() == (tmp_path / "run" / name).read_text()
    assert json.loads((copy / "summary.json").read_text()) == json.loads((tmp_path / "run/summary.json").read_text())
    assert [row["id"] for row in result.iter_rows()] == [f"s{i}" for i in range(9)]


def test_samples_lacking_a_field_score_nan_in_chunks_as_in_one_run(tmp_path: Path) -> None:
    data = rows(10)
    for i in (2, 7):
        del data[i]["reference"]
    one = localeval.evaluate(data, metrics=METRICS, judge=ScriptedEngine(rule_script), progress=False,
                             on_missing="nan")
    path = write(tmp_path / "d.jsonl", data)
    many = localeval.evaluate(path, metrics=METRICS, judge=ScriptedEngine(rule_script), progress=False,
                              on_missing="nan", chunk_size=3, out=tmp_path / "run", report=False)
    assert many.rows() == one.rows()
    assert many.summary()["context_precision"].nan_reasons == {"missing_field": 2}
    with pytest.raises(localeval.data.DataError, match=r"row 3, column 'reference'(.|\n)*row 8"):
        localeval.evaluate(path, metrics=METRICS, judge=ScriptedEngine(rule_script), progress=False, chunk_size=3)


def test_the_summary_comes_from_the_chunk_log_when_no_sample_is_unanswerable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = [{k: v for k, v in row.items() if k != "answerable"} for row in rows(11)]
    whole = localeval.evaluate(data, metrics=METRICS, judge=ScriptedEngine(rule_script), progress=False)

    def unread(*args: Any) -> None:
        raise AssertionError("scores.jsonl was read back")

    monkeypatch.setattr("localeval.store.chunks.ScoresOnDisk.__init__", unread)
    chunked = localeval.evaluate(data, metrics=METRICS, judge=ScriptedEngine(rule_script), progress=False,
                                 chunk_size=4, out=tmp_path / "run", report=False)
    assert chunked.summary() == whole.summary() and chunked.strata() == whole.strata()
    assert chunked.scores("faithfulness") == whole.scores("faithfulness")
