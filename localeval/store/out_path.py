"""Whether a run folder can be written, checked before any model loads.

A run writes its folder only at the end of its first chunk, after the judge has loaded and answered; an
``--out`` that names a file, lies under a file, or sits where this process may not write would otherwise
stop the run then, with an OS traceback. The check creates what is missing and a probe file in it, as the
run will, then takes them away again: what the operating system refuses (permissions, a read-only file
system) is found the way the run would meet it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from localeval.errors import LocalevalError


class OutPathError(LocalevalError):
    """A run folder that cannot be written (the CLI exits 2: the value of ``--out`` is the problem)."""

    exit_code = 2


def check_out_path(out: str | Path | None) -> None:
    """Raise OutPathError unless ``out`` is, or can be made, a folder this process can write in (None: no folder)."""
    if out is None:
        return
    path = Path(out).expanduser()
    if os.path.lexists(path) and not os.path.isdir(path):
        raise OutPathError(f"the run folder {out} (--out) is a file, not a folder: give --out a folder path (a "
                           "new one is created), or move the file away")
    missing = []
    existing = path
    while not os.path.lexists(existing) and existing.parent != existing:
        missing.append(existing)
        existing = existing.parent
    if not os.path.isdir(existing):
        raise OutPathError(f"the run folder {out} (--out) cannot be created: {existing} is a file, not a folder; "
                           "give --out a path under a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(prefix=".localeval-probe-", dir=path)
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        raise OutPathError(f"the run folder {out} (--out) cannot be written ({error.strerror or error}): give "
                           "--out a folder this user can write to") from None
    finally:
        for folder in missing:  # deepest first: the run creates them again when it writes
            with contextlib.suppress(OSError):
                folder.rmdir()
