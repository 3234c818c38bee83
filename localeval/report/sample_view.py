"""One sample's texts in the report: question, response, reference, the retrieved contexts in rank
order beside the verdict a metric gave each, and for the id metrics the retrieved and reference ids.

A conversation's turns, tool calls and references are ``conversation_view``'s. The texts come from
RUN/samples.jsonl, so every one is user data and goes through ``escape``. Long texts are folded in
``<details>`` (no script needed) with their first ``FOLD`` characters visible (``pieces.fold``).
"""

from __future__ import annotations

import re
from html import escape
from typing import Any

from localeval.metrics.definition import TraceKind
from localeval.metrics.registry import definition_of
from localeval.report.conversation_view import conversation_html, is_conversation, references_html
from localeval.report.pieces import at, fold

Verdict = tuple[str, str, str]  # label, css class (good, bad or plain), the judge's reason


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list | tuple) else []


def trace_kind(metric: str) -> TraceKind | None:
    """The kind of trace a run's column carries (``chunks``, ``ids``, ...), None for an unknown metric."""
    definition = definition_of(metric)
    return definition.trace if definition is not None else None


def context_verdicts(metric: str, trace: dict[str, Any]) -> list[Verdict | None]:
    """Per retrieved context (rank order), the verdict this metric's trace gave it, where it gave one."""
    kind = trace_kind(metric)
    if kind == "chunks":
        verdicts, reasons = trace.get("verdicts"), trace.get("reasons")
        verdicts = verdicts if isinstance(verdicts, list) else []
        reasons = reasons if isinstance(reasons, list) else []
        return [None if v is None else
                (("useful", "good") if v else ("irrelevant", "bad")) + (str(at(reasons, i) or ""),)
                for i, v in enumerate(verdicts)]
    if kind == "noise":
        rows = trace.get("reference_by_context")
        rows = rows if isinstance(rows, list) else []
        return [("relevant: supports the reference", "good", "") if isinstance(r, list) and any(r)
                else ("irrelevant: supports no reference statement", "bad", "") for r in rows]
    return []


def _context_list(contexts: list[str], ids: list[str], verdicts: list[Verdict | None]) -> str:
    items = []
    for i, text in enumerate(contexts):
        tag = f"<code>{escape(ids[i])}</code> " if len(ids) == len(contexts) else ""
        verdict = at(verdicts, i)
        mark = ""
        if verdict is not None:
            label, css, reason = verdict
            mark = (f"<span class='verdict {css}'>{escape(label)}</span>"
                    + (f" <span class=muted>{escape(reason)}</span>" if reason else "") + "<br>")
        items.append(f"<li>{tag}{mark}{fold(text)}</li>")
    return "<ol class=contexts>" + "".join(items) + "</ol>"


def sample_texts(metric: str, trace: dict[str, Any], row: dict[str, Any] | None) -> str:
    """The question, response, reference and numbered contexts of one sample, as a definition list."""
    if row is None:
        return "<p class=muted>This sample is not in samples.jsonl, so its texts are not shown.</p>"
    parts = ["<dl class=texts>"]
    conversation = is_conversation(row)
    if conversation:  # its reference is the goal, shown with it
        compared = trace_kind(metric) == "tool_calls" and all(isinstance(trace.get(k), list)
                                                               for k in ("made", "reference"))
        parts.append(conversation_html(row, calls_compared=compared))
    for field, label in (("user_input", "question"), ("response", "response"), ("reference", "reference")):
        if row.get(field) is not None and not (conversation and field != "response"):
            parts.append(f"<dt>{label}</dt><dd>{fold(row[field])}</dd>")
    contexts = _strings(row.get("retrieved_contexts"))
    if contexts:
        ids = _strings(row.get("retrieved_context_ids"))
        parts.append("<dt>retrieved contexts, in rank order</dt><dd>"
                     + _context_list(contexts, ids, context_verdicts(metric, trace)) + "</dd>")
    references = _strings(row.get("reference_contexts"))
    if references:  # what the string-similarity context metrics compare the retrieved ones with
        parts.append("<dt>reference contexts</dt><dd>" + _context_list(references, [], []) + "</dd>")
    parts.append(references_html(row) + "</dl>")
    return "".join(parts)


def cutoff(metric: str) -> int | None:
    """The ``k`` a metric was run with (``mrr(k=3)`` -> 3), None when it has none."""
    found = re.search(r"[(,]\s*k=(\d+)", metric)
    return int(found.group(1)) if found else None


def ids_view(metric: str, row: dict[str, Any] | None) -> str:
    """The retrieved ids in rank order with the reference ids marked, and the reference ids."""
    if row is None:
        return "<p class=muted>This sample is not in samples.jsonl, so its ids are not shown.</p>"
    retrieved = _strings(row.get("retrieved_context_ids"))
    reference = _strings(row.get("reference_context_ids"))
    want, k = set(reference), cutoff(metric)
    first: dict[str, int] = {}
    out = ["<table class=trace><caption>retrieved ids, in rank order</caption>",
           "<tr><th>rank</th><th>id</th><th>reference id?</th></tr>"]
    for rank, cid in enumerate(retrieved, start=1):
        hit = cid in want
        note = "yes" if hit else "no"
        if cid in first:
            note += f" (repeats rank {first[cid]}, counted once)"
        first.setdefault(cid, rank)
        if k is not None and rank > k:
            note += f" (beyond k = {k}, not counted)"
        out.append(f"<tr class={'good' if hit else 'bad'}><td class=num>{rank}</td>"
                   f"<td><code>{escape(cid)}</code></td><td>{escape(note)}</td></tr>")
    if not retrieved:
        out.append("<tr><td colspan=3 class=muted>no retrieved ids</td></tr>")
    out.append("</table>")
    refs = [f"<code>{escape(r)}</code>" + (f" (rank {first[r]})" if r in first else " (not retrieved)")
            for r in dict.fromkeys(reference)]
    out.append("<p>reference ids: " + (", ".join(refs) if refs else "<span class=muted>none</span>") + "</p>")
    return "".join(out)
