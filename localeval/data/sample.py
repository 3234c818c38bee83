"""One evaluation sample, with Ragas' field names."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from localeval.data.messages import Conversation, ToolCall

SAMPLE_FIELDS: tuple[str, ...] = (
    "user_input",
    "retrieved_contexts",
    "response",
    "reference",
    "reference_contexts",
    "retrieved_context_ids",
    "reference_context_ids",
    "reference_tool_calls",
    "reference_topics",
    "rubrics",
)

# The fields by kind, as the loader checks them: text, and lists of texts (ids are texts too).
TEXT_FIELDS: tuple[str, ...] = ("user_input", "response", "reference")
LIST_FIELDS: tuple[str, ...] = (
    "retrieved_contexts",
    "reference_contexts",
    "retrieved_context_ids",
    "reference_context_ids",
    "reference_topics",
)

# The fields a criterion can show the judge: texts and lists of texts.
PLAIN_FIELDS: tuple[str, ...] = tuple(f for f in SAMPLE_FIELDS if f in TEXT_FIELDS + LIST_FIELDS)

# Column names of Ragas < 0.2, accepted on load.
OLD_NAMES: dict[str, str] = {
    "question": "user_input",
    "answer": "response",
    "contexts": "retrieved_contexts",
    "ground_truth": "reference",
    "ground_truths": "reference",
}


@dataclass(frozen=True)
class Sample:
    """A question, what the RAG system retrieved and answered, and optional references; or a conversation.

    A conversation (Ragas' ``MultiTurnSample``) comes in the column ``user_input`` as a list of messages
    and is held in ``conversation``, beside the tool calls and topics the agent metrics compare it with.
    """

    id: str
    user_input: str | None = None
    retrieved_contexts: tuple[str, ...] | None = None
    response: str | None = None
    reference: str | None = None
    reference_contexts: tuple[str, ...] | None = None
    retrieved_context_ids: tuple[str, ...] | None = None
    reference_context_ids: tuple[str, ...] | None = None
    conversation: Conversation | None = None  # the column user_input, when it holds a list of messages
    reference_tool_calls: tuple[ToolCall, ...] | None = None
    reference_topics: tuple[str, ...] | None = None
    rubrics: Mapping[str, str] | None = field(default=None, hash=False)  # score level's name -> description
    answerable: bool | None = None  # False marks a question the corpus cannot answer
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def get(self, name: str) -> Any:
        """A field by name (``None`` when absent)."""
        return getattr(self, name)
