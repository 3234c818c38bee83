"""The documentation: the README a person reads, and the metrics page generated from the metric definitions."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

from localeval.data import load_samples
from localeval.metrics.registry import METRICS

ROOT = Path(__file__).resolve().parent.parent


def _metrics_page_module():
    spec = importlib.util.spec_from_file_location("metrics_page", ROOT / "docs/hooks/metrics_page.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_metrics_page_is_what_the_definitions_give():
    page = _metrics_page_module().metrics_page()
    assert (ROOT / "docs/metrics.md").read_text(encoding="utf-8") == page, (
        "docs/metrics.md is out of date: run python docs/hooks/metrics_page.py")
    for name in METRICS:
        assert f"## `{name}`" in page


def test_the_readme_is_short_and_its_example_record_loads(tmp_path):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 200
    record = json.loads(re.search(r"```json\n(.*?)```", readme, re.S).group(1))
    data = tmp_path / "one.jsonl"
    data.write_text(json.dumps(record) + "\n", encoding="utf-8")
    [sample] = load_samples(data)
    assert sample.user_input.startswith("When was the Eiffel Tower")
    assert "toy" in readme and "previous session" not in readme


def test_every_docs_page_the_readme_links_exists():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for target in re.findall(r"\]\(((?:docs|benchmarks)/[^)#]+)", readme):
        assert (ROOT / target).is_file(), target


def _prose_blocks(page: str) -> list[list[str]]:
    """A page's blocks (runs of non-blank lines), code fences left out."""
    blocks: list[list[str]] = [[]]
    fenced = False
    for line in page.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            blocks.append([])
        elif fenced or not line.strip():
            blocks.append([])
        else:
            blocks[-1].append(line)
    return [b for b in blocks if b]


PAGES = sorted((ROOT / "docs").glob("*.md"))


def test_no_docs_page_repeats_a_heading():
    for path in PAGES:
        headings = [line for block in _prose_blocks(path.read_text(encoding="utf-8")) for line in block
                    if line.startswith("#")]
        assert len(headings) == len(set(headings)), (path.name, [h for h in headings if headings.count(h) > 1])


def test_every_docs_paragraph_ends_its_sentence():
    """A paragraph of prose (not a heading, list, table or quote) ends as a sentence or an introduction does."""
    for path in PAGES:
        for block in _prose_blocks(path.read_text(encoding="utf-8")):
            if block[0].startswith(("#", "|", "*", "-", ">", "<", "!", "1.")) or re.match(r"\d+\. ", block[0]):
                continue
            assert block[-1].rstrip().endswith((".", ":", "?", "!", ")", "`")), (path.name, block[-1])


def test_every_docs_table_has_a_header_row():
    for path in PAGES:
        for block in _prose_blocks(path.read_text(encoding="utf-8")):
            rows = [line for line in block if line.startswith("|")]
            if rows and block[0].startswith("|"):
                assert len(rows) > 1 and re.fullmatch(r"\|( *:?-+:? *\|)+", rows[1].strip()), (path.name, rows[0])
