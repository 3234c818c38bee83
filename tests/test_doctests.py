"""The examples in localeval's docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "localeval"
# No module that imports vLLM or Ray; a new module with examples must be listed here.
DOCTESTED = (
    "localeval.agree.pair_count",
    "localeval.agree.ppi",
    "localeval.agree.stats",
    "localeval.engine.repeats",
    "localeval.engine.transformers.batching",
    "localeval.engine.transformers.drafts",
    "localeval.engine.transformers.flat",
    "localeval.engine.transformers.invariant",
    "localeval.engine.transformers.loading",
    "localeval.engine.transformers.slots",
    "localeval.metrics.answer_correctness",
    "localeval.metrics.context_precision",
    "localeval.metrics.context_relevance",
    "localeval.metrics.entity_recall",
    "localeval.metrics.faithfulness",
    "localeval.metrics.retrieval",
    "localeval.prompts.base",
)


@pytest.mark.parametrize("name", DOCTESTED)
def test_docstring_examples_hold(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.attempted > 0, f"{name} has no docstring examples: drop it from DOCTESTED"
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} fail (output above)"


def test_every_module_with_examples_is_listed() -> None:
    with_examples = {
        ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        for path in PACKAGE.rglob("*.py")
        if ">>> " in path.read_text(encoding="utf-8")
    }
    assert with_examples == set(DOCTESTED)
