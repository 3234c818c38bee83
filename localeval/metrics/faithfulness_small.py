"""Faithfulness in the small-judge mode (``Settings.judge_mode="small"``): Ragas' statements and arithmetic, each
statement judged in its own ask against the few context sentences the embedder ranks closest to it.

The statement step and the score (supported statements over statements) are the default mode's; only the
verdict ask differs (``prompts.check``). docs/trusting-the-judge.md: The small-judge mode.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from localeval.data.sample import Sample
from localeval.metrics.context_relevance import split_sentences
from localeval.metrics.faithfulness import supported_ratio
from localeval.metrics.soft import note_soft
from localeval.nan import Nan
from localeval.prompts import CHECK, STATEMENTS, CheckInput, StatementsInput
from localeval.steps import Ask, Embed, Steps

EVIDENCE_SENTENCES = 3  # context sentences each statement is judged against


def closest(statement: Sequence[float], sentences: np.ndarray, k: int, near: int = 0) -> list[int]:
    """The ``k`` sentences most similar to the statement (cosine), each with ``near`` sentences either side, in
    the context's order.

    >>> closest([1.0, 0.0], np.array([[0.0, 1.0], [1.0, 0.1], [0.7, 0.7], [1.0, 0.0]]), k=2)
    [1, 3]
    >>> closest([1.0, 0.0], np.array([[0.0, 1.0], [1.0, 0.1], [0.7, 0.7], [1.0, 0.0]]), k=1, near=1)
    [2, 3]
    """
    s = np.asarray(statement, dtype=np.float64)
    m = np.asarray(sentences, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        cosine = np.nan_to_num(m @ s / (np.linalg.norm(m, axis=1) * np.linalg.norm(s)), nan=-1.0)
    ranked = sorted(range(len(m)), key=lambda i: (-cosine[i], i))[:k]
    picked = {j for i in ranked for j in range(i - near, i + near + 1) if 0 <= j < len(m)}
    return sorted(picked)


def faithfulness_small(sample: Sample, trace: dict, k: int = EVIDENCE_SENTENCES, near: int = 0) -> Steps:
    """Split the response into statements (as the default mode does), then judge each against its ``k`` closest
    context sentences (and ``near`` neighbours of each) in an ask of its own."""
    assert sample.user_input is not None and sample.response is not None
    extracted = yield Ask(STATEMENTS, StatementsInput(question=sample.user_input, answer=sample.response))
    statements = extracted.statements
    trace["statements"] = statements
    if not statements:
        return Nan("no_statements")
    sentences = [s for context in sample.retrieved_contexts or () for s in split_sentences(context)]
    if sentences:
        vectors = yield Embed((*statements, *sentences))
        rows = np.asarray(vectors[len(statements):])
        evidence = [closest(vectors[i], rows, k, near) for i in range(len(statements))]
    else:
        evidence = [[] for _ in statements]
    trace["evidence"] = evidence  # indices of the context's sentences each statement was judged against
    judged = yield [Ask(CHECK, CheckInput(passage=" ".join(sentences[j] for j in picked), statement=statement))
                    for statement, picked in zip(statements, evidence, strict=True)]
    verdicts = [j.verdict for j in judged]
    trace["verdicts"] = verdicts
    trace["reasons"] = [""] * len(verdicts)  # none asked (as with --no-reasons in the default mode)
    note_soft(trace, supported_ratio, verdicts)
    return supported_ratio(verdicts)
