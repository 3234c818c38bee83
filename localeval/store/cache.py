"""The run's SQLite cache of judge answers and embeddings, so a rerun resumes instead of re-asking."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, Self

import numpy as np

from localeval.store.cache_errors import CacheError, damaged_message, guarded

# sqlite's default limit on bound variables is 999 in old builds; stay well under it.
_CHUNK = 500
# SQLite's page cache (its default is 2 MiB): a bulk run's millions of random keys touch many pages.
_PAGE_CACHE_KIB = 64 * 1024
# Another process writing the same file makes ours wait rather than fail.
_BUSY_TIMEOUT_S = 30.0

# The file's layout, in sqlite's user_version: a file with a higher number is a newer localeval's, and refused;
# 0 is a new file, or one from a localeval before the number, whose tables are these.
FORMAT = 1
_COLUMNS = {"answers": ["key", "answer", "created_at"], "embeddings": ["key", "dim", "vector", "created_at"]}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    answer TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS embeddings (
    key TEXT PRIMARY KEY,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    created_at TEXT NOT NULL
);
"""


def _chunks(keys: Sequence[str]) -> Iterator[list[str]]:
    unique = list(dict.fromkeys(keys))
    for start in range(0, len(unique), _CHUNK):
        yield unique[start : start + _CHUNK]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _prepare(conn: sqlite3.Connection, path: Path) -> None:
    """Check the file's format (refusing a newer localeval's and any other program's), then set it up: WAL, the
    page cache, the tables, the format number."""
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > FORMAT:
        raise CacheError(f"the judge cache {path} was written by a newer localeval (cache format {version}; this "
                         f"localeval reads format {FORMAT} and older): run that localeval, or give this run another "
                         "--cache file or --out folder")
    mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        raise sqlite3.OperationalError(f"could not switch {path} to WAL mode (got {mode!r})")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(f"PRAGMA cache_size=-{_PAGE_CACHE_KIB}")
    conn.executescript(_SCHEMA)
    for table, columns in _COLUMNS.items():
        found = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
        if found != columns:
            raise CacheError(f"{path} is not a localeval judge cache (its table {table} has the columns "
                             f"{', '.join(found)}, not {', '.join(columns)}): give --cache another file")
    if version < FORMAT:  # a new file, or one from before the format was numbered (the same tables)
        conn.execute(f"PRAGMA user_version={FORMAT}")


class AnswerStore(Protocol):
    """What the scheduler reads and writes by key: a :class:`JudgeCache`, or a Ray replica's view of the driver's."""

    path: Path | None  # the file, where this process holds it

    @property
    def enabled(self) -> bool: ...

    def get_answers(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]: ...

    def put_answers(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None: ...

    def get_embeddings(self, keys: Sequence[str]) -> dict[str, np.ndarray]: ...

    def put_embeddings(self, items: Sequence[tuple[str, np.ndarray]]) -> None: ...


class JudgeCache:
    """Judge answers (JSON objects) and embeddings (float64 vectors) keyed by a hash of the request.

    WAL journal: a process killed mid-write loses at most its uncommitted transaction, and two
    processes may share one file. The first answer stored under a key wins; later puts of the same
    key change nothing, so rerunning a command never alters what was already answered.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path: Path | None = Path(path)
        new = not self.path.exists()
        conn: sqlite3.Connection | None = None
        try:
            with guarded(self.path, creating=new):
                self.path.parent.mkdir(parents=True, exist_ok=True)
                # isolation_level=None: no implicit transactions; puts open their own with BEGIN IMMEDIATE.
                conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
                _prepare(conn, self.path)
        except BaseException:
            if conn is not None:
                conn.close()
            if new:  # a file this failed start made holds nothing: no empty cache is left behind
                for leftover in (self.path, *(self.path.with_name(self.path.name + s) for s in ("-wal", "-shm"))):
                    with contextlib.suppress(OSError):
                        leftover.unlink()
            raise
        self._conn: sqlite3.Connection | None = conn
        self._closed = False

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> JudgeCache:
        """Open (creating if needed) the cache file at `path`."""
        return cls(path)

    @classmethod
    def disabled(cls) -> JudgeCache:
        """A cache that stores nothing and finds nothing (for --no-cache)."""
        cache = cls.__new__(cls)
        cache.path = None
        cache._conn = None
        cache._closed = False
        return cache

    @property
    def enabled(self) -> bool:
        return self.path is not None

    @staticmethod
    def key(*parts: object) -> str:
        """A stable sha256 hex digest of the parts' canonical JSON (sorted keys, no spaces)."""
        try:
            text = json.dumps(list(parts), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        except TypeError as err:
            raise TypeError(f"cache key parts must be JSON values (str, number, list, dict): {err}") from err
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def get_answers(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The stored answers for those keys that are in the cache (misses are absent)."""
        try:
            return {key: json.loads(answer) for key, answer in self._select("answers", "answer", keys)}
        except ValueError as error:
            assert self.path is not None
            raise CacheError(damaged_message(self.path, f"an answer is not JSON: {error}")) from None

    def put_answers(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Store answers in one transaction; keys already present keep their first answer."""
        if self._connection() is None or not items:
            return
        now = _now()
        # in key order: consecutive inserts land on neighbouring pages of the key index (a bulk run's millions)
        rows = sorted((key, json.dumps(answer, ensure_ascii=False), now) for key, answer in items)
        self._write("INSERT OR IGNORE INTO answers (key, answer, created_at) VALUES (?, ?, ?)", rows)

    def get_embeddings(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors (float64, 1-D) for those keys that are in the cache."""
        found: dict[str, np.ndarray] = {}
        for key, dim, blob in self._select("embeddings", "dim, vector", keys):
            vector = np.frombuffer(blob, dtype=np.float64).copy()
            if vector.shape != (dim,):
                raise ValueError(f"cached embedding {key} has {vector.size} values, expected {dim}")
            found[key] = vector
        return found

    def put_embeddings(self, items: Sequence[tuple[str, np.ndarray]]) -> None:
        """Store 1-D vectors as float64 in one transaction; keys already present are kept."""
        if self._connection() is None or not items:
            return
        now = _now()
        rows = []
        for key, vector in items:
            array = np.ascontiguousarray(vector, dtype=np.float64)
            if array.ndim != 1:
                raise ValueError(f"embedding for {key} must be 1-D, got shape {array.shape}")
            rows.append((key, int(array.size), array.tobytes(), now))
        self._write(
            "INSERT OR IGNORE INTO embeddings (key, dim, vector, created_at) VALUES (?, ?, ?, ?)", rows
        )

    def stats(self) -> dict[str, int]:
        """Row counts per table."""
        conn = self._connection()
        if conn is None or self.path is None:
            return {"answers": 0, "embeddings": 0}
        with guarded(self.path):
            answers = conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0]
            embeddings = conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
        return {"answers": int(answers), "embeddings": int(embeddings)}

    def close(self) -> None:
        """Close the file; safe to call twice. Any later use raises."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._closed = True

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"JudgeCache({str(self.path)!r})" if self.path else "JudgeCache.disabled()"

    def _select(self, table: str, columns: str, keys: Sequence[str]) -> Iterator[tuple[Any, ...]]:
        """Rows (key, *columns) of ``table`` for those keys it holds, read in chunks; none without a cache."""
        conn = self._connection()
        if conn is None or self.path is None:
            return
        with guarded(self.path):
            for chunk in _chunks(keys):
                marks = ",".join("?" * len(chunk))
                yield from conn.execute(f"SELECT key, {columns} FROM {table} WHERE key IN ({marks})", chunk)

    def _connection(self) -> sqlite3.Connection | None:
        """The open connection, None when disabled; raises once closed (a silent no-op would lose writes)."""
        if self._closed:
            raise ValueError(f"{self!r} is closed")
        return self._conn

    def _write(self, sql: str, rows: Sequence[tuple[object, ...]]) -> None:
        conn = self._connection()
        assert conn is not None and self.path is not None
        with guarded(self.path):
            # IMMEDIATE takes the write lock up front, so a busy peer makes us wait instead of failing later.
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(sql, rows)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
