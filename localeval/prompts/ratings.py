"""Single-rating prompts: two differently worded judges rate one answer, and the two ratings are averaged.

Answer accuracy (the response against the reference, 0/2/4), context relevance (the joined contexts
against the question, 0/1/2) and response groundedness (the response against the joined contexts,
0/1/2), the arithmetic of Ragas 0.4.3's dual-judge metrics; the wording is localeval's own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

from localeval.prompts.base import Prompt, Schema, Settings, with_reason

REASON_CHARS = 160


class Rating(BaseModel):
    """One rating on a fixed scale, after the short reason that led to it (empty when reasons are off)."""

    reason: str = ""
    rating: int


def rating_schema(values: Sequence[int], settings: Settings) -> Schema:
    """A reason (when reasons are on), then one of ``values``."""
    return with_reason({"rating": {"type": "integer", "enum": list(values)}}, settings, REASON_CHARS)


def vote_rating(answers: Sequence[Any]) -> Any:
    """The most common rating of several sampled answers (the first one seen on a tie), with its reason."""
    winner = Counter(a.rating for a in answers).most_common(1)[0][0]
    return next(a for a in answers if a.rating == winner)


def _budget(settings: Settings) -> int:
    return (REASON_CHARS // 3 + 24) if settings.reasons else 12


def rating_prompt(name: str, instruction: str, input_model: type[BaseModel], values: tuple[int, ...],
                  examples: tuple[tuple[Any, Rating], ...]) -> Prompt:
    """A prompt whose answer is a :class:`Rating` bounded to ``values`` by the schema."""
    schema: Callable[[Any, Settings], Schema] = lambda inp, settings: rating_schema(values, settings)  # noqa: E731
    return Prompt(name=name, instruction=instruction, input_model=input_model, output_model=Rating,
                  examples=examples, schema=schema, max_tokens=lambda inp, settings: _budget(settings),
                  vote=vote_rating)


class AccuracyInput(BaseModel):
    question: str
    answer: str
    reference: str


class QuestionContextInput(BaseModel):
    question: str
    context: str


class GroundingInput(BaseModel):
    context: str  # first: both judges' asks about one sample share it
    response: str


ACCURACY_SCALE = (0, 2, 4)
THREE_POINTS = (0, 1, 2)
_ACC_EX = AccuracyInput(question="In which year did the Berlin Wall fall?", answer="It fell in 1989.",
                        reference="The Berlin Wall fell on 9 November 1989.")
_ACC_BAD = AccuracyInput(question="In which year did the Berlin Wall fall?", answer="It fell in 1991.",
                         reference="The Berlin Wall fell on 9 November 1989.")

ACCURACY_1 = rating_prompt(
    "accuracy_1",
    "You grade an answer against a reference answer that fully answers the question. Rating 4: the "
    "answer says the same as the reference in every name, number, date and unit. Rating 2: it agrees "
    "with the reference but leaves something out or is less precise. Rating 0: it contradicts the "
    "reference, gets a fact wrong, or does not answer the question.",
    AccuracyInput, ACCURACY_SCALE,
    ((_ACC_EX, Rating(reason="Right year, but the day is missing.", rating=2)),
     (_ACC_BAD, Rating(reason="The year is wrong.", rating=0))),
)
ACCURACY_2 = rating_prompt(
    "accuracy_2",
    "Compare two answers to a question; the second one, the reference, is known to be right. Give 4 "
    "when the first answer matches the reference completely (facts, figures, dates, units), 2 when it "
    "matches it only in part or with small differences, and 0 when it is wrong, unrelated, or misses "
    "the question.",
    AccuracyInput, ACCURACY_SCALE,
    ((_ACC_BAD, Rating(reason="1991 is not 1989.", rating=0)),
     (_ACC_EX, Rating(reason="The year agrees; the date is less precise.", rating=2))),
)

_REL_EX = QuestionContextInput(question="How tall is Mount Kilimanjaro?",
                               context="Kilimanjaro, in Tanzania, rises 5,895 metres above sea level.")
_REL_OFF = QuestionContextInput(question="How tall is Mount Kilimanjaro?",
                                context="Tanzania's largest city is Dar es Salaam.")
RELEVANCE_1 = rating_prompt(
    "relevance_rating_1",
    "You rate how relevant a retrieved context is to a question. Rating 2: the context holds what is "
    "needed to answer the question. Rating 1: it answers the question only in part. Rating 0: it does "
    "not help answer the question.",
    QuestionContextInput, THREE_POINTS,
    ((_REL_EX, Rating(reason="It gives the height.", rating=2)),
     (_REL_OFF, Rating(reason="Same country, nothing about the mountain.", rating=0))),
)
RELEVANCE_2 = rating_prompt(
    "relevance_rating_2",
    "Read the question, then the passage. Does the passage let someone answer the question? Answer 0 "
    "for no (off-topic or useless), 1 for partly (some of what is asked), 2 for yes (everything that "
    "is asked).",
    QuestionContextInput, THREE_POINTS,
    ((_REL_OFF, Rating(reason="The passage is about a city.", rating=0)),
     (_REL_EX, Rating(reason="The height is there.", rating=2))),
)

_GR_EX = GroundingInput(context="The library opens at 9:00 and closes at 17:00 on weekdays.",
                        response="On weekdays the library is open from 9:00 to 17:00.")
_GR_PART = GroundingInput(context="The library opens at 9:00 and closes at 17:00 on weekdays.",
                          response="It opens at 9:00 and is also open on Sundays.")
GROUNDEDNESS_1 = rating_prompt(
    "groundedness_1",
    "You check whether a response is grounded in a context. Rating 2: everything the response says is "
    "supported by the context. Rating 1: some of it is supported and some is not. Rating 0: none of it "
    "is supported, or the context contradicts it. Use no outside knowledge.",
    GroundingInput, THREE_POINTS,
    ((_GR_EX, Rating(reason="Both hours are in the context.", rating=2)),
     (_GR_PART, Rating(reason="The hour is supported; Sundays are not mentioned.", rating=1))),
)
GROUNDEDNESS_2 = rating_prompt(
    "groundedness_2",
    "Given a context and a response, say how much of the response can be traced back to the context: "
    "2 if all of it, 1 if only part of it, 0 if none of it. Claims the context does not make count as "
    "unsupported, however plausible.",
    GroundingInput, THREE_POINTS,
    ((_GR_PART, Rating(reason="The Sunday opening is not in the context.", rating=1)),
     (_GR_EX, Rating(reason="All of it is in the context.", rating=2))),
)

RATING_PROMPTS: tuple[Prompt, ...] = (ACCURACY_1, ACCURACY_2, RELEVANCE_1, RELEVANCE_2, GROUNDEDNESS_1,
                                      GROUNDEDNESS_2)
