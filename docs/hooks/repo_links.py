"""mkdocs hook: a link from a docs page to a file outside docs/ (``../benchmarks/README.md``) works on GitHub but
not on the built site; there it becomes the file's path in the repository, so ``--strict`` checks every other link."""

from __future__ import annotations

import re

_OUTSIDE = re.compile(r"\[([^\]]+)\]\(\.\./([^)#\s]+)(#[^)\s]*)?\)")


def on_page_markdown(markdown: str, **_: object) -> str:
    """Rewrite ``[text](../path#anchor)`` as ``text (`path` in the repository)``."""
    return _OUTSIDE.sub(lambda m: f"{m.group(1)} (`{m.group(2)}` in the repository)", markdown)
