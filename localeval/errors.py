"""The errors localeval raises on purpose: each one says what to do about it; and ``describe``, a value as
such a message shows it; ``writing``, what a file that cannot be written becomes."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


class LocalevalError(Exception):
    """Base class of the errors localeval raises for a user to fix."""


class OptionError(LocalevalError):
    """An option or argument whose value cannot work, found before any model loads (the CLI exits 2)."""

    exit_code = 2


class ModelNotFound(LocalevalError):
    """A model name or path that is not a local model folder (localeval never downloads)."""


class JudgeDied(LocalevalError):
    """The judge engine can answer nothing more: its process is gone, or every ask of a call failed the same
    way. The run stops; ``cause`` is the engine's own error, ``kept`` what became of the answers so far."""

    def __init__(self, cause: str, kept: str = "") -> None:
        self.cause = cause
        self.kept = kept
        super().__init__(f"the judge engine died ({cause}); the run stopped" + (f". {kept}" if kept else ""))


def describe(value: object) -> str:
    """A value for a message: its type and a short repr, e.g. ``int 42``."""
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


class WriteFailed(LocalevalError):
    """A file localeval writes could not be written (a full disk, a read-only folder): which file, why, what is
    intact and how to go on."""


def write_failed(path: object, error: OSError, kept: str, then: str) -> WriteFailed:
    """The error for ``path`` that could not be written: the system's reason, ``kept`` (what is intact), the fix
    the reason calls for, and ``then`` (the command that goes on)."""
    import errno

    reason = error.strerror or str(error) or type(error).__name__
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        fix = "free some space"
    elif error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        fix = "make the folder writable by this user"
    else:
        fix = "fix that"
    return WriteFailed(f"could not write {path}: {reason}. {kept}; {fix}, then {then}")


@contextlib.contextmanager
def writing(path: object, kept: str, then: str) -> Iterator[None]:
    """An OSError inside becomes ``write_failed``, for the file it names (else ``path``): one line that says what
    to do."""
    try:
        yield
    except OSError as error:
        raise write_failed(error.filename or path, error, kept, then) from error
