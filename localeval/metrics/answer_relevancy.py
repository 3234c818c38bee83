"""Response relevancy: how close the questions generated from the response are to the real one."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from localeval.data.sample import Sample
from localeval.metrics.soft import note_soft
from localeval.nan import Nan
from localeval.prompts import QUESTION, QuestionInput
from localeval.steps import Ask, Embed, Steps


def relevancy_score(
    question_vector: Sequence[float], generated_vectors: Sequence[Sequence[float]], noncommittal: Sequence[float]
) -> float:
    """Mean cosine between each generated question and the user input, times 0 if all are evasive.

    The factor is one minus the product of the noncommittal flags: Ragas' ``int(not all(...))`` on 0/1,
    and on p(1) (the soft score) one minus the probability that every question is evasive.

    The cosine is not clipped at 0, as in Ragas; a zero vector makes it 0/0, so the score is NaN
    (as in Ragas, without numpy's warning).
    """
    q = np.asarray(question_vector, dtype=np.float64).reshape(1, -1)
    g = np.asarray(generated_vectors, dtype=np.float64).reshape(len(generated_vectors), -1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cosine = (g @ q.T).reshape(-1) / (np.linalg.norm(g, axis=1) * np.linalg.norm(q, axis=1))
    return float(cosine.mean() * (1 - np.prod(np.asarray(noncommittal, dtype=np.float64))))


def answer_relevancy(sample: Sample, trace: dict, strictness: int = 3, empty: str = "zero") -> Steps:
    """Generate ``strictness`` questions from the response alone and compare them with the input.

    ``empty``: what a sample scores when no generation yields a question: ``zero`` (Ragas) or
    ``nan`` (``Nan("no_questions")``, which keeps such samples out of the mean).
    """
    assert sample.user_input is not None and sample.response is not None
    generations = yield Ask(QUESTION, QuestionInput(response=sample.response), n=strictness)
    kept = [g for g in generations if g.question]  # Ragas skips generations with no question
    trace["questions"] = [g.question for g in kept]
    trace["noncommittal"] = [g.noncommittal for g in kept]
    if not kept:
        return Nan("no_questions") if empty == "nan" else 0.0
    vectors = yield Embed((sample.user_input, *(g.question for g in kept)))
    note_soft(trace, lambda flags: relevancy_score(vectors[0], vectors[1:], flags), [g.noncommittal for g in kept])
    return relevancy_score(vectors[0], vectors[1:], [g.noncommittal for g in kept])
