"""The judge server's API key: read from an environment variable or a file, never from the command line (a
shell's history and ``ps`` would show it), and never written anywhere by localeval (only where it came from is)."""

from __future__ import annotations

import os
from pathlib import Path

from localeval.errors import LocalevalError

KEY_ENV = "LOCALEVAL_SERVER_API_KEY"  # read when set; a name given with --server-api-key-env must be set


def read_key(env: str | None = None, file: str | None = None) -> str | None:
    """The API key: the first line of ``file`` when one is given, else the variable ``env`` (None: KEY_ENV).

    A variable other than the default that is not set, or an empty or unreadable file, is an error: a key asked
    for and not found would only come back as a 401 from the server.
    """
    if file:
        try:
            lines = Path(file).expanduser().read_text().splitlines()
        except OSError as error:
            raise LocalevalError(f"the API key file {file} cannot be read ({error.strerror})") from None
        key = lines[0].strip() if lines else ""
        if not key:
            raise LocalevalError(f"the API key file {file} is empty; put the key on its first line")
        return key
    env = env or KEY_ENV
    key = os.environ.get(env, "").strip()
    if not key and env != KEY_ENV:
        raise LocalevalError(f"the environment variable {env} that should hold the judge server's API key is not "
                             f"set (or empty); export it, or give --server-api-key-file")
    return key or None


__all__ = ["KEY_ENV", "read_key"]
