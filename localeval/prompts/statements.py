"""Split an answer into short, self-contained statements (faithfulness, noise sensitivity)."""

from __future__ import annotations

from pydantic import BaseModel

from localeval.prompts.base import Prompt, Settings, text_list, text_list_tokens


class StatementsInput(BaseModel):
    question: str
    answer: str


class StatementsOutput(BaseModel):
    statements: list[str]


STATEMENT_CHARS = 240


def _max_statements(inp: StatementsInput) -> int:
    # About one statement per 40 characters of answer, never fewer than 4, never more than 40.
    return max(4, min(40, len(inp.answer) // 40 + 2))


def _schema(inp: StatementsInput, settings: Settings) -> dict:
    return text_list("statements", STATEMENT_CHARS, _max_statements(inp))


def _max_tokens(inp: StatementsInput, settings: Settings) -> int:
    # Statements restate the answer, so their length follows the answer's: twice its tokens plus slack.
    return text_list_tokens(inp.answer, STATEMENT_CHARS, _max_statements(inp))


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
    schema=_schema,
    max_tokens=_max_tokens,
)
