"""The shipped WikiEval pairs' labels: each says which candidate is the better one by the benchmark's design, as
``preferences.csv`` records with its evidence, and two checks that read no judge agree with them: in ``ff.csv``
the better answer shares more of the context's words; in ``cr.csv`` the better context's sentences are the ones
the other repeats (the padded one adds sentences to it)."""

from __future__ import annotations

import csv
import re

import pytest

from localeval.agree.pair_files import default_pairs_folder, read_pairs

PAIRS = default_pairs_folder()
WORD = re.compile(r"[a-z][a-z\-]{4,}")


def _preferences() -> dict[str, list[dict[str, str]]]:
    with (PAIRS / "preferences.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return {kind: [r for r in rows if r["file"] == f"{kind}.csv"] for kind in ("ff", "ar", "cr")}


def _records(kind: str) -> list[dict[str, str]]:
    with (PAIRS / f"{kind}.csv").open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _shared(text: str, context: str) -> float:
    words = set(WORD.findall(text.lower()))
    return len(words & set(WORD.findall(context.lower()))) / max(1, len(words))


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text.replace("\\n", "\n")) if len(s.strip()) > 20]


def _repeated(text: str, other: str) -> float:
    sentences = _sentences(text)
    return sum(s in other for s in sentences) / max(1, len(sentences))


@pytest.mark.parametrize("kind", ["ff", "ar", "cr"])
def test_each_label_is_the_better_candidate_preferences_csv_names_with_its_evidence(kind: str) -> None:
    preferences, records = _preferences()[kind], _records(kind)
    assert [int(p["pair"]) for p in preferences] == list(range(1, 51))
    for p in preferences:
        first, second = records[int(p["pair"]) - 1], records[int(p["pair"]) + 49]  # the source's row order
        assert first["question"].strip() == second["question"].strip() == p["question"]
        assert p["better"] in ("first", "second") and len(p["evidence"]) > 20
        assert (first["label"], second["label"]) == (("1", "0") if p["better"] == "first" else ("0", "1"))


def test_the_better_answer_of_every_ff_pair_shares_more_of_the_context() -> None:
    ties = 0
    for number, pair in enumerate(read_pairs(PAIRS / "ff.csv"), 1):
        good, bad = (_shared(c["answer"], c["context"]) for c in (pair.good, pair.bad))
        assert good >= bad, f"ff pair {number}: {good:.2f} < {bad:.2f}"
        ties += good == bad  # both answers' every long word is in the context: the reading alone decides
    assert ties <= 3


def test_the_better_context_of_every_cr_pair_but_one_is_the_one_the_other_repeats() -> None:
    """Pair 26: the longer context adds the route's landmarks, which the question asks for (preferences.csv)."""
    for number, pair in enumerate(read_pairs(PAIRS / "cr.csv"), 1):
        good, bad = pair.good["context"], pair.bad["context"]
        assert (_repeated(good, bad) > _repeated(bad, good)) == (number != 26), f"cr pair {number}"


def test_the_labels_are_not_the_source_order_the_files_came_in() -> None:
    """The copy's label column once said which of two shuffled positions a row held (the first 50 rows 0, the
    last 50 1); the better candidate is in either position."""
    for kind in ("ff", "ar", "cr"):
        firsts = sum(r["label"] == "1" for r in _records(kind)[:50])
        assert 10 < firsts < 40, kind
