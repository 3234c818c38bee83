"""The ClapNQ benchmark sample builder: deterministic, gold passage where recorded, sizes, shares."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.harness import clapnq
from localeval.data import load_samples


def _gold_passages() -> dict[str, str]:
    rows = clapnq.read_rows(clapnq.DEFAULT_DATA / clapnq.ANSWERABLE)
    rows += clapnq.read_rows(clapnq.DEFAULT_DATA / clapnq.UNANSWERABLE)
    return {r.passage_id: r.passage for r in rows}


def test_same_seed_same_samples_other_seed_others() -> None:
    first = clapnq.build_samples(25, seed=7)
    assert first == clapnq.build_samples(25, seed=7)
    assert first != clapnq.build_samples(25, seed=8)


def test_gold_passage_sits_at_the_recorded_rank_and_id() -> None:
    passages = _gold_passages()
    samples = clapnq.build_samples(40, seed=3, top_k=5)
    ranks = set()
    for s in samples:
        gold = s["reference_context_ids"][0]
        rank = s["gold_rank"]
        ranks.add(rank)
        assert s["retrieved_context_ids"][rank - 1] == gold
        assert s["retrieved_context_ids"].count(gold) == 1
        assert passages[gold] in s["retrieved_contexts"][rank - 1]
        for cid, text in zip(s["retrieved_context_ids"], s["retrieved_contexts"], strict=True):
            assert passages[cid] in text  # every id names the passage it stands beside
    assert len(ranks) > 1  # the gold passage is not always first


@pytest.mark.parametrize(("n", "top_k"), [(1, 1), (10, 3), (50, 5)])
def test_sizes(n: int, top_k: int) -> None:
    samples = clapnq.build_samples(n, seed=0, top_k=top_k)
    assert len(samples) == n
    assert len({s["id"] for s in samples}) == n
    for s in samples:
        assert len(s["retrieved_contexts"]) == len(s["retrieved_context_ids"]) == top_k
        assert len(set(s["retrieved_context_ids"])) == top_k
        assert s["user_input"] and s["reference"] and s["response"]


def test_more_samples_than_questions_repeat_with_new_ids() -> None:
    samples = clapnq.build_samples(320, seed=0, top_k=2, wrong_share=0.0)
    assert len({s["id"] for s in samples}) == 320
    assert sum(s["id"].endswith("#2") for s in samples) == 20


@pytest.mark.parametrize("share", [0.0, 0.3, 1.0])
def test_wrong_answer_share_is_exact(share: float) -> None:
    samples = clapnq.build_samples(30, seed=1, wrong_share=share)
    wrong = [s for s in samples if s["response_kind"] == "wrong"]
    assert len(wrong) == round(30 * share)
    assert all(s["response"] != s["reference"] for s in wrong)
    assert all(s["response"] == s["reference"] for s in samples if s["response_kind"] == "human")


def test_unanswerable_rows_are_marked() -> None:
    samples = clapnq.build_samples(20, seed=2, wrong_share=0.0, unanswerable_share=0.25)
    unanswerable = [s for s in samples if not s["answerable"]]
    assert len(unanswerable) == 5
    assert all(s["reference_context_ids"] == [] and s["response_kind"] == "refusal" for s in unanswerable)


def test_command_line_writes_jsonl_that_localeval_loads(tmp_path: Path) -> None:
    out = tmp_path / "clapnq.jsonl"
    assert clapnq.main(["--n", "6", "--seed", "4", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows == clapnq.build_samples(6, seed=4)
    samples = load_samples(out)
    assert [s.id for s in samples] == [r["id"] for r in rows]
    assert samples[0].retrieved_context_ids == tuple(rows[0]["retrieved_context_ids"])
    assert samples[0].extra["response_kind"] == rows[0]["response_kind"]
