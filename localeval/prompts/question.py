"""Write the question an answer responds to, and flag evasive answers (response relevancy)."""

from __future__ import annotations

from pydantic import BaseModel

from localeval.prompts.base import Prompt, Settings, binary, obj, text

QUESTION_CHARS = 200


class QuestionInput(BaseModel):
    response: str


class QuestionOutput(BaseModel):
    question: str
    noncommittal: int


def _schema(inp: QuestionInput, settings: Settings) -> dict:
    return obj({"question": text(QUESTION_CHARS), "noncommittal": binary()})


def _max_tokens(inp: QuestionInput, settings: Settings) -> int:
    return QUESTION_CHARS // 3 + 24


QUESTION = Prompt(
    name="question",
    instruction=(
        "You read an answer and write the question it most likely answers. Also mark whether the "
        "answer is noncommittal: noncommittal 1 if it evades, hedges or gives no real answer "
        "(for example \"I don't know\" or \"it depends\"), noncommittal 0 if it commits to an answer."
    ),
    input_model=QuestionInput,
    output_model=QuestionOutput,
    examples=(
        (
            QuestionInput(response="The Amazon river flows into the Atlantic Ocean."),
            QuestionOutput(question="Into which ocean does the Amazon river flow?", noncommittal=0),
        ),
        (
            QuestionInput(response="Python 3.0 was released in December 2008."),
            QuestionOutput(question="When was Python 3.0 released?", noncommittal=0),
        ),
        (
            QuestionInput(
                response="I can't say who will win next year's election; I have no information about it."
            ),
            QuestionOutput(question="Who will win next year's election?", noncommittal=1),
        ),
    ),
    schema=_schema,
    max_tokens=_max_tokens,
    sampling_temperature=0.7,  # strictness > 1 asks for different questions, so sample
)
