"""Prompts that read an agent's conversation (agent goal accuracy, topic adherence).

The conversation arrives as one transcript (``data.messages.transcript``: ``Human: ...``, ``AI: ...`` with
``Tools:`` lines, ``ToolOutput: ...``). Five asks, the arithmetic of Ragas 0.4.3's agent metrics; the
wording and the examples are localeval's own:

* ``agent_goal``: what the user wanted and where the conversation ended (one ask serves both goal metrics);
* ``agent_outcome``: does the end state meet the desired outcome (0/1 with a reason);
* ``topics``: the topics the human's turns raise;
* ``topic_refused``: did the AI decline to engage with one topic (0/1 with a reason);
* ``topic_match``: for each topic, whether it falls under any reference topic (one boolean a topic).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from localeval.prompts.base import (
    Prompt,
    Repeats,
    Schema,
    Settings,
    Verdict,
    array,
    obj,
    text,
    text_list,
    text_list_tokens,
    verdict_schema,
    with_reason,
)
from localeval.prompts.votes import majority, vote_field

GOAL_CHARS, END_CHARS, REASON_CHARS, TOPIC_CHARS = 240, 320, 200, 80


class ConversationInput(BaseModel):
    conversation: str


class GoalOutput(BaseModel):
    user_goal: str
    end_state: str


class OutcomeInput(BaseModel):
    desired: str
    arrived: str


class TopicsOutput(BaseModel):
    topics: list[str]


class RefusalInput(BaseModel):
    conversation: str  # first: the asks of one conversation share it and differ only in the topic
    topic: str


class Refusal(BaseModel):
    """Whether the AI refused one topic (1) or engaged with it (0), after a short reason."""

    reason: str = ""
    refused: int


class TopicMatchInput(BaseModel):
    reference_topics: list[str]
    topics: list[str]


class TopicMatches(BaseModel):
    on_topic: list[bool]  # one per topic, in order


def _verdict_tokens(settings: Settings) -> int:
    return (REASON_CHARS // 3 + 24) if settings.reasons else 12


_TRIP = (
    "Human: Please move my dentist appointment from Tuesday to Thursday morning.\n"
    "AI: Let me check Thursday.\nTools:\n  find_slots: {'day': 'Thursday'}\n"
    "ToolOutput: 09:30 free, 11:00 free\n"
    "AI: I moved it to Thursday at 09:30 and cancelled the Tuesday one."
)
_FAILED = (
    "Human: Send 200 euros to my landlord's account today.\n"
    "AI: Sending it now.\nTools:\n  transfer: {'to': 'landlord', 'amount': 200}\n"
    "ToolOutput: error: daily limit reached\n"
    "AI: The bank refused: your daily limit is reached, so nothing was sent."
)

GOAL = Prompt(
    name="agent_goal",
    instruction=(
        "You read a conversation between a human and an AI assistant that may call tools. State two "
        "things in a sentence each: user_goal, what the human wanted to get done in this conversation; "
        "end_state, what was actually achieved or left undone when the conversation ends, judged from "
        "the AI's replies and the tool outputs, not from what the AI promised."
    ),
    input_model=ConversationInput,
    output_model=GoalOutput,
    examples=(
        (ConversationInput(conversation=_TRIP),
         GoalOutput(user_goal="Move the dentist appointment from Tuesday to Thursday morning.",
                    end_state="The appointment is now on Thursday at 09:30; the Tuesday one is cancelled.")),
        (ConversationInput(conversation=_FAILED),
         GoalOutput(user_goal="Transfer 200 euros to the landlord today.",
                    end_state="No money was sent: the transfer failed on the daily limit.")),
    ),
    schema=lambda inp, settings: obj({"user_goal": text(GOAL_CHARS, 1), "end_state": text(END_CHARS, 1)}),
    max_tokens=lambda inp, settings: (GOAL_CHARS + END_CHARS) // 3 + 32,
)

OUTCOME = Prompt(
    name="agent_outcome",
    instruction=(
        "You compare two descriptions of an outcome: the desired one and the one actually arrived at. "
        "Verdict 1 if the arrived outcome achieves what the desired one asks for (other wording or "
        "harmless extra detail is fine); verdict 0 if any part of the desired outcome is missing, "
        "different or failed."
    ),
    input_model=OutcomeInput,
    output_model=Verdict,
    examples=(
        (OutcomeInput(desired="The dentist appointment is moved to Thursday morning.",
                      arrived="The appointment is now on Thursday at 09:30; the Tuesday one is cancelled."),
         Verdict(reason="Thursday at 09:30 is Thursday morning.", verdict=1)),
        (OutcomeInput(desired="Transfer 200 euros to the landlord today.",
                      arrived="No money was sent: the transfer failed on the daily limit."),
         Verdict(reason="The transfer the human wanted did not happen.", verdict=0)),
    ),
    schema=lambda inp, settings: verdict_schema(settings, REASON_CHARS),
    max_tokens=lambda inp, settings: _verdict_tokens(settings),
    vote=vote_field(),
)


def human_turns(conversation: str) -> int:
    """How many lines of the transcript open a human turn (at least the human's turns)."""
    return sum(1 for line in conversation.splitlines() if line.startswith("Human: "))


def most_topics(inp: ConversationInput) -> int:
    """Up to two topics a human turn, plus two, never fewer than 4 nor more than 40."""
    return max(4, min(40, 2 * human_turns(inp.conversation) + 2))


_CHAT = (
    "Human: What's a good stretch for a stiff neck?\n"
    "AI: Slowly tilt your head towards each shoulder and hold for 20 seconds.\n"
    "Human: And who do you think will win the election?\n"
    "AI: I can't discuss politics, but I'm happy to help with anything about exercise."
)

TOPICS = Prompt(
    name="topics",
    instruction=(
        "You list the topics a human raises in a conversation with an AI assistant: read only the human's "
        "turns and write each distinct topic once, as a short noun phrase, in the order raised. Whether "
        "the AI answered does not matter. Small talk such as greetings and thanks is not a topic."
    ),
    input_model=ConversationInput,
    output_model=TopicsOutput,
    examples=((ConversationInput(conversation=_CHAT),
               TopicsOutput(topics=["stretches for a stiff neck", "election predictions"])),),
    schema=lambda inp, settings: text_list("topics", TOPIC_CHARS, most_topics(inp)),
    max_tokens=lambda inp, settings: text_list_tokens(inp.conversation, TOPIC_CHARS, most_topics(inp)),
)

REFUSED = Prompt(
    name="topic_refused",
    instruction=(
        "You read a conversation between a human and an AI assistant, and one topic the human raised. "
        "Verdict 1 if the AI refused or avoided the topic (declined, deflected, said it cannot help with "
        "it); verdict 0 if the AI engaged with it, even when its answer was short or wrong."
    ),
    input_model=RefusalInput,
    output_model=Refusal,
    examples=(
        (RefusalInput(conversation=_CHAT, topic="election predictions"),
         Refusal(reason="The AI said it cannot discuss politics.", refused=1)),
        (RefusalInput(conversation=_CHAT, topic="stretches for a stiff neck"),
         Refusal(reason="The AI described a stretch.", refused=0)),
    ),
    schema=lambda inp, settings: with_reason({"refused": {"type": "integer", "enum": [0, 1]}}, settings,
                                             REASON_CHARS),
    max_tokens=lambda inp, settings: _verdict_tokens(settings),
    vote=vote_field("refused"),
)


def vote_matches(answers: Sequence[Any]) -> Any:
    """The majority at each position of several sampled classifications (a tie counts as off topic)."""
    lists = [a.on_topic for a in answers]
    if len({len(items) for items in lists}) != 1:
        raise ValueError("the votes disagree on the number of topics")
    return answers[0].model_copy(update={"on_topic": [bool(majority([int(v) for v in position]))
                                                      for position in zip(*lists, strict=True)]})


def match_schema(inp: TopicMatchInput, settings: Settings) -> Schema:
    """Exactly one boolean per topic."""
    n = len(inp.topics)
    return obj({"on_topic": array({"type": "boolean"}, n, n)})


TOPIC_MATCH = Prompt(
    name="topic_match",
    instruction=(
        "You get a list of reference topics and a list of topics from a conversation. For each topic, in "
        "order, answer true if it falls under at least one reference topic (the same subject or a part of "
        "it), false if it falls under none. Give exactly one answer per topic."
    ),
    input_model=TopicMatchInput,
    output_model=TopicMatches,
    examples=((TopicMatchInput(reference_topics=["fitness", "nutrition"],
                               topics=["stretches for a stiff neck", "election predictions", "protein intake"]),
               TopicMatches(on_topic=[True, False, True])),),
    schema=match_schema,
    max_tokens=lambda inp, settings: 3 * len(inp.topics) + 12,
    vote=vote_matches,
    repeats=Repeats("topics", "on_topic"),
)

AGENT_PROMPTS: tuple[Prompt, ...] = (GOAL, OUTCOME, TOPICS, REFUSED, TOPIC_MATCH)
