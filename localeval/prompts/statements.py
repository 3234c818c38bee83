"""Split an answer into short, self-contained statements (faithfulness, noise sensitivity)."""

from __future__ import annotations

from pydantic import BaseModel

from localeval.prompts.base import Prompt, TextList


class StatementsInput(BaseModel):
    question: str
    answer: str


class StatementsOutput(BaseModel):
    statements: list[str]


STATEMENT_CHARS = 240


# About one statement per 40 characters of answer; statements restate the answer, so their budget follows its length.
_STATEMENTS = TextList("statements", source="answer", chars_per_item=40, item_chars=STATEMENT_CHARS)


STATEMENTS = Prompt(
    name="statements",
    instruction=(
        "You split an answer into statements. Read the question and the answer, then rewrite every "
        "sentence of the answer as one or more short statements that each make sense on their own: "
        "replace pronouns with the names they stand for, and keep every fact the answer gives. "
        "Do not add facts, and do not judge whether they are true."
    ),
    input_model=StatementsInput,
    output_model=StatementsOutput,
    examples=(
        (
            StatementsInput(
                question="What is Marie Curie known for?",
                answer=(
                    "She was a Polish-born physicist and chemist who pioneered research on radioactivity. "
                    "She won two Nobel Prizes, in physics and in chemistry."
                ),
            ),
            StatementsOutput(
                statements=[
                    "Marie Curie was a Polish-born physicist and chemist.",
                    "Marie Curie pioneered research on radioactivity.",
                    "Marie Curie won a Nobel Prize in physics.",
                    "Marie Curie won a Nobel Prize in chemistry.",
                ]
            ),
        ),
    ),
    schema=_STATEMENTS.schema,
    max_tokens=_STATEMENTS.max_tokens,
)
