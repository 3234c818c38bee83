"""A run under faults, through the command, with the scripted judge: killed at each commit point, a folder that
turns read-only mid-run, the data file changed under a chunked run, a judge that changes between runs, a full
disk while ``models prepare`` builds. Each: a clear one-line error or a correct result, never a traceback, and a
folder that a rerun of the same command finishes exactly as an uninterrupted run."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fault_kit import evaluate_args, rows, scores

from localeval.engine.scripted import ScriptedEngine
from localeval.store.cache import JudgeCache

CHUNKED = ("--chunk-size", "4")  # 12 samples in 3 chunks


class Killed(BaseException):
    """The process is gone: raised at a commit point, and by every write after it (nothing runs on)."""


class Killer:
    """Counts the writes of a run (cache commits, appends to the run files, whole-file writes) and kills the run
    at the ``at``-th: before it, after it, or half way through it (``torn``, a file write cut short)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, at: int | None = None, how: str = "before") -> None:
        import localeval.store.chunks as chunks
        import localeval.store.run_folder as run_folder

        self.count, self.at, self.how, self.dead = 0, at, how, False
        self._wrap(monkeypatch, JudgeCache, "put_answers", lambda f, c, items: f(c, items), None)
        self._wrap(monkeypatch, chunks, "_append", lambda f, path, text: f(path, text),
                   lambda f, path, text: f(path, text[: len(text) // 2]))
        self._wrap(monkeypatch, run_folder, "write_atomic", lambda f, path, text, *a: f(path, text, *a),
                   lambda f, path, text, *a: path.with_name(path.name + ".tmp").write_text(text[: len(text) // 2]))

    def _wrap(self, monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, call: Callable[..., Any],
              torn: Callable[..., Any] | None) -> None:
        original = getattr(owner, name)

        def write(*args: Any) -> Any:
            if self.dead:
                raise Killed
            self.count += 1
            if self.count != self.at:
                return call(original, *args)
            self.dead = True
            if self.how == "after":
                call(original, *args)
            elif self.how == "torn" and torn is not None:
                torn(original, *args)
            raise Killed

        monkeypatch.setattr(owner, name, write)


@pytest.fixture
def chunked(tmp_path: Path, data: Path, judges: list[ScriptedEngine], cli: Any) -> tuple[list[dict], int]:
    """An uninterrupted chunked run's scores, and how many writes it made."""
    with pytest.MonkeyPatch.context() as patch:
        killer = Killer(patch)
        assert cli(*evaluate_args(data, tmp_path / "whole", *CHUNKED)).code == 0
    judges.clear()
    return scores(tmp_path / "whole"), killer.count


@pytest.mark.parametrize("how", ["before", "after", "torn"])
def test_killed_at_each_commit_point_the_same_command_finishes_the_run_exactly(
        how: str, chunked: tuple[list[dict], int], data: Path, judges: list[ScriptedEngine], cli: Any,
        tmp_path: Path) -> None:
    whole, writes = chunked
    assert writes >= 10  # answers, samples, scores and the chunk log of 3 chunks, then summary.json
    for at in range(1, writes + 1):
        out = tmp_path / f"{how}-{at}"
        with pytest.MonkeyPatch.context() as patch:
            Killer(patch, at, how)
            with pytest.raises(Killed):
                cli(*evaluate_args(data, out, *CHUNKED))
        assert not (out / "summary.json").exists() or (how == "after" and at == writes)
        resumed = cli(*evaluate_args(data, out, *CHUNKED))
        assert resumed.code == 0, (at, resumed.err)
        assert scores(out) == whole, at
        assert json.loads((out / "summary.json").read_text())["metrics"]["faithfulness"]["n"] == 12
        assert not list(out.glob("*.tmp"))


def _refuse(monkeypatch: pytest.MonkeyPatch, name: str, mode: str) -> None:
    """Opening ``name`` in ``mode`` fails as on a read-only file system."""
    original = Path.open

    def open_(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self.name == name and mode in (args[0] if args else kwargs.get("mode", "r")):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", open_)


@pytest.mark.parametrize(("name", "mode", "said"), [
    (".lock", "a+", "Nothing of the run was written yet"),
    ("samples.jsonl", "ab", "The judge cache and the finished chunks are intact"),
    ("chunks.jsonl", "ab", "The judge cache and the finished chunks are intact"),
])
def test_a_folder_that_turns_read_only_mid_run(name: str, mode: str, said: str, data: Path,
                                               judges: list[ScriptedEngine], cli: Any, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "run"
    whole = tmp_path / "whole"
    cli(*evaluate_args(data, whole, *CHUNKED))
    with pytest.MonkeyPatch.context() as patch:
        _refuse(patch, name, mode)
        ran = cli(*evaluate_args(data, out, *CHUNKED))
    assert ran.code == 1
    assert ran.one_line() == (f"localeval: could not write {out / name}: Read-only file system. {said}; make the "
                              f"folder writable by this user, then rerun the same command"
                              + ("" if name == ".lock" else " to go on from the first unfinished chunk"))
    assert not (out / "summary.json").exists()
    assert cli(*evaluate_args(data, out, *CHUNKED)).code == 0
    assert scores(out) == scores(whole)


def test_a_cache_that_turns_read_only_mid_run(data: Path, judges: list[ScriptedEngine], cli: Any, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    cache = tmp_path / "shared.sqlite"
    half = tmp_path / "half.jsonl"
    half.write_text("".join(json.dumps(r) + "\n" for r in rows(6)), encoding="utf-8")
    assert cli(*evaluate_args(half, tmp_path / "first", "--cache", cache)).code == 0
    connect = sqlite3.connect

    def read_only(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)
        conn.execute("PRAGMA query_only=1")  # sqlite's own SQLITE_READONLY at the first write
        return conn

    monkeypatch.setattr(sqlite3, "connect", read_only)
    ran = cli(*evaluate_args(data, tmp_path / "run", "--cache", cache))
    assert ran.code == 1
    assert ran.one_line() == (f"localeval: could not write the judge cache {cache} (attempt to write a readonly "
                              "database): make it and its folder writable by this user (or give --out or --cache a "
                              "place you can write), then rerun the same command")
    assert not (tmp_path / "run" / "summary.json").exists()


def test_the_data_file_changed_under_a_chunked_run(data: Path, judges: list[ScriptedEngine], cli: Any,
                                                   tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import localeval.store.chunks as chunks

    out = tmp_path / "run"
    append = chunks._append
    other = "".join(json.dumps({**r, "response": "Nothing at all."}) + "\n" for r in rows(12))

    def rewrite_after_the_first_chunk(path: Path, text: str) -> int:
        size = append(path, text)
        if path.name == chunks.CHUNKS and '"chunk": 0' in text:
            data.write_text(other, encoding="utf-8")  # rewritten in place, as an editor saves it
        return size

    monkeypatch.setattr(chunks, "_append", rewrite_after_the_first_chunk)
    ran = cli(*evaluate_args(data, out, *CHUNKED))
    assert ran.code == 1
    assert ran.one_line().startswith(f"localeval: {data} changed while this run read it, chunk by chunk; the run "
                                     "stopped, before scoring chunk 2 of 3.")
    assert not (out / "summary.json").exists()
    monkeypatch.setattr(chunks, "_append", append)
    assert "--replace" in ran.one_line()
    assert cli(*evaluate_args(data, out, *CHUNKED, "--replace")).code == 0  # starts over on the file as it is now
    assert {row["id"] for row in scores(out)} == {f"r{i}" for i in range(12)}
    assert all(s["response"] == "Nothing at all." for s in map(json.loads, (out / "samples.jsonl").open()))


def test_a_judge_that_changes_between_a_killed_run_and_its_resume(data: Path, judges: list[ScriptedEngine],
                                                                  cli: Any, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Another judge folder (another fingerprint) under the same command: no answer or chunk of the first judge is
    kept in the result."""
    from localeval.engine.scripted import rule_script

    def says_no(label: str, data: dict[str, Any], request: Any) -> Any:
        answer = rule_script(label, data, request)
        return {**answer, "verdicts": [{**v, "verdict": 0} for v in answer["verdicts"]]} if "verdicts" in answer \
            else answer

    out = tmp_path / "run"
    with pytest.MonkeyPatch.context() as patch:
        Killer(patch, 6, "after")  # two chunks finished by the first judge
        with pytest.raises(Killed):
            cli(*evaluate_args(data, out, *CHUNKED))
    monkeypatch.setattr("localeval.run.models.load_judge", lambda *a, **k: ScriptedEngine(says_no, fingerprint="other"))
    assert cli(*evaluate_args(data, out, *CHUNKED)).code == 0
    assert {s["value"] for s in scores(out)} == {0.0}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["run"]["judge"] == "other" and summary["metrics"]["faithfulness"]["n"] == 12


def test_a_full_disk_while_models_prepare_builds(cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import localeval.model_folders.prepare_defaults as prepare

    def fills(out: Path) -> list[str]:
        (out / "model.safetensors").write_bytes(b"\0" * 1000)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(out / "model.safetensors"))

    monkeypatch.setattr(prepare.weight_packages, "check_installed", lambda *a, **k: None)
    monkeypatch.setattr(prepare, "_build_judge", fills)
    monkeypatch.setattr(prepare, "_build_embedder", fills)
    dest = tmp_path / "models"
    ran = cli("models", "prepare", "--dest", dest)
    assert ran.code == 1
    line = ran.err.strip().splitlines()[-1]
    assert line.startswith(f"localeval: could not write {dest}/.") and line.endswith(
        "/model.safetensors: No space left on device. Nothing half-built is left there; free some space, then run "
        "`localeval models prepare` again (or give --dest a folder on another disk)")
    assert "Traceback" not in ran.err and list(dest.iterdir()) == []
