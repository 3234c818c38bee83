"""The prompts of test-set generation: extraction per chunk, question writers, style rewriter, checks.

Examples come from a made-up public library, so their facts cannot leak into questions about the
user's documents. Every answer is bounded by the shapes in ``answer_shapes`` (the field names sort in
the order they should be written, as some grammar backends order properties alphabetically).
"""

from __future__ import annotations

from pydantic import BaseModel

from localeval.prompts.base import (
    Prompt,
    Settings,
    Verdict,
    array,
    obj,
    text,
    tokens_for_chars,
    verdict_schema,
)
from localeval.testset.answer_shapes import (
    KEYWORDS_CHARS,
    LIBRARY,
    LIBRARY_2,
    MAX_ENTITIES,
    MAX_THEMES,
    NAME_CHARS,
    QUESTION_CHARS,
    REASON_CHARS,
    REFERENCE_SENTENCES,
    SUMMARY_SENTENCES,
    question_text,
    sentence_tokens,
    sentences,
)

# --- extraction ---------------------------------------------------------------------------------


class ExtractInput(BaseModel):
    text: str


class ExtractOutput(BaseModel):
    entities: list[str]
    summary: list[str]  # sentences
    themes: list[str]


def _extract_schema(inp: ExtractInput, settings: Settings) -> dict:
    name = text(NAME_CHARS, 1)
    return obj({
        "entities": array(name, 1, MAX_ENTITIES),
        "summary": sentences(SUMMARY_SENTENCES),
        "themes": array(name, 1, MAX_THEMES),
    })


def _extract_tokens(inp: ExtractInput, settings: Settings) -> int:
    return sentence_tokens(SUMMARY_SENTENCES) + (MAX_ENTITIES + MAX_THEMES) * (tokens_for_chars(NAME_CHARS) + 2) + 16


EXTRACT = Prompt(
    name="testset_extract",
    instruction=(
        "You read one passage of a document. List its key entities (names of people, organisations, "
        "products, places, tools, rules or numbers that matter), each a short noun phrase written as in "
        "the passage; summarise what it says in one or two sentences; and list its themes, each a few "
        "words naming a topic. Use only the passage."
    ),
    input_model=ExtractInput,
    output_model=ExtractOutput,
    examples=((
        ExtractInput(text=LIBRARY),
        ExtractOutput(
            entities=["Elmbrook Library", "12 books", "three weeks", "20 cents a day"],
            summary=["Elmbrook Library members may borrow 12 books for three weeks and renew twice.",
                     "Late returns cost 20 cents a day per book."],
            themes=["book loans", "late fees"],
        ),
    ),),
    schema=_extract_schema,
    max_tokens=_extract_tokens,
)


# --- question writers ---------------------------------------------------------------------------


class SingleHopInput(BaseModel):
    context: str
    entity: str


class MultiHopAbstractInput(BaseModel):
    contexts: list[str]
    theme: str


class MultiHopSpecificInput(BaseModel):
    contexts: list[str]
    entity: str


class QAOutput(BaseModel):
    question: str
    reference: list[str]  # sentences


def _qa_schema(inp: BaseModel, settings: Settings) -> dict:
    return obj({"question": question_text(), "reference": sentences(REFERENCE_SENTENCES)})


def _qa_tokens(inp: BaseModel, settings: Settings) -> int:
    return tokens_for_chars(QUESTION_CHARS) + sentence_tokens(REFERENCE_SENTENCES) + 8


_ANSWER_RULE = (
    " Then write the reference answer: one to three short sentences that answer the question using only "
    "facts stated in the text, with no outside knowledge."
)

_WRITER = "You write test questions for a question-answering system. "


# What each question writer is asked to do, after _WRITER and before _ANSWER_RULE.
_TASKS = {
    "single_hop": "Read the context and write one specific question about the given entity that the context "
                  "answers, as an employee or customer would ask it, without mentioning 'the context'.",
    "multi_hop_abstract": "Read the related passages and write one broader question about the given theme whose "
                          "answer needs information from more than one passage, as a user would ask it, without "
                          "mentioning 'the passages'.",
    "multi_hop_specific": "Two passages both mention the given entity. Write one specific question about that "
                          "entity that needs a fact from each passage to answer, as a user would ask it, without "
                          "mentioning 'the passages'.",
}

# The one worked example each question writer is shown.
_EXAMPLES: dict[str, tuple[BaseModel, QAOutput]] = {
    "single_hop": (
        SingleHopInput(context=LIBRARY, entity="20 cents a day"),
        QAOutput(question="How much does the Elmbrook Library charge when I return a book late?",
                 reference=["Late returns cost 20 cents a day for each book."]),
    ),
    "multi_hop_abstract": (
        MultiHopAbstractInput(contexts=[LIBRARY, LIBRARY_2], theme="member services"),
        QAOutput(question="What can members of the Elmbrook Library use besides borrowing books, and on what terms?",
                 reference=["Members borrow up to 12 books for three weeks.",
                            "They can also book a study room for up to three hours a day, seven days ahead."]),
    ),
    "multi_hop_specific": (
        MultiHopSpecificInput(contexts=[LIBRARY, LIBRARY_2], entity="Elmbrook Library"),
        QAOutput(question="How long can an Elmbrook Library member keep a book, and how long a study room?",
                 reference=["A book can be kept for three weeks.",
                            "A study room can be booked for up to three hours a day."]),
    ),
}


def _question_writer(kind: str) -> Prompt[BaseModel, QAOutput]:
    """The prompt ``testset_<kind>``: it writes one question and its reference answer, shown one example."""
    example = _EXAMPLES[kind]
    return Prompt(name=f"testset_{kind}", instruction=_WRITER + _TASKS[kind] + _ANSWER_RULE,
                  input_model=type(example[0]), output_model=QAOutput, examples=(example,), schema=_qa_schema,
                  max_tokens=_qa_tokens)


SINGLE_HOP = _question_writer("single_hop")
MULTI_HOP_ABSTRACT = _question_writer("multi_hop_abstract")
MULTI_HOP_SPECIFIC = _question_writer("multi_hop_specific")


# --- unanswerable questions ---------------------------------------------------------------------


class UnanswerableInput(BaseModel):
    topics: list[str]
    covered: list[str]  # summaries of what the documents do say, so the question avoids it


class QuestionOutput(BaseModel):
    question: str


def _question_schema(inp: BaseModel, settings: Settings) -> dict:
    return obj({"question": question_text()})


def _question_tokens(inp: BaseModel, settings: Settings) -> int:
    return tokens_for_chars(QUESTION_CHARS) + 8


UNANSWERABLE_WRITER = Prompt(
    name="testset_unanswerable",
    instruction=(
        "You write test questions that a question-answering system must refuse. Given the topics of a "
        "document collection and summaries of what it covers, write one realistic question on those "
        "topics that a user might ask but that the covered material does NOT answer: ask about a "
        "detail, case or number the summaries do not mention. Do not ask about unrelated subjects."
    ),
    input_model=UnanswerableInput,
    output_model=QuestionOutput,
    examples=((
        UnanswerableInput(
            topics=["book loans", "late fees"],
            covered=["Elmbrook Library members may borrow 12 books for three weeks, renew twice, and pay late fees."],
        ),
        QuestionOutput(question="Can I borrow e-books from the Elmbrook Library on my phone?"),
    ),),
    schema=_question_schema,
    max_tokens=_question_tokens,
)


# --- query styles -------------------------------------------------------------------------------

STYLES: dict[str, str] = {
    "well_formed": "",  # the writers' own questions: no rewrite
    "misspelled": "the same question typed in a hurry, with two or three spelling mistakes",
    "web_search": "a few keywords as typed into a search engine, lower case, no question mark",
    "short": "the shortest question that still asks the same thing, under ten words",
    "long": "a longer question: one sentence about the asker's situation, then the same question",
}


class StyleInput(BaseModel):
    question: str
    style: str


def _styled_schema(inp: StyleInput, settings: Settings) -> dict:
    keywords = inp.style == STYLES["web_search"]  # keywords carry no question mark
    return obj({"question": text(KEYWORDS_CHARS, 3) if keywords else question_text()})


STYLE = Prompt(
    name="testset_style",
    instruction=(
        "You rewrite a question in the requested style, the way real users type. Keep its meaning and "
        "every name and number it asks about; do not answer it."
    ),
    input_model=StyleInput,
    output_model=QuestionOutput,
    examples=tuple(
        (StyleInput(question="How many times can I renew a loan at the Elmbrook Library?", style=STYLES[s]),
         QuestionOutput(question=q))
        for s, q in (
            ("misspelled", "How many times can I renw a loan at the Elmbrok Libary?"),
            ("web_search", "elmbrook library renew loan how many times"),
            ("short", "Elmbrook loan renewals allowed?"),
            ("long", "I have three books from the Elmbrook Library that I have not finished yet. How many "
                     "times can I renew a loan?"),
        )
    ),
    schema=_styled_schema,
    max_tokens=_question_tokens,
)


# --- checks -------------------------------------------------------------------------------------


class AnsweredInput(BaseModel):
    context: str
    question: str


def _answered_schema(inp: AnsweredInput, settings: Settings) -> dict:
    return verdict_schema(settings, REASON_CHARS)


def _answered_tokens(inp: AnsweredInput, settings: Settings) -> int:
    return (tokens_for_chars(REASON_CHARS) if settings.reasons else 0) + 16


ANSWERED = Prompt(
    name="testset_answered",
    instruction=(
        "You check whether a passage answers a question. Verdict 1 if the passage states the answer "
        "(fully or in part), verdict 0 if it does not: a passage on the same topic that leaves the "
        "asked detail out does not answer it. Use only the passage."
    ),
    input_model=AnsweredInput,
    output_model=Verdict,
    examples=(
        (AnsweredInput(context=LIBRARY, question="How long is a loan at the Elmbrook Library?"),
         Verdict(reason="The passage says loans last three weeks.", verdict=1)),
        (AnsweredInput(context=LIBRARY, question="Can I borrow e-books from the Elmbrook Library?"),
         Verdict(reason="The passage is about book loans but says nothing about e-books.", verdict=0)),
    ),
    schema=_answered_schema,
    max_tokens=_answered_tokens,
)

TESTSET_PROMPTS: tuple[Prompt, ...] = (
    EXTRACT, SINGLE_HOP, MULTI_HOP_ABSTRACT, MULTI_HOP_SPECIFIC, UNANSWERABLE_WRITER, STYLE, ANSWERED,
)
