"""A conversation sample in the report: its turns (who spoke, the text, an AI turn's tool calls with their
arguments) in order, the tool calls made beside the reference tool calls, the reference goal and topics,
and any sample's rubrics.

A conversation comes from RUN/samples.jsonl as Ragas writes it: ``user_input`` a list of messages
``{"type": "human" | "ai" | "tool", "content": TEXT, "tool_calls": [{"name", "args"}]}``. Everything in it
is user data and goes through ``escape``; a row written by hand may hold anything, so nothing is assumed.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from localeval.data.messages import level_of
from localeval.report.pieces import at, call_html, calls_list, compact, fold, items

SPEAKERS = {"human": "Human", "ai": "AI", "tool": "Tool output"}

CSS = """
ol.turns{margin:2px 0;padding-left:22px}ol.turns li.turn{margin:4px 0;padding-left:6px;border-left:3px solid #ccc}
li.turn.human{border-left-color:#4c78a8}li.turn.ai{border-left-color:#59a14f}li.turn.tool{border-left-color:#e0a030}
.who{font-weight:600;font-size:12px;color:#345}ol.calls{margin:2px 0;padding-left:20px}
code.call{font-weight:600}table.calls td{min-width:12em}td.good{background:#e6f4ea}
"""


def is_conversation(row: Mapping[str, Any] | None) -> bool:
    """Whether a samples.jsonl row holds a conversation (``user_input`` a list of messages)."""
    return row is not None and isinstance(row.get("user_input"), list)


def made_calls(turns: list[Any]) -> list[Any]:
    """Every tool call of the AI turns, in order."""
    return [call for turn in turns if isinstance(turn, Mapping) and turn.get("type") == "ai"
            for call in items(turn.get("tool_calls"))]


def _turn(turn: Any) -> str:
    if not isinstance(turn, Mapping):
        return f"<li class=turn><span class=who>?</span>{fold(compact(turn))}</li>"
    kind = str(turn.get("type", ""))
    who = SPEAKERS.get(kind, kind or "?")
    content = turn.get("content")
    text = fold(content) if content not in (None, "") else ""
    calls = items(turn.get("tool_calls"))
    called = f"<div class=muted>calls {len(calls)} tool{'s' * (len(calls) != 1)}:</div>{calls_list(calls)}" \
        if calls else ""
    css = kind if kind in SPEAKERS else "other"
    return f"<li class='turn {css}'><span class=who>{escape(who)}</span>{text}{called}</li>"


def turns_html(turns: list[Any]) -> str:
    """The turns in order: who spoke, the text (folded when long), an AI turn's tool calls."""
    return "<ol class=turns>" + "".join(_turn(t) for t in turns) + "</ol>"


def calls_side_by_side(made: list[Any], reference: list[Any]) -> str:
    """The calls made and the reference calls, in their own orders, side by side."""
    rows = [f"<tr><td class=num>{i + 1}</td><td>{_cell(at(made, i), 'no call')}</td>"
            f"<td>{_cell(at(reference, i), 'no reference call')}</td></tr>"
            for i in range(max(len(made), len(reference)))]
    return ("<table class=calls><tr><th>#</th><th>tool calls made, in order</th><th>reference tool calls</th>"
            "</tr>" + "".join(rows) + "</table>")


def _cell(call: Any, absent: str) -> str:
    return f"<span class=muted>{escape(absent)}</span>" if call is None else call_html(call)


def conversation_html(row: Mapping[str, Any], *, calls_compared: bool = False) -> str:
    """The conversation's items of the sample's definition list: the turns, the tool calls made beside the
    reference calls (with ``calls_compared`` the verdicts beside pair them, so only a note), the reference
    goal. The reference topics and rubrics are ``references_html``'s."""
    turns = items(row.get("user_input"))
    parts = [f"<dt>conversation, {len(turns)} turn{'s' * (len(turns) != 1)}</dt><dd>{turns_html(turns)}</dd>"]
    made, reference = made_calls(turns), row.get("reference_tool_calls")
    if isinstance(reference, list) and calls_compared:
        parts.append("<dt>reference tool calls</dt><dd class=muted>paired with the calls made in the "
                     "verdicts beside</dd>")
    elif isinstance(reference, list):
        parts.append("<dt>tool calls made vs the reference tool calls</dt><dd>"
                     + calls_side_by_side(made, reference) + "</dd>")
    if row.get("reference") is not None:
        parts.append(f"<dt>reference goal</dt><dd>{fold(row['reference'])}</dd>")
    return "".join(parts)


def _level(key: str) -> tuple[int, str]:
    level = level_of(key)
    return (1 << 30 if level is None else level, key)  # a key without a level (a row written by hand) last


def references_html(row: Mapping[str, Any]) -> str:
    """The reference topics and the rubrics (score levels in order) of any sample, where it has them."""
    parts = []
    topics = items(row.get("reference_topics"))
    if topics:
        parts.append("<dt>reference topics</dt><dd>" + ", ".join(f"<code>{escape(str(t))}</code>" for t in topics)
                     + "</dd>")
    rubrics = row.get("rubrics")
    if isinstance(rubrics, Mapping) and rubrics:
        levels = sorted(((str(k), v) for k, v in rubrics.items()), key=lambda kv: _level(kv[0]))
        cells = "".join(f"<tr><td>{escape(key)}</td><td>{fold(text)}</td></tr>" for key, text in levels)
        parts.append("<dt>rubrics</dt><dd><table class=rubrics><tr><th>score level</th><th>description</th></tr>"
                     + cells + "</table></dd>")
    return "".join(parts)
