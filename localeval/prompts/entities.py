"""Extract the named entities of a text (context entity recall)."""

from __future__ import annotations

from pydantic import BaseModel

from localeval.prompts.base import Prompt, TextList


class EntitiesInput(BaseModel):
    text: str


class EntitiesOutput(BaseModel):
    entities: list[str]


ENTITY_CHARS = 80

# About one entity per 30 characters of text; entities are copied from the text, so their budget follows its length.
_ENTITIES = TextList("entities", source="text", chars_per_item=30, item_chars=ENTITY_CHARS)

ENTITIES = Prompt(
    name="entities",
    instruction=(
        "You list the named entities of a text: people, places, organisations, works, events, dates and "
        "quantities with their units. Write each entity once, exactly as the text writes it, in the order "
        "it first appears. Leave out common nouns and anything the text does not name."
    ),
    input_model=EntitiesInput,
    output_model=EntitiesOutput,
    examples=(
        (
            EntitiesInput(text="Ada Lovelace worked with Charles Babbage in London on the Analytical Engine "
                               "and published her notes in 1843."),
            EntitiesOutput(entities=["Ada Lovelace", "Charles Babbage", "London", "Analytical Engine", "1843"]),
        ),
    ),
    schema=_ENTITIES.schema,
    max_tokens=_ENTITIES.max_tokens,
)
