"""Conversation samples in the report: the turns with their tool calls, the reference calls beside the calls
made, the reference goal, topics and rubrics, and the verdict tables of the agent and judged-text metrics, all
escaped. The run folders are made by hand; the metric -> trace kind mapping is set here, not read from the
metrics' own modules."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from localeval.metrics import registry
from localeval.metrics.definition import MetricDef, TraceKind
from localeval.report.agent_trace_view import AGENT_VIEWS
from localeval.report.conversation_view import conversation_html, is_conversation, references_html
from localeval.report.html import render_report
from localeval.report.trace_view import trace_html

EVIL = "<script>alert('pwned')</script>"
KINDS: dict[str, tuple[TraceKind, bool]] = {
    "tool_call_accuracy": ("tool_calls", False), "tool_call_f1": ("tool_calls", False),
    "agent_goal_accuracy_with_reference": ("goal", True), "agent_goal_accuracy_without_reference": ("goal", True),
    "topic_adherence": ("topics", True), "summary_score": ("summary", True),
    "instance_specific_rubrics": ("rubric", True), "sql_semantic_equivalence": ("sql", True),
}
SEARCH = {"name": "restaurant_search", "args": {"city": "Lyon", "cuisine": EVIL}}
BOOK = {"name": "book_table", "args": {"restaurant": "Chez Paul", "people": 4}}
REF_SEARCH = {"name": "restaurant_search", "args": {"city": "Lyon", "cuisine": "French"}}
REF_BOOK = {"name": "book_table", "args": {"restaurant": "Chez Paul", "people": "4"}}
TRIP = {"id": "trip", "user_input": [
    {"type": "human", "content": "Book me a French restaurant in Lyon for four."},
    {"type": "ai", "content": "Let me look.", "tool_calls": [SEARCH]},
    {"type": "tool", "content": "Found: Chez Paul, Le Bouchon."},
    {"type": "ai", "content": "", "tool_calls": [BOOK]},
    {"type": "tool", "content": "Booked: Chez Paul, 4 people."},
    {"type": "ai", "content": "Your table for four at Chez Paul is booked."}],
    "reference_tool_calls": [REF_SEARCH, REF_BOOK], "reference": "A table for four is booked in Lyon.",
    "reference_topics": ["restaurants", "weather"]}
CHAT = {"id": "chat", "user_input": [{"type": "human", "content": "Hi <b>there</b>, who won the match?"},
                                     {"type": "ai", "content": "Sorry, I only help with restaurants."}],
        "reference_topics": ["restaurants"]}
TRACES: dict[str, list[dict[str, Any]]] = {
    "tool_call_accuracy": [
        {"made": [SEARCH, BOOK], "reference": [REF_SEARCH, REF_BOOK], "aligned": True,
         "reference_scores": [0.5, 1.0], "made_matched": [True, True]},
        {"made": [], "reference": [], "aligned": True, "reference_scores": [], "made_matched": []}],
    "tool_call_f1": [
        {"made": [SEARCH, BOOK], "reference": [REF_SEARCH, REF_BOOK], "made_matched": [False, False],
         "reference_matched": [False, False]},
        {"made": [], "reference": [], "made_matched": [], "reference_matched": []}],
    "agent_goal_accuracy_with_reference": [
        {"user_goal": None, "end_state": "A table at Chez Paul is booked.", "desired": "A table for four is booked",
         "verdict": 1, "reason": "the booking was made"},
        {"user_goal": None, "end_state": "The AI refused.", "desired": "-", "verdict": 0, "reason": EVIL}],
    "topic_adherence": [
        {"topics": ["restaurants"], "answered": [True], "on_topic": [True], "reference_topics": ["restaurants"]},
        {"topics": ["football <i>match</i>"], "answered": [False], "on_topic": [False],
         "reference_topics": ["restaurants"]}],
}


@pytest.fixture(autouse=True)
def kinds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The new metrics' names mapped to their trace kinds, whatever the registry holds today."""
    for name, (kind, judge) in KINDS.items():
        monkeypatch.setitem(registry.COLUMN_BASES, name, MetricDef(lambda s, t: iter(()), ("conversation",),
                                                                   judge=judge, trace=kind))


def _write_samples(folder: Path, rows: list[dict[str, Any]]) -> None:
    (folder / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture
def agent_run(make_run: Callable[..., Path]) -> Path:
    values = {"tool_call_accuracy": [0.75, 1.0], "tool_call_f1": [0.0, 0.0],
              "agent_goal_accuracy_with_reference": [1.0, 0.0], "topic_adherence": [1.0, 0.0]}
    folder = make_run("agent", values, ids=["trip", "chat"], traces=TRACES)
    _write_samples(folder, [TRIP, CHAT])
    return folder


def _card(html: str, metric: str, sample: str) -> str:
    start = html.index(f"<h3>{metric}</h3>")
    end = html.find("<h3>", start + 1)
    section = html[start:end if end > 0 else html.index("<h2 id=usage>")]
    return next(c for c in section.split("<div class='sample") if f"<b>{sample}</b>" in c)


def test_turns_in_order_with_their_tool_calls_and_arguments(agent_run: Path) -> None:
    card = _card(render_report(agent_run), "topic_adherence", "trip")
    speakers = re.findall(r"<span class=who>([^<]+)</span>", card)
    assert speakers == ["Human", "AI", "Tool output", "AI", "Tool output", "AI"]
    order = [card.index(t) for t in ("Book me a French", "Let me look.", "restaurant_search", "Found: Chez Paul",
                                     "book_table", "Booked: Chez Paul", "Your table for four")]
    assert order == sorted(order)
    assert "restaurant = &quot;Chez Paul&quot;, people = 4" in card  # key = value, values as compact JSON
    assert "conversation, 6 turns" in card and "reference goal" in card and "A table for four is booked" in card
    assert "<code>restaurants</code>, <code>weather</code>" in card  # the reference topics


def test_the_reference_calls_stand_beside_the_calls_made(agent_run: Path) -> None:
    card = _card(render_report(agent_run), "agent_goal_accuracy_with_reference", "trip")
    table = card[card.index("<table class=calls>"):]
    table = table[:table.index("</table>")]
    rows = re.findall(r"<tr><td class=num>(\d)</td><td>(.*?)</td><td>(.*?)</td></tr>", table)
    assert [r[0] for r in rows] == ["1", "2"]
    assert "restaurant_search" in rows[0][1] and "cuisine = &quot;French&quot;" in rows[0][2]
    assert "people = 4" in rows[1][1] and "people = &quot;4&quot;" in rows[1][2]  # "4" is not 4
    assert "<span class='verdict good'>goal achieved</span>" in card and "the booking was made" in card


def test_tool_call_accuracy_pairs_reference_and_made_calls_with_their_scores(agent_run: Path) -> None:
    card = _card(render_report(agent_run), "tool_call_accuracy", "trip")
    assert "paired with the calls made in the verdicts beside" in card  # not the side-by-side table again
    assert "<table class=calls>" not in card and "line up with the reference" in card
    scores = re.findall(r"<td class=(good|bad)>([\d.]+)</td></tr>", card)
    assert scores == [("bad", "0.500"), ("good", "1.000")]
    assert '"made"' not in card  # the keys the view shows are not repeated as JSON


def test_tool_call_f1_marks_each_call_on_both_sides(agent_run: Path) -> None:
    card = _card(render_report(agent_run), "tool_call_f1", "trip")
    assert card.count("<td class=bad>not made</td>") == 2 and card.count("<td class=bad>not expected</td>") == 2
    assert "as sets" in card


def test_a_conversation_without_tool_calls(agent_run: Path) -> None:
    html = render_report(agent_run)
    card = _card(html, "topic_adherence", "chat")
    assert re.findall(r"<span class=who>([^<]+)</span>", card) == ["Human", "AI"]
    assert "Hi &lt;b&gt;there&lt;/b&gt;" in card and "calls" not in card.split("<dt>reference topics")[0]
    assert "<td class=bad>refused</td>" in card and "off the reference topics" in card
    assert "football &lt;i&gt;match&lt;/i&gt;" in card
    empty = _card(html, "tool_call_accuracy", "chat")
    assert "no tool calls made and none expected" in empty


def test_hostile_text_is_escaped_everywhere(agent_run: Path) -> None:
    html = render_report(agent_run)
    assert "<script" not in html and "<b>there" not in html and "<i>match" not in html
    assert "cuisine = &quot;&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;&quot;" in html  # a tool argument
    assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;" in _card(
        html, "agent_goal_accuracy_with_reference", "chat")  # a judge's reason


def test_text_views(make_run: Callable[..., Path]) -> None:
    rows = [{"id": "doc", "user_input": "A long report on " + EVIL, "response": "A short summary.",
             "reference": "SELECT 1", "rubrics": {"score2_description": "good", "score1_description": EVIL}}]
    traces = {"summary_score": [{"keyphrases": ["report", EVIL], "questions": ["Is it long?", "Who wrote it?"],
                                 "answers": [1, 0], "qa_score": 0.5, "conciseness": 0.8}],
              "instance_specific_rubrics": [{"levels": [1, 2, 3], "score": 2, "reason": "mostly good"}],
              "sql_semantic_equivalence": [{"equivalent": False, "response_explanation": "counts rows",
                                            "reference_explanation": "selects 1"}]}
    folder = make_run("doc", {"summary_score": [0.56], "instance_specific_rubrics": [2.0],
                                          "sql_semantic_equivalence": [0.0]}, ids=["doc"], traces=traces)
    _write_samples(folder, rows)
    html = render_report(folder)
    summary = _card(html, "summary_score", "doc")
    assert "<td>Is it long?</td><td class=good>the summary answers it</td>" in summary
    assert "<td>Who wrote it?</td><td class=bad>not in the summary</td>" in summary
    assert "question-answer score 0.500; conciseness 0.800" in summary
    rubric = _card(html, "instance_specific_rubrics", "doc")
    assert "score level <b>2</b>" in rubric and "of the rubric's levels 1, 2, 3" in rubric
    assert rubric.index("score1_description") < rubric.index("score2_description")  # levels in order
    sql = _card(html, "sql_semantic_equivalence", "doc")
    assert "<span class='verdict bad'>not equivalent</span>" in sql and "counts rows" in sql
    assert "<script" not in html and "question" in summary  # a text sample keeps its usual texts


def test_a_trace_without_its_keys_is_shown_as_it_is() -> None:
    for kind, (view, _) in AGENT_VIEWS.items():
        assert view({"other": 1}, MetricDef(lambda s, t: iter(()), (), trace=kind)) == "", kind
    shown = trace_html("tool_call_accuracy", {"made": [SEARCH]})
    assert "&quot;made&quot;" in shown and "restaurant_search" in shown and "<script" not in shown
    goal = trace_html("agent_goal_accuracy_without_reference",
                      {"user_goal": "book a table", "end_state": "booked", "desired": "booked", "verdict": 1,
                       "reason": "done", "nan_detail": None})
    assert "the user&#x27;s goal, as the judge read it" in goal and "book a table" in goal and "<pre>" not in goal
    assert trace_html("summary_score", {"keyphrases": [], "questions": [], "answers": [], "qa_score": 0.0,
                                        "conciseness": None}).endswith("conciseness not counted</p>")


def test_rows_that_are_not_conversations_or_are_odd() -> None:
    assert not is_conversation({"user_input": "a question"}) and not is_conversation(None)
    odd = {"user_input": ["just text", {"type": "ai", "content": "x", "tool_calls": [EVIL, {"name": "t", "args": 3}]}],
           "reference_tool_calls": [{"name": EVIL}], "rubrics": {"level": EVIL}}
    html = conversation_html(odd) + references_html(odd)
    assert "<script" not in html and "not a tool call" in html and "no arguments" in html and ">3<" in html


HAVE_BROWSER = bool(shutil.which("chromium") or shutil.which("chromium-browser"))


@pytest.mark.slow  # starts a headless browser
@pytest.mark.skipif(not HAVE_BROWSER and not os.environ.get("CI"),
                    reason="needs Debian's chromium: apt-get install -y chromium")
def test_the_conversation_renders_in_chromium(agent_run: Path, tmp_path: Path) -> None:
    from localeval.report.html import write_report

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    assert browser is not None
    url = write_report(agent_run).resolve().as_uri()
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", f"--user-data-dir={tmp_path / 'p'}"]
    dom = subprocess.run([browser, *flags, "--dump-dom", url], capture_output=True, text=True, timeout=180,
                         check=True).stdout
    worst = dom[dom.index('<h2 id="worst">'):]
    assert '<span class="who">Tool output</span>' in worst and '<code class="call">book_table</code>' in worst
    assert "cuisine = \"&lt;script&gt;alert('pwned')&lt;/script&gt;\"" in worst
    assert "<script" not in dom and "pwned</title>" not in dom
    assert re.search(r"<caption>reference and made tool calls paired by position", worst)
