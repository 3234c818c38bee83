"""Summary score's three asks: the key phrases of a text, closed questions about them, and which of those
questions a summary answers (Ragas 0.4.3's ``SummaryScore`` steps; the wording is localeval's own).

The answers list holds exactly one ``"0"`` or ``"1"`` per question (strings, as Ragas' answers are).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from localeval.prompts.base import Prompt, Repeats, Schema, Settings, TextList, array, obj, text
from localeval.prompts.votes import majority

KEYPHRASE_CHARS = 80
QUESTION_CHARS = 200


class KeyphrasesInput(BaseModel):
    text: str


class KeyphrasesOutput(BaseModel):
    keyphrases: list[str]


class QuestionsInput(BaseModel):
    text: str
    keyphrases: list[str]


class QuestionsOutput(BaseModel):
    questions: list[str]


class AnswersInput(BaseModel):
    summary: str
    questions: list[str]


class AnswersOutput(BaseModel):
    answers: list[str]  # "1": the summary answers the question; "0": it does not


# About one key phrase per 20 characters of the text, copied from it: the budget follows its length.
_KEYPHRASES = TextList("keyphrases", source="text", chars_per_item=20, item_chars=KEYPHRASE_CHARS)


def most_questions(inp: QuestionsInput) -> int:
    """Up to two questions a key phrase, plus two; never fewer than 4, never more than 40."""
    return max(4, min(40, 2 * len(inp.keyphrases) + 2))


def _questions_schema(inp: QuestionsInput, settings: Settings) -> Schema:
    return obj({"questions": array(text(QUESTION_CHARS, 1), 0, most_questions(inp))})


def _questions_tokens(inp: QuestionsInput, settings: Settings) -> int:
    return most_questions(inp) * 24 + 16  # a short yes/no question is about 15 tokens


def _answers_schema(inp: AnswersInput, settings: Settings) -> Schema:
    n = len(inp.questions)
    return obj({"answers": array({"type": "string", "enum": ["0", "1"]}, n, n)})


def _answers_tokens(inp: AnswersInput, settings: Settings) -> int:
    return 4 * len(inp.questions) + 8  # ["1","0",...]: four tokens an answer at most


def vote_answers(answers: Sequence[Any]) -> Any:
    """The majority answer at each question (a tie counts as "0"), over sampled answer lists of one length."""
    lists = [a.answers for a in answers]
    if len({len(items) for items in lists}) != 1:
        raise ValueError("the votes disagree on the number of answers")
    merged = [str(majority([int(v == "1") for v in position])) for position in zip(*lists, strict=True)]
    return answers[0].model_copy(update={"answers": merged})


_RIVER = ("The Rhine rises in the Swiss Alps and flows 1,230 kilometres to the North Sea near Rotterdam. "
          "In 2018 low water cut barge traffic at Kaub by about 40 percent.")
_PHRASES = ["Rhine", "Swiss Alps", "1,230 kilometres", "North Sea", "Rotterdam", "2018", "Kaub", "40 percent"]
_QUESTIONS = ["Does the Rhine rise in the Swiss Alps?", "Is the Rhine 1,230 kilometres long?",
              "Does the Rhine reach the North Sea near Rotterdam?", "Did low water cut barge traffic in 2018?",
              "Did barge traffic at Kaub fall by about 40 percent?"]

KEYPHRASES = Prompt(
    name="summary_keyphrases",
    instruction=(
        "You list the key phrases of a text: the people, organisations, places, dates and times, sums of "
        "money and percentages it names. Copy each phrase as the text writes it, once, in the order it "
        "first appears."
    ),
    input_model=KeyphrasesInput,
    output_model=KeyphrasesOutput,
    examples=((KeyphrasesInput(text=_RIVER), KeyphrasesOutput(keyphrases=_PHRASES)),),
    schema=_KEYPHRASES.schema,
    max_tokens=_KEYPHRASES.max_tokens,
)

SUMMARY_QUESTIONS = Prompt(
    name="summary_questions",
    instruction=(
        "You write yes/no questions that test whether a reader knows the facts of a text. Build them "
        "around the key phrases you are given, one or two per phrase. The text itself must answer every "
        "question with yes, and each question must make sense on its own, without the text beside it."
    ),
    input_model=QuestionsInput,
    output_model=QuestionsOutput,
    examples=((QuestionsInput(text=_RIVER, keyphrases=_PHRASES), QuestionsOutput(questions=_QUESTIONS)),),
    schema=_questions_schema,
    max_tokens=_questions_tokens,
)

SUMMARY_ANSWERS = Prompt(
    name="summary_answers",
    instruction=(
        "You check a summary against a list of yes/no questions. For each question, in order, write \"1\" "
        "if the summary alone holds enough to answer it and \"0\" if it does not (the fact is missing, "
        "vaguer than asked, or contradicted). Give exactly one answer per question."
    ),
    input_model=AnswersInput,
    output_model=AnswersOutput,
    examples=(
        (
            AnswersInput(summary="The Rhine runs 1,230 km from the Swiss Alps to the North Sea; dry spells "
                                 "hamper its shipping.", questions=_QUESTIONS),
            AnswersOutput(answers=["1", "1", "0", "0", "0"]),
        ),
    ),
    schema=_answers_schema,
    max_tokens=_answers_tokens,
    vote=vote_answers,
    repeats=Repeats("questions", "answers"),
)

SUMMARY_PROMPTS: tuple[Prompt, ...] = (KEYPHRASES, SUMMARY_QUESTIONS, SUMMARY_ANSWERS)
