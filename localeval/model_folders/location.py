"""Where model folders live: ``$LOCALEVAL_MODELS``, a source checkout's ``models/``, or the per-user cache."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # the localeval package folder
CACHE_REASON = "the per-user cache ($XDG_CACHE_HOME/localeval/models, default ~/.cache/localeval/models)"


def checkout_root(package_dir: Path) -> Path | None:
    """The source checkout holding ``package_dir`` (its parent has this project's pyproject.toml), else None."""
    pyproject = package_dir.parent / "pyproject.toml"
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    return package_dir.parent if project.get("name") == "localeval" else None


def models_location() -> tuple[Path, str]:
    """The folder holding model folders, and why it is that one."""
    env = os.environ.get("LOCALEVAL_MODELS")
    if env:
        return Path(env).expanduser(), "$LOCALEVAL_MODELS"
    checkout = checkout_root(PACKAGE_DIR)
    if checkout is not None:
        return checkout / "models", f"the source checkout {checkout}"
    cache = Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser()
    if not cache.is_absolute():  # the XDG spec says to ignore a relative value
        cache = Path.home() / ".cache"
    return cache / "localeval" / "models", CACHE_REASON


def models_dir() -> Path:
    """``$LOCALEVAL_MODELS``, else ``<checkout>/models`` in a source checkout, else the per-user cache."""
    return models_location()[0]
