"""The small-judge mode's faithfulness check: one statement against the few sentences of the context closest to it.

A small judge asked about a list of statements against a whole passage (Ragas' NLI prompt) gives verdicts at
chance; asked about one statement at a time against a few sentences, with the verdict first, it has less to
hold and nothing to write before deciding. No reason is asked: one written after the verdict cannot change it.
"""

from __future__ import annotations

from pydantic import BaseModel

from localeval.prompts.base import Prompt, binary, obj
from localeval.prompts.votes import vote_field


class CheckInput(BaseModel):
    passage: str  # the context sentences the embedder ranks closest to the statement, in the context's order
    statement: str


class CheckOutput(BaseModel):
    verdict: int


_VIADUCT = ("The Millau Viaduct spans the valley of the Tarn near Millau in southern France. It was opened to "
            "traffic on 16 December 2004. Its highest mast stands 343 metres above the river.")
_LARSEN = ("Anna Larsen joined the Bergen orchestra as a second violinist in 1998. She left it in 2011 to teach at "
           "the music conservatory.")
_STORM = "The storm reached the coast on Friday night. Four people died and more than thirty were hurt."

CHECK: Prompt[CheckInput, CheckOutput] = Prompt(
    name="statement_check",
    instruction=(
        "You check one statement against a short passage taken from a source text. Verdict 1: the passage "
        "says what the statement says, in the same or other words, or it follows plainly from the passage. "
        "Verdict 0: the passage says something else (another date, number, name or place), or it does not say "
        "it at all. Use the passage only, not what you know."
    ),
    input_model=CheckInput,
    output_model=CheckOutput,
    examples=(
        (CheckInput(passage=_VIADUCT, statement="The Millau Viaduct opened in 2004."), CheckOutput(verdict=1)),
        (CheckInput(passage=_VIADUCT, statement="The Millau Viaduct was opened to traffic in 2006."),
         CheckOutput(verdict=0)),
        (CheckInput(passage=_LARSEN, statement="Anna Larsen was born in Bergen."), CheckOutput(verdict=0)),
        (CheckInput(passage=_LARSEN, statement="Anna Larsen played the violin in an orchestra."),
         CheckOutput(verdict=1)),
        (CheckInput(passage=_STORM, statement="The storm injured people."), CheckOutput(verdict=1)),
        (CheckInput(passage=_STORM, statement="The storm destroyed the harbour."), CheckOutput(verdict=0)),
    ),
    schema=lambda inp, settings: obj({"verdict": binary()}),
    max_tokens=lambda inp, settings: 12,
    vote=vote_field(),
)
