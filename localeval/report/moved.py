"""The samples whose scores moved most between two runs: ids, both scores and the judge's reasons side by side.

A comparison's means say whether B is better; these say where: per metric, the samples valid in both runs
whose score changed, the largest change first (ties in id order), each with the reasons the judge gave in A
and in B. Shown by ``compare`` as text, in its JSON and on its HTML page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from localeval.report.runs import Run

MOVED = 5  # samples shown per metric by default
ITEMS = ("statements", "claims", "response_claims", "questions")  # what a trace's reasons are about, where it says
SHOWN_CHARS = 90  # an item's text in the plain listing


@dataclass(frozen=True)
class MovedSample:
    """One sample's score in both runs (``change`` = B - A), and the judge's reasons in each."""

    metric: str
    id: str
    a: float
    b: float
    change: float
    reasons_a: list[str]
    reasons_b: list[str]


def reasons_of(trace: Mapping[str, Any]) -> list[str]:
    """The judge's reasons in a score's trace, each after what it judged and its verdict where the trace says
    (``statement: 1 (reason)``), nested traces' too; a NaN's detail as well.

    >>> reasons_of({"statements": ["Paris is in France."], "verdicts": [1], "reasons": ["the context says so"]})
    ['Paris is in France.: 1 (the context says so)']
    """
    out: list[str] = []
    reasons = trace.get("reasons")
    if isinstance(reasons, list):
        items: list[Any] = next((trace[k] for k in ITEMS if isinstance(trace.get(k), list)), [])
        found = trace.get("verdicts")
        verdicts: list[Any] = found if isinstance(found, list) else []
        for i, reason in enumerate(reasons):
            what = str(items[i]) if i < len(items) else f"#{i + 1}"
            verdict = f": {verdicts[i]}" if i < len(verdicts) and not isinstance(verdicts[i], Mapping) else ""
            out.append(f"{what}{verdict} ({reason})" if str(reason).strip() else f"{what}{verdict}")
    elif isinstance(trace.get("reason"), str):
        out.append(trace["reason"])
    else:  # verdicts without reasons (--no-reasons, or a prompt that asks none): what was judged, and how
        for key, claims in trace.items():
            judged = trace.get(key[: -len("claims")] + "verdicts") if key.endswith("claims") else None
            if isinstance(claims, list) and isinstance(judged, list):
                out += [f"{claim}: {verdict}" for claim, verdict in zip(claims, judged, strict=False)]
    for value in trace.values():
        if isinstance(value, Mapping):
            out += reasons_of(value)
    if isinstance(trace.get("nan_detail"), str):
        out.append(f"NaN: {trace['nan_detail']}")
    return out


def moved_samples(run_a: Run, run_b: Run, metric: str, most: int = MOVED) -> list[MovedSample]:
    """The ``most`` samples valid in both runs whose ``metric`` changed most, the largest change first."""
    a = {i: s for i, s in run_a.scores(metric) if s.value is not None}
    b = {i: s for i, s in run_b.scores(metric) if s.value is not None}
    moved = [MovedSample(metric, i, a[i].value, b[i].value, b[i].value - a[i].value,  # type: ignore[operator, arg-type]
                         reasons_of(a[i].trace), reasons_of(b[i].trace))
             for i in a if i in b and a[i].value != b[i].value]
    return sorted(moved, key=lambda m: (-abs(m.change), m.id))[:most]


def _short(text: str) -> str:
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def _listed(moved: Mapping[str, Sequence[MovedSample]]) -> list[tuple[str, Sequence[MovedSample]]]:
    """The metrics that have moved samples, with them."""
    return [(metric, samples) for metric, samples in moved.items() if samples]


def format_moved(moved: Mapping[str, Sequence[MovedSample]]) -> str:
    """Plain text: per metric, each moved sample's id, A -> B, and the reasons of A and of B; "" when none."""
    if not _listed(moved):
        return ""
    out = ["Samples that moved most (A -> B, B - A; the judge's reasons in A, then in B):"]
    for metric, samples in _listed(moved):
        out.append(f"  {metric}")
        for m in samples:
            out.append(f"    {m.id}: {m.a:.3f} -> {m.b:.3f} ({m.change:+.3f})")
            for side, reasons in (("A", m.reasons_a), ("B", m.reasons_b)):
                out += [f"      {side}: {_short(r)}" for r in reasons] or [f"      {side}: (no reasons)"]
    return "\n".join(out)


def moved_html(moved: Mapping[str, Sequence[MovedSample]]) -> str:
    """The moved samples as a table per metric, the reasons of A and B in columns side by side; "" when none."""
    if not _listed(moved):
        return ""
    parts = ["<h2>Samples that moved most</h2>"]
    for metric, samples in _listed(moved):
        rows = "".join(
            f"<tr><td>{escape(m.id)}</td><td class=num>{m.a:.3f}</td><td class=num>{m.b:.3f}</td>"
            f"<td class=num>{m.change:+.3f}</td><td>{'<br>'.join(map(escape, m.reasons_a))}</td>"
            f"<td>{'<br>'.join(map(escape, m.reasons_b))}</td></tr>" for m in samples)
        parts.append(f"<h3>{escape(metric)}</h3><table><tr><th>sample</th><th>A</th><th>B</th><th>B - A</th>"
                     f"<th>judge's reasons in A</th><th>judge's reasons in B</th></tr>{rows}</table>")
    return "".join(parts)
