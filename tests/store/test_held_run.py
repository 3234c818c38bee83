"""A run folder is never overwritten silently: other data or fewer metrics stop the run before a model loads;
the same data with more metrics adds to the run, the same command resumes it, replace=True overwrites it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import localeval
import localeval.api
from localeval.cli import main
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.errors import LocalevalError
from localeval.store.chunks import CHUNKS
from localeval.store.held_run import held_run


def rows(n: int, start: int = 0) -> list[dict[str, Any]]:
    return [{"id": f"r{i}", "user_input": f"What does river {i} flow into?",
             "response": f"River {i} flows into lake {i}. River {i} is cold.",
             "reference": f"River {i} flows into lake {i}.",
             "retrieved_contexts": [f"River {i} flows into lake {i}.", "Owls hunt at night."]}
            for i in range(start, start + n)]


def write(path: Path, data: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in data), encoding="utf-8")
    return path


def ids(run: Path) -> list[str]:
    return [json.loads(line)["id"] for line in (run / "scores.jsonl").read_text().splitlines()]


def columns(run: Path) -> list[str]:
    return list(json.loads((run / "scores.jsonl").read_text().splitlines()[0])["metrics"])


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[ScriptedEngine]:
    """Judges given as a folder are built by a scripted factory; the list holds every judge it built."""
    engines: list[ScriptedEngine] = []

    def load_judge(path: object, options: object = None, log_dir: object = None) -> ScriptedEngine:
        engines.append(ScriptedEngine(rule_script))
        return engines[-1]

    monkeypatch.setattr("localeval.run.models.resolve_model", lambda name, kind: Path(str(name)))
    monkeypatch.setattr("localeval.run.models.load_judge", load_judge)
    return engines


def plan(run: Path) -> dict[str, Any]:
    """The plan at the head of the run folder's chunk log."""
    return json.loads((run / CHUNKS).read_text().splitlines()[0])["plan"]


def run(data: Any, out: Path, metrics: str = "faithfulness", **kwargs: Any) -> localeval.EvaluationResult:
    return localeval.evaluate(data, metrics=metrics, judge="judge-folder", out=out, progress=False, report=False,
                              **kwargs)


def test_other_data_stops_before_the_judge_is_built_and_keeps_the_run(tmp_path: Path, built) -> None:
    out = tmp_path / "run"
    run(rows(3), out)
    assert len(built) == 1
    before = {name: (out / name).read_bytes() for name in ("scores.jsonl", "samples.jsonl", "summary.json")}
    with pytest.raises(LocalevalError) as error:
        run(rows(2, start=10), out)
    assert len(built) == 1  # no judge was built for the refused run
    message = str(error.value)
    assert str(out) in message and "holds another run's scores" in message
    assert "3 samples (r0, r1, r2) on faithfulness" in message and "2 samples (r10, r11) on faithfulness" in message
    assert "its samples are not this run's" in message
    assert "choose another --out" in message and "--replace" in message and "replace=True" in message
    assert {name: (out / name).read_bytes() for name in before} == before  # the run is untouched


def test_same_ids_with_other_texts_is_other_data(tmp_path: Path, built) -> None:
    out = tmp_path / "run"
    run(rows(2), out)
    edited = rows(2)
    edited[1]["response"] = "River 1 is warm."
    with pytest.raises(LocalevalError, match="its samples are not this run's"):
        run(edited, out)


def test_more_metrics_add_to_the_run_and_the_same_command_resumes(tmp_path: Path, built) -> None:
    out = tmp_path / "run"
    run(rows(3), out)
    run(rows(3), out, metrics="faithfulness,context_recall")  # same data, more metrics: the same run
    assert columns(out) == ["faithfulness", "context_recall"] and ids(out) == ["r0", "r1", "r2"]
    run(rows(3), out, metrics="faithfulness,context_recall")  # the same command again
    assert built[-1].requests == []  # every answer came from the run's cache


def test_leaving_a_metric_out_stops_the_run(tmp_path: Path, built) -> None:
    out = tmp_path / "run"
    run(rows(3), out, metrics="faithfulness,context_recall")
    with pytest.raises(LocalevalError) as error:
        run(rows(3), out, metrics="faithfulness")
    message = str(error.value)
    assert "would leave out its context_recall" in message and "its samples are not" not in message
    assert len(built) == 1 and columns(out) == ["faithfulness", "context_recall"]


def test_replace_overwrites_the_run_and_keeps_its_cache(tmp_path: Path, built) -> None:
    out = tmp_path / "run"
    run(rows(3), out, metrics="faithfulness,context_recall")
    (out / CHUNKS).write_text('{"plan": {}}\n')  # a stale chunk log goes too
    run(rows(2, start=10), out, replace=True)
    assert ids(out) == ["r10", "r11"] and columns(out) == ["faithfulness"]
    assert (out / "judge.sqlite").exists() and plan(out)["data"] == {"records": 2, "first_id": "r10", "last_id": "r11"}
    run(rows(3), out, metrics="faithfulness,context_recall", replace=True)  # back: answered from the kept cache
    assert built[-1].requests == []


def test_a_chunked_run_is_guarded_and_resumed(tmp_path: Path, built) -> None:
    out, data = tmp_path / "run", write(tmp_path / "data.jsonl", rows(6))
    run(data, out, chunk_size=2)
    with pytest.raises(LocalevalError, match=r"6 samples .* this run scores 5 samples"):
        run(write(tmp_path / "fewer.jsonl", rows(5)), out, chunk_size=2)  # the same first samples, fewer of them
    # Cut the run back to its first chunk, as a kill would leave it; the same command goes on from there.
    log = (out / CHUNKS).read_text().splitlines()
    first = json.loads(log[1])
    (out / CHUNKS).write_text("\n".join(log[:2]) + "\n")
    for name, size in (("scores.jsonl", first["scores_bytes"]), ("samples.jsonl", first["samples_bytes"])):
        (out / name).write_bytes((out / name).read_bytes()[:size])
    assert held_run(out).samples == 2 and held_run(out).planned == 6  # type: ignore[union-attr]
    run(data, out, chunk_size=2)
    assert ids(out) == [f"r{i}" for i in range(6)] and built[-1].requests == []
    run(data, out, chunk_size=2, metrics="faithfulness,context_recall")  # more metrics, chunked
    assert columns(out) == ["faithfulness", "context_recall"]


def test_a_data_file_copied_elsewhere_is_the_same_data(tmp_path: Path, built) -> None:
    out, data = tmp_path / "run", write(tmp_path / "data.jsonl", rows(4))
    run(data, out, chunk_size=3)
    copy = write(tmp_path / "copy.jsonl", rows(4))  # another path and time: its samples are compared
    run(copy, out, chunk_size=3)
    run(rows(4), out)  # and in memory, in one chunk: the chunk log is this run's
    assert plan(out)["data"] == {"records": 4, "first_id": "r0", "last_id": "r3"}
    assert ids(out) == ["r0", "r1", "r2", "r3"]


def test_a_folder_without_scores_is_free(tmp_path: Path, built) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "scores.jsonl").write_text("")
    run(rows(2), out)
    assert ids(out) == ["r0", "r1"] and (out / "notes.txt").read_text() == "mine"


def test_the_command_stops_before_loading_a_judge_and_names_replace(tmp_path: Path, capsys) -> None:
    out, missing = tmp_path / "run", tmp_path / "no-such-judge"
    localeval.evaluate(rows(2), metrics="faithfulness", judge=ScriptedEngine(rule_script), out=out, progress=False,
                       report=False)
    data = write(tmp_path / "other.jsonl", rows(2, start=5))
    argv = ["evaluate", str(data), "--out", str(out), "--metrics", "faithfulness", "--judge", str(missing),
            "--no-progress"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "holds another run's scores" in err and "--replace" in err and "no-such-judge" not in err
    assert main([*argv, "--replace"]) == 1  # now past the check: the judge folder is what fails
    err = capsys.readouterr().err
    assert "no-such-judge" in err and "holds another run's scores" not in err
    assert ids(out) == ["r0", "r1"]  # the judge never loaded, so nothing was replaced


def test_a_folder_with_scores_and_no_samples_jsonl_is_another_runs(tmp_path: Path, built) -> None:
    out = tmp_path / "run"
    run(rows(3), out)
    for name in ("samples.jsonl", CHUNKS):  # evaluate writes both: this folder is not one of its runs
        (out / name).unlink()
    with pytest.raises(LocalevalError, match="its samples are not this run's"):
        run(rows(3), out)


def test_the_clash_names_the_first_sample_and_field_that_differ(tmp_path: Path, built) -> None:
    """Row numbers as ids: both runs list the same ids, so the message says which sample and field differ."""
    numbered = [{k: v for k, v in r.items() if k != "id"} for r in rows(3)]
    out = tmp_path / "run"
    run(numbered, out)
    edited = [dict(r) for r in numbered]
    edited[1]["response"] = "River 1 is warm."
    with pytest.raises(LocalevalError) as error:
        run(edited, out)
    message = str(error.value)
    assert "3 samples (1, 2, 3)" in message
    assert "its samples are not this run's: sample 2 (id '2') has another 'response' in this run" in message
    with pytest.raises(LocalevalError, match="sample 1 is id '1' in the folder and id 'r5' in this run"):
        run(rows(3, start=5), out)
    with pytest.raises(LocalevalError, match="the folder has more samples: its sample 3, id '3', is not in this run"):
        run(numbered[:2], out)
