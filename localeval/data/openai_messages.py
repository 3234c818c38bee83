"""Conversations in OpenAI's chat shape, read as Ragas' messages.

OpenAI's shape (the messages of a chat completion request) is ``{"role": "user" | "assistant" | "tool",
"content": TEXT}``, an assistant turn's calls as ``"tool_calls": [{"id": ..., "type": "function", "function":
{"name": NAME, "arguments": JSON TEXT}}]`` and a tool's output with ``"tool_call_id"``. Each becomes the Ragas
message it is (user -> human, assistant -> ai, tool -> tool; arguments decoded into an object); the order of the
turns links a call to its output, as in Ragas. System (and developer) messages are instructions to the model,
not turns of the conversation: Ragas' ``MultiTurnSample`` has no such message and no metric reads one, so they
are left out.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from localeval.errors import describe

ROLES = {"user": "human", "assistant": "ai", "tool": "tool", "function": "tool"}
INSTRUCTIONS = ("system", "developer")  # roles left out of the conversation
Report = Callable[[str], None]


def is_openai(item: Mapping[str, Any]) -> bool:
    """A message written with OpenAI's ``role`` rather than Ragas' ``type``."""
    return "type" not in item and "role" in item


def is_instruction(item: Mapping[str, Any]) -> bool:
    """A system or developer message, left out of the conversation."""
    return is_openai(item) and item.get("role") in INSTRUCTIONS


def type_hint(kind: object) -> str:
    """For a Ragas ``type`` written as an OpenAI role (``user``): the type meant, and the other way to write it."""
    if not isinstance(kind, str) or kind not in ROLES:
        return ""
    return (f"; did you mean 'type': '{ROLES[kind]}'? ('{kind}' is OpenAI's role; a message may also be written "
            f"in OpenAI's shape, {{\"role\": \"{kind}\", \"content\": ...}})")


def as_ragas(item: Mapping[str, Any], where: str, report: Report) -> dict[str, Any] | None:
    """An OpenAI message as the Ragas message it is, or ``None`` after reporting its first problem."""
    role = item.get("role")
    if role not in ROLES:
        roles = ", ".join([*ROLES, *INSTRUCTIONS])
        report(f"{where}: 'role' must be one of {roles} (OpenAI's shape), or write the message in Ragas' shape "
               f"with 'type': human, ai or tool; got {describe(role)}")
        return None
    kind = ROLES[str(role)]
    content = _text(item.get("content"), f"{where} ({role})", report, kind == "ai")
    if content is None:
        return None
    message: dict[str, Any] = {"type": kind, "content": content}
    if item.get("tool_calls") is not None:
        message["tool_calls"] = item["tool_calls"]  # read by the Ragas reader, each call through ``as_call``
    return message


def as_call(item: Mapping[str, Any], where: str, report: Report) -> dict[str, Any] | None:
    """An OpenAI tool call (``{"type": "function", "function": {"name", "arguments"}}``) as Ragas' ``{"name",
    "args"}``, the JSON text of its arguments decoded; ``None`` after reporting a problem."""
    function = item.get("function")
    if not isinstance(function, Mapping):
        report(f"{where}: 'function' must be an object with 'name' and 'arguments', got {describe(function)}")
        return None
    name, arguments = function.get("name"), function.get("arguments", "{}")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as error:
            report(f"{where} ({name}): 'arguments' is not valid JSON ({error.msg} at character {error.pos}); "
                   "OpenAI's arguments are the JSON text of an object")
            return None
    return {"name": name, "args": arguments}


def _text(content: object, where: str, report: Report, ai: bool) -> str | None:
    """The turn's text: a string, an assistant's null beside its tool calls, or the text parts of a list."""
    if content is None:
        if ai:
            return ""  # an assistant turn that only calls tools; the Ragas reader checks it has calls
        report(f"{where}: no text ('content' is missing); give the turn's text")
        return None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for i, part in enumerate(content, 1):
            if not isinstance(part, Mapping) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                kind = part.get("type") if isinstance(part, Mapping) else None
                report(f"{where}: content part {i} is {describe(kind if kind is not None else part)}; only text "
                       "parts ({\"type\": \"text\", \"text\": ...}) can be judged")
                return None
            texts.append(part["text"])
        return "\n".join(texts)
    report(f"{where}: 'content' must be text or a list of text parts, got {describe(content)}")
    return None
