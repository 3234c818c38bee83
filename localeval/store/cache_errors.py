"""What a judge cache that cannot be read or written becomes: one ``CacheError`` line that names the file, what
is wrong, what is intact and what to do, in place of sqlite's own error and its traceback."""

from __future__ import annotations

import contextlib
import errno
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from localeval.errors import LocalevalError

# sqlite's result codes by name (Python 3.11+ sets ``sqlite_errorname``); the message words where it is unset
_DAMAGED = ("SQLITE_CORRUPT", "SQLITE_NOTADB", "malformed", "not a database")
_FULL = ("SQLITE_FULL", "disk is full")
_READ_ONLY = ("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "readonly", "unable to open")
_BUSY = ("SQLITE_BUSY", "SQLITE_LOCKED", "database is locked")


class CacheError(LocalevalError):
    """A judge cache file that cannot be read or written."""


def move_aside(path: Path) -> str:
    """The shell command that moves a cache file aside, its WAL files with it (a WAL left beside a new file
    would be read as that file's)."""
    names = [path, *(w for w in (path.with_name(path.name + s) for s in ("-wal", "-shm")) if w.exists())]
    return " && ".join(f"mv {name} {path}.damaged{str(name)[len(str(path)):]}" for name in names)


def damaged_message(path: Path, cause: str) -> str:
    """What a damaged cache file says: the scores come back only from a readable cache, and how to go on."""
    run = path.parent if path.name == "judge.sqlite" else path
    return (f"the judge cache {path} is damaged ({cause}); the scores can be recomputed only from a readable "
            f"cache. Move it aside ({move_aside(path)}) and rerun the same command, which asks the judge "
            f"again; `localeval cache check {run}` counts the answers that can still be read, and "
            f"`localeval cache salvage {run} --to NEW.sqlite` copies them into a fresh file to put in its place")


def cache_error(path: Path, error: sqlite3.Error | OSError, creating: bool) -> CacheError:
    """``error`` (sqlite's, or the system's while making the cache's folder) as one line for ``path``."""
    if isinstance(error, OSError):
        name, cause = errno.errorcode.get(error.errno or 0, ""), error.strerror or str(error)
        full = error.errno in (errno.ENOSPC, errno.EDQUOT)
        kind = "full" if full else "read_only" if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS) else ""
    else:
        name, cause = str(getattr(error, "sqlite_errorname", "")), str(error)
        said = f"{name} {cause}"
        kind = next((k for k, words in (("damaged", _DAMAGED), ("full", _FULL), ("read_only", _READ_ONLY),
                                        ("busy", _BUSY)) if any(w in said for w in words)), "")
    verb = "create" if creating else "write"
    if kind == "damaged":
        return CacheError(damaged_message(path, cause))
    if kind == "full":
        kept = "nothing was kept" if creating else "the answers it held before are intact"
        return CacheError(f"could not {verb} the judge cache {path}: the disk is full ({cause}); {kept}. Free some "
                          "space (or give --out or --cache a place on another disk), then rerun the same command")
    if kind == "read_only":
        return CacheError(f"could not {verb} the judge cache {path} ({cause}): make it and its folder writable by "
                          "this user (or give --out or --cache a place you can write), then rerun the same command")
    if kind == "busy":
        return CacheError(f"the judge cache {path} stayed locked by another process ({cause}); wait for it to "
                          "finish, or give this run another --cache file")
    return CacheError(f"the judge cache {path} cannot be used ({name + ': ' if name else ''}{cause}); move it aside "
                      "and rerun the same command, which asks the judge again")


@contextlib.contextmanager
def guarded(path: Path, creating: bool = False) -> Iterator[None]:
    """sqlite's errors inside (and the system's) raised as ``cache_error`` for ``path``."""
    try:
        yield
    except (sqlite3.Error, OSError) as error:
        raise cache_error(path, error, creating) from error
