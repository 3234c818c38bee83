"""Test-set generation with a scripted judge: the mix, unanswerable rows, checks and rejections,
determinism and the cache, and rows that load and evaluate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import localeval
from localeval.config import RunConfig
from localeval.data import load_samples
from localeval.embed import HashEmbedder
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.errors import LocalevalError
from localeval.nan import Nan
from localeval.testset import generate_testset, parse_mix, plan_counts
from localeval.testset.answer_shapes import REFUSAL

from .fakes import handbook_script, override

FIELDS = {"id", "user_input", "reference", "reference_contexts", "reference_context_ids", "synthesizer",
          "query_style", "answerable"}


@pytest.mark.parametrize(("size", "share", "expected"), [
    (10, 0.1, {"single_hop_specific": 5, "multi_hop_abstract": 2, "multi_hop_specific": 2, "unanswerable": 1}),
    (20, 0.1, {"single_hop_specific": 9, "multi_hop_abstract": 5, "multi_hop_specific": 4, "unanswerable": 2}),
    (4, 0.1, {"single_hop_specific": 1, "multi_hop_abstract": 1, "multi_hop_specific": 1, "unanswerable": 1}),
    (8, 0.0, {"single_hop_specific": 4, "multi_hop_abstract": 2, "multi_hop_specific": 2, "unanswerable": 0}),
    (1, 0.1, {"single_hop_specific": 1, "multi_hop_abstract": 0, "multi_hop_specific": 0, "unanswerable": 0}),
])
def test_the_default_mix_splits_the_size(size: int, share: float, expected: dict[str, int]) -> None:
    assert plan_counts(size, parse_mix(None), share) == expected


def test_a_custom_mix_is_normalised_and_checked() -> None:
    assert parse_mix("single_hop_specific=3,multi_hop_specific=1") == {
        "single_hop_specific": 0.75, "multi_hop_abstract": 0.0, "multi_hop_specific": 0.25}
    assert plan_counts(10, parse_mix("multi_hop_abstract=1"), 0.2)["multi_hop_abstract"] == 8
    for bad in ("simple=1", "single_hop_specific=-1", "single_hop_specific=x", "single_hop_specific=0"):
        with pytest.raises(LocalevalError):
            parse_mix(bad)


def test_rows_follow_the_mix_and_carry_every_field(docs: Path, engine: ScriptedEngine,
                                                    embedder: HashEmbedder) -> None:
    result = generate_testset(docs, 6, judge=engine, embedder=embedder, unanswerable=0.2)
    assert result.targets == {"single_hop_specific": 3, "multi_hop_abstract": 1, "multi_hop_specific": 1,
                              "unanswerable": 1}
    assert result.counts == result.targets and result.short == {}
    assert [r["id"] for r in result.rows] == [f"q{i:03d}" for i in range(1, 7)]
    chunk_ids = {n.id for n in result.graph.nodes}
    for row in result.rows:
        assert set(row) == FIELDS
        assert set(row["reference_context_ids"]) <= chunk_ids
        assert row["query_style"] in ("well_formed", "misspelled", "web_search", "short", "long")
        texts = {n.id: n.text for n in result.graph.nodes}
        assert row["reference_contexts"] == [texts[i] for i in row["reference_context_ids"]]
    by_type = {r["synthesizer"]: r for r in result.rows}
    assert len(by_type["single_hop_specific"]["reference_contexts"]) == 1
    assert len(by_type["multi_hop_abstract"]["reference_contexts"]) >= 2
    assert len(by_type["multi_hop_specific"]["reference_contexts"]) == 2


def test_unanswerable_rows_are_marked_refused_and_checked_against_the_closest_chunks(
        docs: Path, engine: ScriptedEngine, embedder: HashEmbedder) -> None:
    result = generate_testset(docs, 4, judge=engine, embedder=embedder, unanswerable=0.5, styles=["well_formed"])
    refused = [r for r in result.rows if r["synthesizer"] == "unanswerable"]
    assert len(refused) == 2
    assert all(r["answerable"] is False and r["reference"] == REFUSAL and r["reference_contexts"] == []
               for r in refused)
    assert all(r["answerable"] is True for r in result.rows if r["synthesizer"] != "unanswerable")
    checks = [r for r in engine.requests if r.label == "testset_answered"]
    written = [r for r in engine.requests if r.label == "testset_unanswerable"]
    assert len(written) >= 2 and len(checks) == 3 * len(written)  # each against the 3 closest chunks


def test_an_unanswerable_question_a_chunk_answers_is_rejected(docs: Path, embedder: HashEmbedder) -> None:
    engine = ScriptedEngine(override(testset_answered=lambda d: {"reason": "it does", "verdict": 1}))
    result = generate_testset(docs, 4, judge=engine, embedder=embedder, unanswerable=0.5)
    assert result.counts["unanswerable"] == 0 and result.short["unanswerable"] == 2
    assert result.rejected["answered_by_documents"] >= 2
    assert all(r["detail"].startswith("answered by ") for r in result.rejected_rows)
    assert "answered_by_documents" in result.summary() and "short of the target" in result.summary()


def test_rows_whose_reference_the_contexts_do_not_support_are_rejected_and_counted(
        docs: Path, embedder: HashEmbedder) -> None:
    def nli_no(data: dict) -> dict:
        return {"verdicts": [{"reason": "no", "verdict": 0} for _ in data["statements"]]}

    engine = ScriptedEngine(override(nli=nli_no))
    result = generate_testset(docs, 5, judge=engine, embedder=embedder, unanswerable=0.2, max_waves=2)
    assert [r["synthesizer"] for r in result.rows] == ["unanswerable"]
    assert result.rejected["unsupported_reference"] == sum(
        1 for r in result.rejected_rows if r["reason"] == "unsupported_reference") > 4
    assert result.waves == 2  # a second wave tried to make up the shortfall
    assert sum(result.short.values()) == 4
    assert all(r["detail"].endswith("statements supported") for r in result.rejected_rows
               if r["reason"] == "unsupported_reference")


def test_a_support_threshold_keeps_partly_supported_references(docs: Path, embedder: HashEmbedder) -> None:
    def half(data: dict) -> dict:
        n = len(data["statements"])
        return {"verdicts": [{"reason": "", "verdict": int(i < (n + 1) // 2)} for i in range(n)]}

    def two_sentences(data: dict) -> dict:
        return {"statements": ["Staff take the train.", "Nobody knows this."]}

    engine = ScriptedEngine(override(nli=half, statements=two_sentences))
    strict = generate_testset(docs, 2, judge=engine, embedder=embedder, unanswerable=0, max_waves=1)
    lenient = generate_testset(docs, 2, judge=engine, embedder=embedder, unanswerable=0, min_support=0.5)
    assert strict.rows == [] and lenient.counts["single_hop_specific"] == 1


def test_a_failed_ask_rejects_the_row_with_the_nan_reason(docs: Path, embedder: HashEmbedder) -> None:
    def boom(data: dict) -> dict:
        raise RuntimeError("engine down")

    engine = ScriptedEngine(override(testset_multi_hop_specific=boom))
    result = generate_testset(docs, 4, judge=engine, embedder=embedder, unanswerable=0)
    assert result.counts["multi_hop_specific"] == 0 and result.rejected["judge_engine_error"] >= 1
    assert any(r["reason"] == f"judge_{Nan('engine_error').reason}" and r["synthesizer"] == "multi_hop_specific"
               for r in result.rejected_rows)


def test_styles_rewrite_the_question_but_not_the_reference(docs: Path, engine: ScriptedEngine,
                                                           embedder: HashEmbedder) -> None:
    plain = generate_testset(docs, 4, judge=engine, embedder=embedder, styles=["well_formed"])
    assert not [r for r in engine.requests if r.label == "testset_style"]
    styled = generate_testset(docs, 4, judge=ScriptedEngine(handbook_script), embedder=embedder, styles=["short"])
    assert all(r["query_style"] == "short" and r["user_input"].endswith(" pls") for r in styled.rows)
    assert [r["reference"] for r in styled.rows] == [r["reference"] for r in plain.rows]
    with pytest.raises(LocalevalError, match="query style"):
        generate_testset(docs, 4, judge=engine, embedder=embedder, styles=["shouting"])


def test_the_same_seed_gives_the_same_rows_and_a_cached_rerun_asks_nothing(
        docs: Path, tmp_path: Path, embedder: HashEmbedder) -> None:
    cache = tmp_path / "cache.sqlite"
    first_engine = ScriptedEngine(handbook_script)
    seed3 = RunConfig(seed=3)
    first = generate_testset(docs, 6, judge=first_engine, embedder=embedder, config=seed3, cache=cache)
    assert first_engine.calls
    rerun_engine, rerun_embedder = ScriptedEngine(handbook_script), HashEmbedder()
    again = generate_testset(docs, 6, judge=rerun_engine, embedder=rerun_embedder, config=seed3, cache=cache)
    assert again.rows == first.rows
    assert rerun_engine.calls == [] and rerun_embedder.calls == [] and again.engine_calls == 0
    assert again.usage.cache_hits == first.usage.judge_calls
    uncached = generate_testset(docs, 6, judge=ScriptedEngine(handbook_script), embedder=HashEmbedder(), config=seed3)
    assert uncached.rows == first.rows
    other = generate_testset(docs, 6, judge=ScriptedEngine(handbook_script), embedder=HashEmbedder(),
                             config=RunConfig(seed=4))
    assert [r["user_input"] for r in other.rows] != [r["user_input"] for r in first.rows]


def test_a_saved_graph_is_reused_until_the_documents_change(docs: Path, tmp_path: Path,
                                                            embedder: HashEmbedder) -> None:
    graph = tmp_path / "graph.json"
    first = generate_testset(docs, 3, judge=ScriptedEngine(handbook_script), embedder=embedder, graph_out=graph)
    assert graph.is_file() and not first.graph_reused
    engine = ScriptedEngine(handbook_script)
    second = generate_testset(docs, 3, judge=engine, embedder=embedder, graph_out=graph)
    assert second.graph_reused and "testset_extract" not in {r.label for r in engine.requests}
    assert second.rows == first.rows
    (docs / "new.md").write_text("# New\nA new rule about Gamma Room bookings.", encoding="utf-8")
    third = generate_testset(docs, 3, judge=ScriptedEngine(handbook_script), embedder=embedder, graph_out=graph)
    assert not third.graph_reused and any(n.source == "new.md" for n in third.graph.nodes)


def test_a_wave_costs_a_few_engine_calls_however_many_rows(docs: Path, embedder: HashEmbedder) -> None:
    engine = ScriptedEngine(handbook_script)
    result = generate_testset(docs, 8, judge=engine, embedder=embedder)
    # extraction, then per wave: writers, styles, statements, NLI and the answered checks (in the NLI round)
    assert result.engine_calls == len(engine.calls) <= 1 + 4 * result.waves


def test_the_written_file_loads_and_evaluates_once_a_rag_system_fills_it(
        docs: Path, tmp_path: Path, engine: ScriptedEngine, embedder: HashEmbedder) -> None:
    result = generate_testset(docs, 5, judge=engine, embedder=embedder, unanswerable=0.2)
    path = result.write(tmp_path / "testset.jsonl")
    samples = load_samples(path)
    assert [s.id for s in samples] == [r["id"] for r in result.rows]
    assert [s.answerable for s in samples] == [True] * 4 + [False]
    assert samples[0].extra["synthesizer"] == "single_hop_specific" and "query_style" in samples[0].extra
    assert samples[0].reference_context_ids == tuple(result.rows[0]["reference_context_ids"])
    # What a RAG system would add: an answer and what it retrieved.
    filled = [json.loads(line) for line in path.read_text().splitlines()]
    for row in filled:
        row["response"] = row["reference"]
        row["retrieved_contexts"] = row["reference_contexts"] or ["Nothing relevant was found."]
    (tmp_path / "filled.jsonl").write_text("".join(json.dumps(r) + "\n" for r in filled))
    scored = localeval.evaluate(tmp_path / "filled.jsonl", metrics="faithfulness,context_recall",
                                judge=ScriptedEngine(rule_script), cache=False, progress=False, report=False)
    values = scored.scores("faithfulness")
    assert len(values) == 5 and all(v == 1.0 for v in values[:4])


def test_a_row_that_copies_a_prompt_example_is_rejected_before_any_check(docs: Path, embedder: HashEmbedder) -> None:
    def copycat(data: dict) -> dict:
        return {"question": "How long can an Elmbrook Library member keep a book?",
                "reference": ["A book can be kept for three weeks."]}

    engine = ScriptedEngine(override(testset_single_hop=copycat))
    result = generate_testset(docs, 2, judge=engine, embedder=embedder, unanswerable=0, max_waves=1,
                              mix="single_hop_specific=1")
    assert result.rows == [] and result.rejected == {"copied_example": 3}
    assert {r.label for r in engine.requests} == {"testset_extract", "testset_single_hop"}


def test_min_support_zero_turns_the_reference_check_off(docs: Path, engine: ScriptedEngine,
                                                        embedder: HashEmbedder) -> None:
    result = generate_testset(docs, 3, judge=engine, embedder=embedder, unanswerable=0, min_support=0)
    assert result.counts == result.targets and len(result.rows) == 3
    assert not {"statements", "nli"} & {r.label for r in engine.requests}
