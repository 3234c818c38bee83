"""One sample's verdict trace as HTML: which statements were unsupported, which chunks irrelevant, why.

Every value from a trace is judge output or user data, so every one goes through ``escape``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from html import escape
from typing import Any

from localeval.metrics.criteria import criterion_view
from localeval.metrics.definition import MetricDef, TraceKind
from localeval.metrics.registry import definition_of
from localeval.report.agent_trace_view import AGENT_VIEWS
from localeval.report.pieces import at

Row = tuple[str, bool | None, str]  # text, verdict (None: unknown), reason


def _list(trace: dict[str, Any], key: str) -> list[Any]:
    value = trace.get(key)
    return value if isinstance(value, list) else []


def _flag(value: Any) -> bool | None:
    return None if value is None else bool(value)


def verdict_table(title: str, head: str, rows: Sequence[Row], yes: str, no: str,
                  third: str = "judge's reason") -> str:
    """A table of items with their verdict; a negative verdict is marked ``bad``. The third column
    is left out when no row has anything in it."""
    if not rows:
        return f"<p class=muted>{escape(title)}: none</p>"
    show = any(reason for _, _, reason in rows)
    out = [f"<table class=trace><caption>{escape(title)}</caption>",
           f"<tr><th>{escape(head)}</th><th>verdict</th>" + (f"<th>{escape(third)}</th>" if show else "")
           + "</tr>"]
    for text, verdict, reason in rows:
        label, css = ("?", "") if verdict is None else ((yes, "good") if verdict else (no, "bad"))
        out.append(f"<tr class={css or 'plain'}><td>{escape(text)}</td><td>{escape(label)}</td>"
                   + (f"<td>{escape(reason)}</td>" if show else "") + "</tr>")
    out.append("</table>")
    return "".join(out)


def _statements(trace: dict[str, Any], definition: MetricDef) -> str:
    title, yes, no = definition.trace_words
    statements, verdicts = _list(trace, "statements"), _list(trace, "verdicts")
    reasons = _list(trace, "reasons")
    rows = [(str(s), _flag(at(verdicts, i)), str(at(reasons, i) or "")) for i, s in enumerate(statements)]
    return verdict_table(title, "statement", rows, yes, no, "judge's reason" if definition.judge else "reason")


def _chunks(trace: dict[str, Any], definition: MetricDef) -> str:
    verdicts, reasons = _list(trace, "verdicts"), _list(trace, "reasons")
    rows = [(f"chunk {i + 1}", _flag(v), str(at(reasons, i) or "")) for i, v in enumerate(verdicts)]
    return verdict_table("retrieved chunks, in rank order", "chunk", rows, "useful", "irrelevant")


def _questions(trace: dict[str, Any], definition: MetricDef) -> str:
    questions, flags = _list(trace, "questions"), _list(trace, "noncommittal")
    rows = [(str(q), None if at(flags, i) is None else not at(flags, i), "")
            for i, q in enumerate(questions)]
    return verdict_table("questions generated from the response", "question", rows, "committal",
                         "noncommittal (evasive)")


def _claims(trace: dict[str, Any], definition: MetricDef) -> str:
    parts = []
    for side, other in (("response", "reference"), ("reference", "response")):
        claims, verdicts = _list(trace, f"{side}_claims"), _list(trace, f"{side}_verdicts")
        if f"{side}_claims" in trace:
            rows = [(str(c), _flag(at(verdicts, i)), "") for i, c in enumerate(claims)]
            parts.append(verdict_table(f"{side} claims checked against the {other}", "claim", rows,
                                       f"in {other}", f"not in {other}"))
    return "".join(parts)


def _noise(trace: dict[str, Any], definition: MetricDef) -> str:
    statements = _list(trace, "response_statements")
    by_ref = _list(trace, "reference_by_context")
    by_resp = _list(trace, "response_by_context")
    in_ref = _list(trace, "response_in_reference")
    relevant = [k for k, row in enumerate(by_ref) if isinstance(row, list) and any(row)]
    rows = []
    for i, s in enumerate(statements):
        support = [k for k, row in enumerate(by_resp) if isinstance(row, list) and at(row, i)]
        where = ", ".join(f"chunk {k + 1}" + ("" if k in relevant else " (irrelevant)") for k in support)
        rows.append((str(s), _flag(at(in_ref, i)), where or "no chunk"))
    chunks = ", ".join(f"chunk {k + 1}" for k in relevant) or "none"
    return (f"<p>relevant chunks (support a reference statement): {escape(chunks)}</p>"
            + verdict_table("response statements", "statement", rows, "in reference", "not in reference",
                            "supported by"))


def _criterion(trace: dict[str, Any], definition: MetricDef) -> str:
    found = trace.get("criterion")
    crit: dict[str, Any] = found if isinstance(found, dict) else {}
    votes, reasons = _list(trace, "votes"), _list(trace, "reasons")
    binary = crit.get("scale") == "binary"
    fields = ", ".join(map(str, crit.get("fields", [])))
    head = (f"<p>criterion <b>{escape(str(crit.get('name', '')))}</b> ({escape(str(crit.get('scale', '')))}, "
            f"reads {escape(fields)}): {escape(str(crit.get('definition', '')))}</p>")
    if binary:
        rows = [(f"answer {i + 1}", _flag(v), str(at(reasons, i) or "")) for i, v in enumerate(votes)]
        return head + verdict_table("the judge's answers", "answer", rows, "meets it", "does not")
    cells = "".join(f"<tr class=plain><td>answer {i + 1}</td><td>{escape(str(v))}</td>"
                    f"<td>{escape(str(at(reasons, i) or ''))}</td></tr>" for i, v in enumerate(votes))
    caption, reason = escape("the judge's ratings"), escape("judge's reason")
    return (head + f"<table class=trace><caption>{caption}</caption><tr><th>answer</th><th>rating</th>"
            f"<th>{reason}</th></tr>{cells}</table>")


# A view per kind of trace (an id metric's trace has none: its ids are shown beside the texts).
VIEWS: dict[TraceKind, Callable[[dict[str, Any], MetricDef], str]] = {
    "statements": _statements,
    "chunks": _chunks,
    "questions": _questions,
    "claims": _claims,
    "noise": _noise,
    "criterion": _criterion,
    **{kind: view for kind, (view, _) in AGENT_VIEWS.items()},
}
SHOWN = {"statements", "verdicts", "reasons", "questions", "noncommittal", "response_claims",
         "response_verdicts", "reference_claims", "reference_verdicts", "reference_statements",
         "response_statements", "reference_by_context", "response_by_context", "response_in_reference",
         "nan_detail", "criterion", "votes"}


def trace_html(metric: str, trace: dict[str, Any], *, contexts_shown: bool = False) -> str:
    """The view that fits the metric (the agent and judged-text kinds' are ``agent_trace_view``'s), the
    NaN detail, and any other trace field as JSON. With
    ``contexts_shown`` (the chunk verdicts stand beside the context texts) the chunk table is left out."""
    parts = []
    if trace.get("nan_detail"):
        parts.append(f"<p class=bad>why NaN: {escape(str(trace['nan_detail']))}</p>")
    definition = definition_of(metric) or criterion_view(trace)
    kind = definition.trace if definition is not None else None
    view = VIEWS.get(kind) if kind is not None else None
    beside = contexts_shown and view is _chunks and bool(_list(trace, "verdicts"))
    shown = ""
    if view is not None and definition is not None and not beside:
        shown = view(trace, definition)
        parts += [shown] if shown else []
    agent = AGENT_VIEWS.get(kind) if kind is not None else None
    # The keys a view showed are not repeated as JSON; a new kind's view shows nothing without its keys.
    hidden = (agent[1] if agent else SHOWN) if view is not None and (shown or beside or agent is None) else set()
    rest = {k: v for k, v in trace.items() if k not in hidden}
    rest.pop("nan_detail", None)
    if rest:
        text = json.dumps(rest, ensure_ascii=False, indent=1, default=str)
        parts.append(f"<pre>{escape(text[:4000])}</pre>")
    if beside:
        return "".join(parts)
    if not parts and definition is not None and not definition.judge:  # the texts alone, or their embeddings
        return "<p class=muted>No judge is asked for this metric: it is computed from the sample's texts.</p>"
    return "".join(parts) or "<p class=muted>The judge recorded no verdicts for this score.</p>"
