"""The judge cache under faults, through the command: a damaged file, a disk full when it is created or as it
grows, a file from another localeval, a file of another program. Each: one ``localeval: ...`` line that names
the file and the fix, exit 1, no traceback, no half-made cache; and ``cache check`` and ``cache salvage`` keep
what a damaged file still holds."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from fault_kit import evaluate_args, rows, scores

CONNECT = sqlite3.connect


def _damage(path: Path) -> None:
    """200 bytes overwritten in the middle of the file: at the head of the page that holds the middle answer."""
    with sqlite3.connect(path) as conn:
        (size,) = conn.execute("PRAGMA page_size").fetchone()
        key, answer = conn.execute("SELECT key, answer FROM answers ORDER BY rowid LIMIT 1 OFFSET "
                                   "(SELECT COUNT(*) / 2 FROM answers)").fetchone()
    cell = path.read_bytes().index((key + answer[:8]).encode())
    with path.open("r+b") as handle:
        handle.seek(cell // size * size)
        handle.write(b"\xa5" * 200)


def test_a_damaged_cache_is_one_line_and_what_it_holds_is_saved(judges, cli, tmp_path: Path) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows(60)), encoding="utf-8")
    out, cache = tmp_path / "run", tmp_path / "run" / "judge.sqlite"
    assert cli(*evaluate_args(data, out)).code == 0
    whole, asked = scores(out), len(judges[0].requests)
    _damage(cache)

    for again in (["rescore", out, "--no-progress"], evaluate_args(data, out, "--replace")):
        ran = cli(*again)
        assert ran.code == 1
        line = ran.one_line()
        assert f"the judge cache {cache} is damaged (database disk image is malformed)" in line
        assert "the scores can be recomputed only from a readable cache" in line
        assert f"mv {cache} {cache}.damaged" in line and f"localeval cache check {out}" in line

    checked = cli("cache", "check", out)
    assert checked.code == 1 and "Traceback" not in checked.err
    assert checked.out.startswith(f"{cache}: damaged (") and "answers and 0 embeddings can be read" in checked.out

    new = tmp_path / "saved.sqlite"
    saved = cli("cache", "salvage", out, "--to", new)
    assert saved.code == 0, saved.err
    assert cli("cache", "check", new).out.startswith(f"{new}: sound; ")
    again = cli("cache", "salvage", out, "--to", new)
    assert again.one_line() == f"localeval: {new} exists already: give --to a new file"

    cache.rename(tmp_path / "damaged.sqlite")  # as the salvage line says, then the same command again
    new.rename(cache)
    assert cli(*evaluate_args(data, out, "--replace")).code == 0
    assert scores(out) == whole
    assert 0 < len(judges[-1].requests) < asked  # only what the damaged pages held is asked again


def test_cache_check_of_a_sound_file_and_of_no_file(data: Path, judges, cli, tmp_path: Path) -> None:
    out = tmp_path / "run"
    cli(*evaluate_args(data, out))
    checked = cli("cache", "check", out)
    assert checked.code == 0
    asked = len(judges[0].requests)
    assert checked.out.strip() == f"{out / 'judge.sqlite'}: sound; {asked} answers and 0 embeddings can be read"
    assert cli("cache", "check", tmp_path / "none").code == 1


def _full_at(pages: int):
    """sqlite.connect whose file cannot grow past ``pages`` pages: sqlite's own "database or disk is full"."""
    def full(*args: object, **kwargs: object) -> sqlite3.Connection:
        conn = CONNECT(*args, **kwargs)  # type: ignore[arg-type]
        conn.execute(f"PRAGMA max_page_count={pages}")
        return conn

    return full


def test_a_disk_full_when_the_cache_is_created(data: Path, judges, cli, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    out, cache = tmp_path / "run", tmp_path / "run" / "judge.sqlite"
    monkeypatch.setattr(sqlite3, "connect", _full_at(1))
    ran = cli(*evaluate_args(data, out))
    assert ran.code == 1
    assert ran.one_line() == (f"localeval: could not create the judge cache {cache}: the disk is full (database or "
                              "disk is full); nothing was kept. Free some space (or give --out or --cache a place on "
                              "another disk), then rerun the same command")
    assert sorted(p.name for p in out.iterdir() if p.name != ".lock") == []  # no empty cache, no run files
    monkeypatch.setattr(sqlite3, "connect", CONNECT)
    assert cli(*evaluate_args(data, out)).code == 0


def test_a_disk_that_fills_as_the_cache_grows(data: Path, judges, cli, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    whole = tmp_path / "whole"
    cli(*evaluate_args(data, whole))
    asked = len(judges[0].requests)
    out, cache = tmp_path / "run", tmp_path / "run" / "judge.sqlite"
    monkeypatch.setattr(sqlite3, "connect", _full_at(6))  # the schema, the four empty tables and indexes, and a page
    ran = cli(*evaluate_args(data, out))
    assert ran.code == 1
    assert ran.one_line().startswith(f"localeval: could not write the judge cache {cache}: the disk is full (database "
                                     "or disk is full); the answers it held before are intact. Free some space")
    sizes = [len(call) for call in judges[1].calls]  # the full disk ended the run; no batch was split for it
    assert sizes == [len(call) for call in judges[0].calls][:len(sizes)]
    assert not (out / "summary.json").exists()
    monkeypatch.setattr(sqlite3, "connect", CONNECT)
    assert cli(*evaluate_args(data, out)).code == 0
    assert scores(out) == scores(whole)
    assert len(judges[2].requests) <= asked


def test_a_cache_from_a_newer_localeval_is_refused_and_an_older_one_is_read(data: Path, judges, cli,
                                                                            tmp_path: Path) -> None:
    out, cache = tmp_path / "run", tmp_path / "run" / "judge.sqlite"
    cli(*evaluate_args(data, out))
    with sqlite3.connect(cache) as conn:
        conn.execute("PRAGMA user_version=0")  # as localeval wrote it before the format had a number
    assert cli(*evaluate_args(data, out, "--replace")).code == 0
    assert judges[1].requests == []  # every answer read from it
    with sqlite3.connect(cache) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (1,)
        conn.execute("PRAGMA user_version=7")
    ran = cli(*evaluate_args(data, out, "--replace"))
    assert ran.code == 1 and len(judges) == 2  # refused before the judge loads
    assert ran.one_line() == (f"localeval: the judge cache {cache} was written by a newer localeval (cache format 7; "
                              "this localeval reads format 1 and older): run that localeval, or give this run another "
                              "--cache file or --out folder")


def test_a_file_of_another_program_is_no_cache(data: Path, judges, cli, tmp_path: Path) -> None:
    other = tmp_path / "app.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE answers (id INTEGER, text TEXT)")
    ran = cli(*evaluate_args(data, tmp_path / "run", "--cache", other))
    assert ran.code == 1 and judges == []
    assert ran.one_line() == (f"localeval: {other} is not a localeval judge cache (its table answers has the columns "
                              "id, text, not key, answer, created_at): give --cache another file")
    text = tmp_path / "notes.txt"
    text.write_text("not a database at all, just some notes " * 40)
    ran = cli(*evaluate_args(data, tmp_path / "r2", "--cache", text))
    assert "is damaged (file is not a database)" in ran.one_line()
