"""What a judge cache still holds when it is damaged: ``check_cache`` counts the answers and embeddings that can
be read and says whether the file is sound; ``salvage_cache`` copies them into a fresh cache file.

A damaged page of a table stops sqlite's scan of it; the rows are read in rowid order, and past a page that
cannot be read the scan jumps ahead (1, 2, 4, ... rows) until rows can be read again, so one bad page costs only
the rows on it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from localeval.errors import LocalevalError
from localeval.store.cache import JudgeCache
from localeval.store.cache_errors import move_aside
from localeval.store.run_folder import CACHE

_BATCH = 1000  # rows copied per transaction


@dataclass
class CacheCheck:
    """A cache file read row by row: what can be read, and what sqlite's own check says of it."""

    path: Path
    answers: int = 0
    embeddings: int = 0
    lost: int = 0  # rows skipped over: on a page that cannot be read, or not an answer or a vector
    problems: list[str] = field(default_factory=list)  # sqlite's quick_check, or why the file cannot be opened

    @property
    def sound(self) -> bool:
        return not self.problems and not self.lost

    def lines(self) -> list[str]:
        """What ``localeval cache check`` prints."""
        readable = f"{self.answers} answers and {self.embeddings} embeddings can be read"
        if self.sound:
            return [f"{self.path}: sound; {readable}"]
        run = self.path.parent if self.path.name == CACHE else self.path
        return [f"{self.path}: damaged ({'; '.join(self.problems[:3]) or 'rows cannot be read'}); {readable}"
                + (f", about {self.lost} rows cannot" if self.lost else ""),
                f"to keep what can be read: localeval cache salvage {run} --to NEW.sqlite, then "
                f"{move_aside(self.path)} && mv NEW.sqlite {self.path}, and rerun the same command (it asks the "
                "judge only for the rest)"]


def cache_path(run: str | Path) -> Path:
    """The cache file of ``run``: a run folder's judge.sqlite, or the file itself."""
    path = Path(run)
    file = path / CACHE if path.is_dir() else path
    if not file.is_file():
        raise LocalevalError(f"{file} does not exist: give a run folder that holds {CACHE}, or a cache file")
    return file


def check_cache(run: str | Path) -> CacheCheck:
    """Count what the cache of ``run`` holds that can be read (``cache_path``), and check the file."""
    check = CacheCheck(cache_path(run))
    for _ in _readable(check):
        pass
    return check


def salvage_cache(run: str | Path, to: str | Path) -> CacheCheck:
    """Copy every answer and embedding the cache of ``run`` holds that can be read into a new cache file ``to``,
    written whole or not at all; what was copied."""
    dest = Path(to)
    if dest.exists():
        raise LocalevalError(f"{dest} exists already: give --to a new file")
    check = CacheCheck(cache_path(run))
    tmp = dest.with_name(f".{dest.name}.tmp-{os.getpid()}")
    try:
        with JudgeCache(tmp) as fresh:
            answers: list[tuple[str, Any]] = []
            vectors: list[tuple[str, Any]] = []
            for table, key, value in _readable(check):
                (answers if table == "answers" else vectors).append((key, value))
                if len(answers) + len(vectors) >= _BATCH:
                    _flush(fresh, answers, vectors)
            _flush(fresh, answers, vectors)
        os.replace(tmp, dest)
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + "-wal"), tmp.with_name(tmp.name + "-shm")):
            with contextlib.suppress(OSError):
                leftover.unlink()
    return check


def _flush(fresh: JudgeCache, answers: list[tuple[str, Any]], vectors: list[tuple[str, Any]]) -> None:
    fresh.put_answers(answers)
    fresh.put_embeddings(vectors)
    answers.clear()
    vectors.clear()


def _readable(check: CacheCheck) -> Iterator[tuple[str, str, Any]]:
    """(table, key, answer or vector) of every row that can be read; counts them, and the rest, into ``check``."""
    try:
        conn = _connect(check.path)
    except sqlite3.Error as error:
        check.problems.append(str(error))
        return
    with contextlib.closing(conn):
        try:
            check.problems += [r[0] for r in conn.execute("PRAGMA quick_check(5)") if r[0] != "ok"]
        except sqlite3.Error as error:
            check.problems.append(str(error))
        for key, answer in _rows(conn, "answers", "answer", check):
            value = _answer(answer)
            if value is None:
                check.lost += 1
                continue
            check.answers += 1
            yield "answers", key, value
        for key, dim, blob in _rows(conn, "embeddings", "dim, vector", check):
            if not isinstance(blob, bytes) or not isinstance(dim, int) or len(blob) != 8 * dim:
                check.lost += 1
                continue
            check.embeddings += 1
            import numpy as np

            yield "embeddings", key, np.frombuffer(blob, dtype=np.float64).copy()


def _connect(path: Path) -> sqlite3.Connection:
    """The file opened read-only (ignoring its WAL where even a read-only open cannot go through it)."""
    uri = f"file:{quote(str(path.resolve()))}"
    try:
        conn = sqlite3.connect(f"{uri}?mode=ro", uri=True)
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError:
        return sqlite3.connect(f"{uri}?immutable=1", uri=True)


def _answer(text: Any) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _rows(conn: sqlite3.Connection, table: str, columns: str, check: CacheCheck) -> Iterator[tuple[Any, ...]]:
    """(key, *columns) of ``table`` in rowid order, jumping past the rows that cannot be read."""
    select = f"SELECT rowid, key, {columns} FROM {table} WHERE rowid > ? ORDER BY rowid"
    try:
        top = int(conn.execute(f"SELECT max(rowid) FROM {table}").fetchone()[0] or 0)
    except sqlite3.Error as error:
        check.problems.append(f"table {table}: {error}")
        return
    after = 0  # the last rowid read (the cache deletes nothing: its rowids run 1, 2, 3, ...)
    while after < top:
        try:
            for rowid, *row in conn.execute(select, (after,)):
                after = rowid
                yield tuple(row)
            return
        except sqlite3.Error:
            resume = _resume(conn, select, after, top)
            check.lost += (top if resume is None else resume) - after
            if resume is None:
                return
            after = resume


def _resume(conn: sqlite3.Connection, select: str, after: int, top: int) -> int | None:
    """The lowest rowid past ``after`` from which ``select`` reads again (jumps 1, 2, 4, ..., then halving back);
    None when none before ``top`` does."""

    def reads(start: int) -> bool:
        try:
            conn.execute(select + " LIMIT 1", (start,)).fetchall()
        except sqlite3.Error:
            return False
        return True

    failing, step = after, 1
    while not reads(after + step):
        failing = after + step
        if failing >= top:
            return None
        step *= 2
    works = after + step
    while works - failing > 1:
        middle = (works + failing) // 2
        works, failing = (middle, failing) if reads(middle) else (works, middle)
    return works
