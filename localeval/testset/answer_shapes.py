"""What the test-set prompts share: the limits on every answer, its bounded shapes, and the examples' texts.

A question is one string that ends at its first question mark, a summary or reference answer is a short
list of sentences, each ending at its first full stop: a looping judge stops early.
"""

from __future__ import annotations

from localeval.prompts.base import Schema, array, tokens_for_chars

SENTENCE_CHARS = 200
SUMMARY_SENTENCES = 2
REFERENCE_SENTENCES = 3
NAME_CHARS = 40
MAX_ENTITIES = 5
MAX_THEMES = 3
QUESTION_CHARS = 200
KEYWORDS_CHARS = 100
REASON_CHARS = 160

REFUSAL = "The documents do not say."  # the reference answer of every unanswerable question
# Names found only in the examples: a question or reference that holds one copied an example (small judges do).
EXAMPLE_MARKERS = ("elmbrook",)

# The examples' documents: a made-up public library, so their facts cannot leak into the user's questions.
LIBRARY = (
    "Borrowing\nMembers of the Elmbrook Library may borrow up to 12 books at a time for three weeks. "
    "A loan can be renewed twice online. Late returns cost 20 cents a day per book."
)
LIBRARY_2 = (
    "Study rooms\nElmbrook Library members can book one of four study rooms for up to three hours a day. "
    "Bookings open seven days ahead in the library app."
)


def question_text() -> Schema:
    """One question: it ends at its first question mark (a judge cannot run on after it)."""
    return {"type": "string", "pattern": rf"^[^?\n]{{8,{QUESTION_CHARS}}}\?$"}


def sentences(max_items: int) -> Schema:
    """One to ``max_items`` sentences, each ending at its first . ! or ? (a full stop before a digit is kept)."""
    sentence = {"type": "string", "pattern": rf"^([^.!?\n]|\.[0-9]){{4,{SENTENCE_CHARS}}}[.!?]$"}
    return array(sentence, 1, max_items)


def sentence_tokens(n: int) -> int:
    """The token budget of ``n`` sentences."""
    return n * (tokens_for_chars(SENTENCE_CHARS) + 4)


def join_sentences(items: list[str]) -> str:
    """Sentences as one text, repeats (a looping judge) left out."""
    return " ".join(dict.fromkeys(s.strip() for s in items if s.strip()))
