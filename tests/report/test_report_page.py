"""The report page says only what helps: sample texts beside the verdicts, ids for the id metrics,
sections left out when empty, and words instead of rule ids and snake_case."""

from __future__ import annotations

import re
from html import escape, unescape
from pathlib import Path

import pytest

from localeval.errors import LocalevalError
from localeval.report.diagnosis import RULES
from localeval.report.html import render_report
from localeval.report.pieces import FOLD, fold

ID_METRICS = ("mrr", "ndcg", "hit_rate", "id_context_precision", "id_context_recall")


def _cards(html: str, metric: str) -> list[str]:
    """The worst-sample cards under a metric's heading, in page order."""
    start = html.index(f"<h3>{escape(metric)}</h3>") + len(metric) + 9
    end = html.find("<h3>", start)
    section = html[start:end if end > 0 else html.index("<h2 id=usage>")]
    return [c for c in section.split("<div class='sample") if c.strip()]


def test_worst_card_shows_question_response_reference_and_ranked_contexts(texts_run: Path) -> None:
    html = render_report(texts_run)
    card = _cards(html, "faithfulness")[0]
    assert "<b>beta</b>: faithfulness = 0.500" in card
    for text in ("How tall is the Beta tower?", "The Beta tower is purple.", "The Beta tower is 300 metres tall.",
                 "its last stone was laid by the mason Quillon Varda."):
        assert text in card, text
    contexts = ("Monkeys climb trees.", "Owls hunt at night.", "The Beta tower is 300 metres tall. It")
    ranks = [card.index(t) for t in contexts]
    assert ranks == sorted(ranks)  # rank order
    assert "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in card and "<script" not in html
    assert "supported" in card and "word overlap" in card  # the verdict table beside the texts


def test_chunk_verdicts_stand_beside_their_contexts(texts_run: Path) -> None:
    card = _cards(render_report(texts_run), "context_precision")[0]
    assert "<b>beta</b>" in card
    chunks = re.findall(r"<li><code>([\w-]+)</code> <span class='verdict (\w+)'>(\w+)</span>", card)
    assert chunks == [("monkeys-1", "bad", "irrelevant"), ("owls-1", "bad", "irrelevant"), ("beta-1", "good", "useful")]
    assert "<caption>retrieved chunks" not in card  # the separate chunk table is not repeated


@pytest.mark.parametrize("metric", ID_METRICS)
def test_id_cards_show_retrieved_ids_in_rank_order_and_the_reference_ids(texts_run: Path, metric: str) -> None:
    cards = _cards(render_report(texts_run), metric)
    beta = next(c for c in cards if "<b>beta</b>" in c)
    rows = re.findall(r"<tr class=(good|bad)><td class=num>(\d)</td><td><code>([\w-]+)</code></td><td>(\w+)", beta)
    assert rows == [("bad", "1", "monkeys-1", "no"), ("bad", "2", "owls-1", "no"), ("good", "3", "beta-1", "yes")]
    assert "reference ids: <code>beta-1</code> (rank 3), <code>beta-2</code> (not retrieved)" in beta
    assert "no verdicts" not in beta and "no trace" not in beta


def test_id_card_marks_ranks_beyond_k_and_repeats(make_run, tmp_path: Path) -> None:
    import localeval

    rows = [{"id": "s", "retrieved_context_ids": ["x", "a", "x", "b"], "reference_context_ids": ["b", "a"]}]
    out = tmp_path / "k"
    localeval.evaluate(rows, metrics="ndcg:k=2", out=out, progress=False, report=False)
    card = _cards(render_report(out), "ndcg(k=2)")[0]
    assert "no (repeats rank 1, counted once) (beyond k = 2, not counted)" in card
    assert "yes (beyond k = 2, not counted)" in card and "<code>b</code> (rank 4), <code>a</code> (rank 2)" in card


def test_long_texts_fold_with_their_start_visible() -> None:
    short = "a" * FOLD
    assert fold(short) == f"<div class=text>{short}</div>"
    text = "<b>" + " ".join(["word"] * 120) + " END"
    folded = fold(text)
    summary = re.search(r"<span class=head>(.*?) &hellip;", folded)
    assert folded.startswith("<details") and summary is not None
    assert 100 <= len(unescape(summary.group(1))) <= FOLD and summary.group(1).startswith("&lt;b&gt;word")
    assert folded.endswith(f"</summary>{escape(text)}</details>")  # the whole text when opened


def test_no_samples_file_means_a_note_not_a_crash(texts_run: Path) -> None:
    (texts_run / "samples.jsonl").unlink()
    html = render_report(texts_run)
    assert "the run folder has no samples.jsonl" in html and "How tall is the Beta tower?" not in html
    assert "The ids are not shown" in html


def test_a_broken_samples_file_names_its_line(texts_run: Path) -> None:
    path = texts_run / "samples.jsonl"
    path.write_text(path.read_text(encoding="utf-8") + "{not json\n", encoding="utf-8")
    with pytest.raises(LocalevalError, match=r"samples\.jsonl line 4 is not valid JSON.*delete samples\.jsonl"):
        render_report(texts_run)


def test_refusals_section_only_with_unanswerable_samples(make_run) -> None:
    plain = render_report(make_run("plain", {"faithfulness": [0.5, 0.9]}))
    assert "Unanswerable" not in plain and "refusal rate" not in plain
    marked = render_report(make_run("marked", {"faithfulness": [0.5, 0.9]}, answerable=[True, False]))
    assert "<h2 id=refusals>Unanswerable questions (refusals)</h2>" in marked and "refusal rate" in marked


def test_diagnosis_by_title_and_only_when_a_rule_fires(make_run) -> None:
    quiet = render_report(make_run("quiet", {"context_precision": [0.9] * 4, "context_recall": [0.9] * 4}))
    assert "Diagnosis" not in quiet
    fired = render_report(make_run("fired", {"context_precision": [0.9] * 4, "context_recall": [0.2] * 4}))
    assert "<h2 id=diagnosis>Diagnosis</h2>" in fired
    assert "Relevant chunks rank first, but evidence the answer needs is missing" in fired
    rag_rules = [r for r in RULES if r.family == "rag"]  # a RAG run is not told of the agent rules
    assert f"{len(rag_rules) - 2} more rules not checked, for want of their metrics" in fired  # all but 2 need more
    assert "<li>The right chunk ranks high, but the top-k is padded" in fired  # an unchecked rule, by title
    for rule in RULES:
        assert rule.id not in fired, rule.id


def test_no_snake_case_in_headers(scripted_run: Path, texts_run: Path) -> None:
    for run in (scripted_run, texts_run):
        html = render_report(run)
        headers = re.findall(r"<th>(.*?)</th>", html) + re.findall(r"<caption>(.*?)</caption>", html)
        assert "judge calls" in headers and "prompt tokens" in headers and "judge seconds" in headers
        assert [h for h in headers if "_" in h] == []
        run_facts = re.findall(r"<tr><td>([^<]*)</td><td>", html.split("<h2 id=usage>")[1])
        assert "on a missing field" in run_facts and [f for f in run_facts if "_" in f] == []
        assert not re.search(r"NaN \(\w+_\w+\)", html)  # NaN reasons as words


def test_nan_card_gives_its_reason_in_words(make_run) -> None:
    html = render_report(make_run("nan", {"faithfulness": [0.5, "no_statements"]}))
    assert "<b>q2</b>: no score (no statements)" in html and "no statements 1" in html
