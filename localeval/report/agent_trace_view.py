"""The trace views of the conversation and judged-text metrics: tool calls made against the reference calls,
whether the user's goal was reached, topics answered or refused, a summary's questions, a rubric's level and
SQL equivalence. Each takes the trace (and the metric's definition) and returns nothing when the trace lacks
the keys it shows; every value from a trace is user data or judge output, so every one goes through
``escape``."""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

from localeval.metrics.definition import MetricDef, TraceKind
from localeval.report.pieces import at, call_html, compact, fold, items

Mark = tuple[str, str]  # the words, the css class (good, bad or plain)


def _mark(value: Any, yes: str, no: str) -> Mark:
    return ("?", "plain") if value is None else ((yes, "good") if value else (no, "bad"))


def _td(mark: Mark) -> str:
    return f"<td class={mark[1]}>{escape(mark[0])}</td>"


def _num(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, int | float) and not isinstance(value, bool) else "-"


def _call(call: Any, absent: str) -> str:
    return f"<td class=muted>{escape(absent)}</td>" if call is None else f"<td>{call_html(call)}</td>"


def _tool_calls(trace: dict[str, Any], definition: MetricDef) -> str:
    if not (isinstance(trace.get("made"), list) and isinstance(trace.get("reference"), list)):
        return ""
    made, reference = trace["made"], trace["reference"]
    scores, made_ok = items(trace.get("reference_scores")), items(trace.get("made_matched"))
    ref_ok = items(trace.get("reference_matched"))
    f1 = "reference_matched" in trace
    parts = []
    if "aligned" in trace:
        parts.append("<p class=good>The tool names line up with the reference's.</p>" if trace["aligned"] else
                     "<p class=bad>The tool names do not line up with the reference's: the score is 0.</p>")
    if f1:
        head = ("<tr><th>#</th><th>reference call</th><th>made?</th><th>call made</th><th>expected?</th></tr>")
        caption = ("tool calls as sets: a call matches one on the other side with the same name and the same "
                   "arguments (types too: \"3\" is not 3)")
    else:
        head = "<tr><th>#</th><th>reference call</th><th>call made</th><th>argument score</th></tr>"
        caption = "reference and made tool calls paired by position, in the order the metric compared them"
    rows = []
    for i in range(max(len(made), len(reference))):
        ref, call = at(reference, i), at(made, i)
        if f1:
            rows.append(f"<tr><td class=num>{i + 1}</td>{_call(ref, 'none')}"
                        + (_td(_mark(at(ref_ok, i), "made", "not made")) if ref is not None else "<td></td>")
                        + _call(call, "none")
                        + (_td(_mark(at(made_ok, i), "expected", "not expected")) if call is not None else "<td></td>")
                        + "</tr>")
            continue
        if ref is None:
            verdict: Mark = ("an extra call: no reference call here", "bad")
        elif call is None:
            verdict = ("not made", "bad")
        elif at(made_ok, i) is False:
            verdict = ("another tool: 0", "bad")
        else:
            score = at(scores, i)
            verdict = (_num(score), "good" if score == 1 else "bad" if isinstance(score, int | float) else "plain")
        rows.append(f"<tr><td class=num>{i + 1}</td>{_call(ref, 'none')}{_call(call, 'none')}{_td(verdict)}</tr>")
    if not rows:
        rows.append("<tr><td colspan=5 class=muted>no tool calls made and none expected</td></tr>")
    parts.append(f"<table class=trace><caption>{escape(caption)}</caption>{head}{''.join(rows)}</table>")
    return "".join(parts)


def _goal(trace: dict[str, Any], definition: MetricDef) -> str:
    if "verdict" not in trace:
        return ""
    label, css = _mark(trace["verdict"], "goal achieved", "goal not achieved")
    rows = [(name, trace.get(key)) for key, name in (("user_goal", "the user's goal, as the judge read it"),
                                                     ("desired", "the desired outcome"),
                                                     ("end_state", "the conversation's end state"),
                                                     ("reason", "judge's reason"))]
    shown = "".join(f"<dt>{escape(name)}</dt><dd>{fold(value)}</dd>" for name, value in rows
                    if value not in (None, ""))
    return f"<p><span class='verdict {css}'>{escape(label)}</span></p><dl class=texts>{shown}</dl>"


def _topics(trace: dict[str, Any], definition: MetricDef) -> str:
    if "topics" not in trace:
        return ""
    topics, answered, on_topic = items(trace["topics"]), items(trace.get("answered")), items(trace.get("on_topic"))
    rows = "".join(f"<tr><td>{escape(str(t))}</td>{_td(_mark(at(answered, i), 'answered', 'refused'))}"
                   f"{_td(_mark(at(on_topic, i), 'on a reference topic', 'off the reference topics'))}</tr>"
                   for i, t in enumerate(topics))
    if not topics:
        rows = "<tr><td colspan=3 class=muted>the judge found no topics</td></tr>"
    reference = items(trace.get("reference_topics"))
    listed = ", ".join(f"<code>{escape(str(t))}</code>" for t in reference) or "<span class=muted>none</span>"
    return ("<table class=trace><caption>topics of the conversation</caption><tr><th>topic</th><th>the AI</th>"
            f"<th>reference topics</th></tr>{rows}</table><p>reference topics: {listed}</p>")


def _summary(trace: dict[str, Any], definition: MetricDef) -> str:
    if not ("questions" in trace or "keyphrases" in trace):
        return ""
    phrases = ", ".join(f"<code>{escape(str(k))}</code>" for k in items(trace.get("keyphrases")))
    questions, answers = items(trace.get("questions")), items(trace.get("answers"))
    rows = "".join(f"<tr><td>{escape(str(q))}</td>"
                   f"{_td(_mark(at(answers, i), 'the summary answers it', 'not in the summary'))}</tr>"
                   for i, q in enumerate(questions))
    conciseness = trace.get("conciseness")
    return ((f"<p>keyphrases of the text: {phrases}</p>" if phrases else "")
            + "<table class=trace><caption>questions from the text's keyphrases</caption><tr><th>question</th>"
            f"<th>answer from the summary</th></tr>{rows or '<tr><td colspan=2 class=muted>none</td></tr>'}</table>"
            f"<p>question-answer score {_num(trace.get('qa_score'))}; conciseness "
            + (_num(conciseness) if conciseness is not None else "not counted") + "</p>")


def _rubric(trace: dict[str, Any], definition: MetricDef) -> str:
    if "score" not in trace:
        return ""
    levels = items(trace.get("levels"))
    votes = (f" <span class=muted>(of the rubric's levels {escape(', '.join(map(compact, levels)))})</span>"
             if levels else "")
    reason = trace.get("reason")
    return (f"<p>score level <b>{escape(compact(trace['score']))}</b>{votes}</p>"
            + (f"<dl class=texts><dt>judge's reason</dt><dd>{fold(reason)}</dd></dl>" if reason else ""))


def _sql(trace: dict[str, Any], definition: MetricDef) -> str:
    if "equivalent" not in trace:
        return ""
    label, css = _mark(trace["equivalent"], "equivalent", "not equivalent")
    shown = "".join(f"<dt>{name}</dt><dd>{fold(trace[key])}</dd>" for key, name in
                    (("response_explanation", "what the response's query does"),
                     ("reference_explanation", "what the reference query does")) if trace.get(key))
    return f"<p><span class='verdict {css}'>{escape(label)}</span></p><dl class=texts>{shown}</dl>"


View = Callable[[dict[str, Any], MetricDef], str]
# Per kind: its view and the trace keys it shows (the rest is shown as JSON below it).
AGENT_VIEWS: dict[TraceKind, tuple[View, frozenset[str]]] = {
    "tool_calls": (_tool_calls, frozenset({"made", "reference", "aligned", "reference_scores", "made_matched",
                                           "reference_matched"})),
    "goal": (_goal, frozenset({"user_goal", "end_state", "desired", "verdict", "reason"})),
    "topics": (_topics, frozenset({"topics", "answered", "on_topic", "reference_topics"})),
    "summary": (_summary, frozenset({"keyphrases", "questions", "answers", "qa_score", "conciseness"})),
    "rubric": (_rubric, frozenset({"levels", "score", "reason"})),
    "sql": (_sql, frozenset({"equivalent", "response_explanation", "reference_explanation"})),
}
