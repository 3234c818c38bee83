"""SQL semantic equivalence: does a generated query return what a reference query returns, on the given
database schema (Ragas 0.4.3's ``SQLSemanticEquivalence``; the wording is localeval's own).

The answer explains each query, then gives the verdict as a boolean. The explanations are part of the
answer whether reasons are on or not: they are what the verdict is read from.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from localeval.prompts.base import Prompt, Schema, Settings, obj, text

EXPLANATION_CHARS = 300


class SqlInput(BaseModel):
    database_schema: str  # first: asks against one database share it
    reference: str
    response: str


class SqlVerdict(BaseModel):
    response_explanation: str
    reference_explanation: str
    equivalent: bool


def _schema(inp: SqlInput, settings: Settings) -> Schema:
    return obj({"response_explanation": text(EXPLANATION_CHARS), "reference_explanation": text(EXPLANATION_CHARS),
                "equivalent": {"type": "boolean"}})


def _budget(inp: SqlInput, settings: Settings) -> int:
    return 2 * (EXPLANATION_CHARS // 3 + 8) + 24


def vote_equivalent(answers: Sequence[Any]) -> Any:
    """The verdict most sampled answers gave (a tie counts as not equivalent), with that answer's explanations."""
    winner = sum(1 for a in answers if a.equivalent) * 2 > len(answers)
    return next(a for a in answers if a.equivalent == winner)


_SHOP = "Table customers: id INT, country TEXT, signed_up DATE"

SQL_EQUIVALENCE = Prompt(
    name="sql_equivalence",
    instruction=(
        "You compare two SQL queries on a database schema: a reference query and a generated one. Say in a "
        "sentence what each query returns, then decide: equivalent is true when both would return the same "
        "result on every database with this schema, false otherwise. Differences that never change the "
        "result (aliases, formatting, the order of AND-ed conditions, an IN list against OR-ed equalities, "
        "a join written another way) do not count; a different filter, aggregate, grouping, DISTINCT, limit "
        "or ORDER BY that the result depends on does."
    ),
    input_model=SqlInput,
    output_model=SqlVerdict,
    examples=(
        (
            SqlInput(database_schema=_SHOP,
                     reference="SELECT id FROM customers WHERE country = 'FR' OR country = 'DE';",
                     response="SELECT c.id FROM customers AS c WHERE c.country IN ('DE', 'FR')"),
            SqlVerdict(response_explanation="Ids of customers whose country is DE or FR, via an IN list.",
                       reference_explanation="Ids of customers whose country is FR or DE, via two equalities.",
                       equivalent=True),
        ),
        (
            SqlInput(database_schema=_SHOP,
                     reference="SELECT COUNT(DISTINCT country) FROM customers;",
                     response="SELECT COUNT(country) FROM customers;"),
            SqlVerdict(response_explanation="The number of customers with a country, repeats counted.",
                       reference_explanation="The number of different countries customers come from.",
                       equivalent=False),
        ),
    ),
    schema=_schema,
    max_tokens=_budget,
    vote=vote_equivalent,
)
