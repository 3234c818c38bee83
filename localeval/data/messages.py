"""Conversations: human, AI and tool messages, and tool calls with their arguments, in Ragas' own shape.

A conversation is what Ragas' ``MultiTurnSample`` holds in ``user_input``: a list of messages, each
``{"type": "human" | "ai" | "tool", "content": TEXT}``, an AI message with ``"tool_calls": [{"name": NAME,
"args": {...}}]``. Reading one checks every message and names the first problem of each (``read_conversation``);
``conversation_record`` writes it back in the same shape, so a run folder's samples load like the user's file.
Messages in OpenAI's chat shape (``role`` and ``content``) are read as the Ragas messages they are
(``openai_messages``).
Reference tool calls and a sample's rubrics (level name -> description) are read here too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from localeval.data.openai_messages import as_call, as_ragas, is_instruction, is_openai, type_hint
from localeval.errors import describe

MessageType = Literal["human", "ai", "tool"]
KINDS: tuple[str, ...] = ("human", "ai", "tool")
SPEAKER = {"human": "Human", "ai": "AI", "tool": "ToolOutput"}

# Reports a problem of the value being read (the message says where inside it).
Report = Callable[[str], None]


@dataclass(frozen=True)
class ToolCall:
    """A tool called by name with its arguments (an object: argument name -> value)."""

    name: str
    args: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def to_record(self) -> dict[str, Any]:
        return {"name": self.name, "args": dict(self.args)}

    def pretty(self) -> str:
        """``name: {'arg': value}``, arguments as Python writes a dict (as Ragas shows them to its judge)."""
        return f"{self.name}: {dict(self.args)}"


@dataclass(frozen=True)
class Message:
    """One turn: who spoke (``human``, ``ai`` or a ``tool``'s output), the text, and an AI turn's tool calls."""

    type: MessageType
    content: str
    tool_calls: tuple[ToolCall, ...] | None = None
    metadata: Mapping[str, Any] | None = field(default=None, compare=False, hash=False)

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {"content": self.content, "type": self.type}
        if self.tool_calls is not None:
            record["tool_calls"] = [call.to_record() for call in self.tool_calls]
        if self.metadata is not None:
            record["metadata"] = dict(self.metadata)
        return record

    def pretty(self) -> str:
        """The turn as the judge reads it: ``Human: ...``, ``AI: ...`` with ``Tools:`` below, ``ToolOutput: ...``."""
        lines = [f"{SPEAKER[self.type]}: {self.content}"] if self.content or self.type != "ai" else []
        if self.tool_calls is not None:
            lines += ["Tools:", *(f"  {call.pretty()}" for call in self.tool_calls)]
        return "\n".join(lines)


Conversation = tuple[Message, ...]


def transcript(messages: Sequence[Message]) -> str:
    """A conversation as one text, a turn per line (what the agent metrics' asks show the judge)."""
    return "\n".join(m.pretty() for m in messages)


def tool_calls_made(messages: Sequence[Message]) -> list[ToolCall]:
    """Every tool call of the conversation's AI turns, in order."""
    return [call for m in messages if m.type == "ai" and m.tool_calls for call in m.tool_calls]


def conversation_record(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [m.to_record() for m in messages]


def read_conversation(value: Sequence[Any], report: Report, nulls_absent: bool = False) -> Conversation | None:
    """The messages of a list of records, or ``None`` after reporting the first problem found.

    ``nulls_absent``: a tool call argument whose value is null is left out (Parquet and Hugging Face
    datasets store objects as columns, so every call gets every argument any call had, null where absent).
    """
    messages: list[Message] = []
    for i, item in enumerate(value, 1):
        if isinstance(item, Mapping) and is_instruction(item):
            continue  # a system message: no turn of the conversation (openai_messages)
        message = _read_message(i, item, report, nulls_absent)
        if message is None:
            return None
        if message.type == "tool" and not _after_a_call(messages):
            before = f"message {i - 1} is {_a(messages[-1])}" if messages else "it is the first message"
            report(f"message {i} is a tool's output with no AI tool call before it ({before}); a tool message "
                   "follows an AI message that has tool_calls, or another tool message")
            return None
        messages.append(message)
    if not messages:
        report("an empty conversation; give at least one message")
        return None
    return tuple(messages)


def read_tool_calls(value: object, report: Report, where: str = "", nulls_absent: bool = False
                    ) -> tuple[ToolCall, ...] | None:
    """A list of ``{"name": ..., "args": {...}}`` objects, or ``None`` after reporting the first problem."""
    if not isinstance(value, list | tuple):
        report(f"{where}expected a list of tool calls ({{\"name\": ..., \"args\": {{...}}}}), got {describe(value)}")
        return None
    calls = []
    for i, item in enumerate(value, 1):
        call = _read_call(f"{where}tool call {i}", item, report, nulls_absent)
        if call is None:
            return None
        calls.append(call)
    return tuple(calls)


def read_rubrics(value: object, report: Report, columnar: bool = False) -> dict[str, str] | None:
    """Rubrics: score level's name -> its description (``{"score1_description": "...", ...}``)."""
    if not isinstance(value, Mapping):
        report(f"expected an object of score level -> description, got {describe(value)}")
        return None
    rubrics = {str(k): v for k, v in value.items() if not (columnar and v is None)}
    bad = next((k for k, v in rubrics.items() if not isinstance(v, str)), None)
    if bad is not None:
        report(f"{bad!r}: expected the level's description as text, got {describe(rubrics[bad])}")
        return None
    unnumbered = [k for k in rubrics if level_of(k) is None]
    if unnumbered:
        report(f"{unnumbered[0]!r}: each key names its score level with one whole number, as Ragas' "
               "'score1_description' ... 'score5_description' do")
        return None
    if len(rubric_levels(rubrics)) < len(rubrics):
        report(f"two keys name the same score level ({', '.join(rubrics)})")
        return None
    return rubrics or None


def level_of(key: str) -> int | None:
    """The score level a rubric key names: its one whole number (``score3_description``: 3); None without one."""
    found = re.findall(r"\d+", key)
    return int(found[0]) if len(found) == 1 else None


def rubric_levels(rubrics: Mapping[str, str]) -> tuple[int, ...]:
    """The levels a rubric names, ascending: the one whole number in each key (``score3_description``: 3).

    >>> rubric_levels({"score1_description": "bad", "score10_description": "good", "score5_description": "ok"})
    (1, 5, 10)
    """
    levels = {key: level_of(key) for key in rubrics}
    bad = next((key for key, level in levels.items() if level is None), None)
    if bad is not None:
        raise ValueError(f"rubric key {bad!r} must hold exactly one whole number, its level")
    return tuple(sorted({level for level in levels.values() if level is not None}))


def _read_message(i: int, item: object, report: Report, nulls_absent: bool) -> Message | None:
    where = f"message {i}"
    if not isinstance(item, Mapping):
        report(f"{where}: expected an object with 'type' and 'content', got {describe(item)}")
        return None
    if is_openai(item):
        converted = as_ragas(item, where, report)
        if converted is None:
            return None
        item = converted
    kind = item.get("type")
    if kind not in KINDS:
        shape = "" if "type" in item else " (or OpenAI's 'role': user, assistant, tool)"
        report(f"{where}: 'type' must be one of human, ai, tool{shape}, got {describe(kind)}{type_hint(kind)}")
        return None
    content = item.get("content")
    calls = None
    if item.get("tool_calls") is not None:
        if kind != "ai":
            report(f"{where} ({kind}): only an AI message makes tool calls")
            return None
        calls = read_tool_calls(item["tool_calls"], report, f"{where}: ", nulls_absent)
        if calls is None:
            return None
    if content is None:
        report(f"{where} ({kind}): no text ('content' is missing); give the turn's text"
               + (", or \"\" for an AI turn that only calls tools" if kind == "ai" else ""))
        return None
    if not isinstance(content, str):
        report(f"{where} ({kind}): 'content' must be text, got {describe(content)}")
        return None
    if not content.strip() and not calls:
        also = " and no tool calls" if kind == "ai" else ""
        report(f"{where} ({kind}): a turn with no text{also}")
        return None
    metadata = item.get("metadata")
    return Message(kind, content, calls, metadata if isinstance(metadata, Mapping) else None)


def _read_call(where: str, item: object, report: Report, nulls_absent: bool) -> ToolCall | None:
    if not isinstance(item, Mapping):
        report(f"{where}: expected an object with 'name' and 'args', got {describe(item)}")
        return None
    if "function" in item and "name" not in item:  # OpenAI's shape
        converted = as_call(item, where, report)
        if converted is None:
            return None
        item = converted
    name, args = item.get("name"), item.get("args", {})
    if args is None and nulls_absent:
        args = {}  # a call without arguments, stored as a column of objects
    if not isinstance(name, str) or not name.strip():
        report(f"{where}: 'name' must be the tool's name, got {describe(name)}")
        return None
    if not isinstance(args, Mapping):
        hint = "; decode the JSON text into an object" if isinstance(args, str) and args.lstrip()[:1] == "{" else ""
        report(f"{where} ({name}): arguments ('args') must be an object of name -> value, got {describe(args)}{hint}")
        return None
    kept = {str(k): v for k, v in args.items() if not (nulls_absent and v is None)}
    return ToolCall(name, kept)


def _after_a_call(messages: list[Message]) -> bool:
    last = messages[-1] if messages else None
    return last is not None and (last.type == "tool" or (last.type == "ai" and bool(last.tool_calls)))


def _a(message: Message) -> str:
    if message.type == "ai":
        return "an AI message without tool calls"
    return "a human message" if message.type == "human" else "a tool message"

