"""Every place the help, messages and docs send a reader exists: README sections, docs pages and their headings.

A pointer in the package's text (help, errors, docstrings) is written ``docs/PAGE.md`` or ``docs/PAGE.md:
Heading`` (or ``README: Heading``); a link in the docs is ``[text](PAGE.md#anchor)``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted([*(ROOT / "localeval").rglob("*.py"), *(ROOT / "docs").glob("*.md"), ROOT / "README.md",
                  ROOT / "ARCHITECTURE.md"])
# README: Heading | README, "Heading" | docs/page.md | docs/page.md: Heading (the heading ends at ) " ; or the line)
POINTER = re.compile(r"\b(README|docs/[\w-]+\.md)(?::\s+|,\s+\")?([A-Z][^)\"\n;]*)?")
LINK = re.compile(r"\]\(((?:docs/)?[\w-]+\.md)(?:#([\w-]+))?\)")


def _headings(page: Path) -> list[str]:
    fenced = False
    found = []
    for line in page.read_text(encoding="utf-8").splitlines():
        fenced ^= line.startswith("```")
        if not fenced and re.match(r"#{1,6} ", line):
            found.append(line.lstrip("#").strip())
    return found


def _anchor(heading: str) -> str:
    """The anchor mkdocs gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\s-]", "", heading.replace("`", "").lower())
    return re.sub(r"\s+", "-", text.strip())


def _page(name: str, source: Path) -> Path:
    if name == "README":
        return ROOT / "README.md"
    return ROOT / name if name.startswith("docs/") else source.parent / name


def pointers(source: Path) -> list[tuple[str, str | None, str | None]]:
    """(page, heading, anchor) of every pointer and link in ``source``."""
    text = source.read_text(encoding="utf-8")
    found: list[tuple[str, str | None, str | None]] = []
    for match in POINTER.finditer(text):
        name, heading = match.group(1), match.group(2)
        if name == "README" and heading is None:
            continue  # "the README", not a section of it
        found.append((name, heading.strip() if heading else None, None))
    if source.suffix == ".md":
        found += [(page, None, anchor) for page, anchor in LINK.findall(text)]
    return found


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_pointer_resolves(source: Path) -> None:
    for name, heading, anchor in pointers(source):
        page = _page(name, source)
        assert page.is_file(), f"{source.relative_to(ROOT)} points to {name}, which does not exist"
        headings = _headings(page)
        if heading is not None:
            assert any(heading.startswith(h) for h in headings), (
                f"{source.relative_to(ROOT)} points to {name}: {heading!r}; its headings: {headings}")
        if anchor:
            assert anchor in {_anchor(h) for h in headings}, (
                f"{source.relative_to(ROOT)} links {name}#{anchor}; its anchors: {[_anchor(h) for h in headings]}")


def test_the_pointer_test_finds_a_pointer_gone(tmp_path: Path) -> None:
    stale = tmp_path / "stale.py"
    stale.write_text('HELP = "threads for torch (README: Speed knobs)"\nMORE = "see docs/cpu.md: Threads"\n')
    assert pointers(stale) == [("README", "Speed knobs", None), ("docs/cpu.md", "Threads", None)]
    assert not any(h.startswith("Speed knobs") for h in _headings(ROOT / "README.md"))
