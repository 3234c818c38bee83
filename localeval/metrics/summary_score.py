"""Summary score (Ragas 0.4.3's ``SummaryScore``): how much of a text's key facts a summary keeps, blended
with how much shorter than the text it is.

Three asks in a row: the key phrases of the text (the reference contexts joined with newlines), yes/no
questions built on them, and which of the questions the summary (the response) answers. The QA score is
the share answered; with the length penalty the score is ``qa * (1 - coeff) + conciseness * coeff``, where
conciseness is ``1 - min(len(summary), len(text)) / (len(text) + 1e-10)`` (characters); without it, the
QA score alone.

Edge cases: Ragas raises ValueError on a blank response or on contexts that are all blank; here that is
``Nan("missing_field")`` with no ask. When the judge writes no question Ragas divides by zero; here that
is ``Nan("no_questions")`` (the answers are not asked). No key phrase is not an error, as in Ragas: the
questions are still asked.
"""

from __future__ import annotations

from collections.abc import Sequence

from localeval.data.sample import Sample
from localeval.nan import Nan
from localeval.prompts.summary import (
    KEYPHRASES,
    SUMMARY_ANSWERS,
    SUMMARY_QUESTIONS,
    AnswersInput,
    KeyphrasesInput,
    QuestionsInput,
)
from localeval.steps import Ask, Steps


def qa_score(answers: Sequence[str]) -> float:
    """The share of answers that are "1" (Ragas' ``a.lower() == "1"``); raises on no answer, as Ragas does."""
    return sum(1 for a in answers if a.lower() == "1") / len(answers)


def conciseness(text: str, summary: str) -> float:
    """1 for an empty summary, 0 for one as long as the text or longer (Ragas' formula, in characters)."""
    return 1 - min(len(summary), len(text)) / (len(text) + 1e-10)


def blend(qa: float, concise: float | None, coeff: float) -> float:
    """The final score: the QA score alone without a conciseness term, else Ragas' weighted sum."""
    return qa if concise is None else qa * (1 - coeff) + concise * coeff


def summary_score(sample: Sample, trace: dict, length_penalty: str = "true", coeff: float = 0.5) -> Steps:
    """Key phrases of the contexts, questions on them, which the response answers; then Ragas' blend.

    ``coeff``: the conciseness weight, from 0 to 1 (the option parser checks it before any model loads).
    """
    contexts, summary = sample.reference_contexts, sample.response
    if not contexts or not any(c.strip() for c in contexts) or not summary or not summary.strip():
        return Nan("missing_field")  # Ragas raises ValueError on blank contexts or a blank response
    text = "\n".join(contexts)
    found = yield Ask(KEYPHRASES, KeyphrasesInput(text=text))
    keyphrases = list(found.keyphrases)
    asked = yield Ask(SUMMARY_QUESTIONS, QuestionsInput(text=text, keyphrases=keyphrases))
    questions = list(asked.questions)
    trace.update(keyphrases=keyphrases, questions=questions, answers=[], qa_score=None, conciseness=None)
    if not questions:
        return Nan("no_questions")  # Ragas: a division by zero
    answered = yield Ask(SUMMARY_ANSWERS, AnswersInput(summary=summary, questions=questions))
    qa = qa_score(answered.answers)
    concise = conciseness(text, summary) if length_penalty == "true" else None
    trace.update(answers=[int(a == "1") for a in answered.answers], qa_score=qa, conciseness=concise)
    return blend(qa, concise, coeff)
