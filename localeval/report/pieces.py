"""Small HTML pieces the sample view, the conversation view and the trace views share: a long text folded,
a tool call with its arguments. Everything they show comes from a run, so every one goes through ``escape``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

FOLD = 200


def fold(text: Any, limit: int = FOLD) -> str:
    """The text escaped; past ``limit`` characters folded, its start visible, the whole on a click."""
    text = "" if text is None else str(text)
    if len(text) <= limit + limit // 4:
        return f"<div class=text>{escape(text)}</div>"
    cut = text.rfind(" ", limit // 2, limit)
    head = text[:cut if cut > 0 else limit].rstrip()
    more = len(text) - len(head)
    return (f"<details class=text><summary><span class=head>{escape(head)} &hellip; "
            f"<span class=muted>({more} more characters)</span></span><span class='less muted'>"
            f"fold</span></summary>{escape(text)}</details>")


def items(value: Any) -> list[Any]:
    """A list as it is, anything else as an empty list (a trace or row read back may hold anything)."""
    return list(value) if isinstance(value, list | tuple) else []


def at(values: Sequence[Any], i: int) -> Any:
    return values[i] if i < len(values) else None


def compact(value: Any) -> str:
    """A value as compact JSON (``"Paris"``, ``3``, ``true``, ``{"a": 1}``): types stay visible, "3" is not 3."""
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)


def args_text(args: Any) -> str:
    """A call's arguments as ``key = value`` pairs, values as compact JSON; not an object: its JSON."""
    if not isinstance(args, Mapping):
        return compact(args)
    return ", ".join(f"{key} = {compact(value)}" for key, value in args.items())


def call_html(call: Any, limit: int = FOLD) -> str:
    """A tool call ``{"name", "args"}``: its name in code, its arguments below it (folded when long)."""
    if not isinstance(call, Mapping):
        return f"<span class=bad>not a tool call:</span> {fold(compact(call), limit)}"
    args = call.get("args", {})
    text = args_text(args) if args not in ({}, None) else ""
    shown = fold(text, limit) if text else "<div class='text muted'>no arguments</div>"
    return f"<code class=call>{escape(str(call.get('name', '?')))}</code>{shown}"


def calls_list(calls: Sequence[Any]) -> str:
    """Tool calls in order, numbered."""
    return "<ol class=calls>" + "".join(f"<li>{call_html(c)}</li>" for c in calls) + "</ol>"
