"""WikiEval-style pairwise agreement: the arithmetic by hand, the real files' shape, a scripted run."""

from __future__ import annotations

import csv
import hashlib
import math
from pathlib import Path

import pytest

from localeval.agree.pair_count import PairCount, count_pairs, pairwise_accuracy
from localeval.agree.pair_files import default_pairs_folder, pair_samples, read_pairs
from localeval.agree.pair_run import run_pairs
from localeval.agree.pair_table import PAPER, format_pairs_report
from localeval.embed import HashEmbedder
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.errors import LocalevalError
from localeval.metrics.context_relevance import split_sentences
from localeval.nan import Nan

PAIRS = default_pairs_folder()  # the WikiEval pairs shipped in the package


def _words(text: str) -> set[str]:
    return {w.strip(".,?").lower() for w in text.split() if len(w) > 3}


def script(label, data, request):
    """rule_script, plus context relevance: an excerpt is relevant when it shares a word with the question."""
    if label == "context_relevance":
        shared = _words(data["question"]) & _words(data["excerpt"])
        return {"reason": "shared word", "verdict": int(bool(shared))}
    return rule_script(label, data, request)


# --- arithmetic ---------------------------------------------------------------------------------


def test_pairwise_accuracy_by_hand() -> None:
    good = [0.9, 0.5, 0.1, float("nan"), Nan("no_statements"), 1.0]
    bad = [0.1, 0.5, 0.3, 0.2, 0.0, None]
    # win, tie, loss, then three pairs with a NaN side: (1 + 0.5 * (1 + 3)) / 6
    assert count_pairs(good, bad) == PairCount(wins=1, losses=1, ties=1, nan_pairs=3)
    assert pairwise_accuracy(good, bad) == pytest.approx(3 / 6)
    assert pairwise_accuracy([1.0, 0.8, 0.7], [0.0, 0.2, 0.9]) == pytest.approx(2 / 3)
    assert pairwise_accuracy([0.5, 0.5], [0.5, 0.5]) == 0.5  # all ties: chance
    assert pairwise_accuracy([1.0] * 4, [0.0] * 4) == 1.0
    assert math.isnan(pairwise_accuracy([], []))
    with pytest.raises(ValueError):
        pairwise_accuracy([1.0], [])


def test_split_sentences_joins_short_pieces_and_groups() -> None:
    text = "History\nThe tower was built in 1889. It is 330 metres tall today. See also"
    assert split_sentences(text) == [
        "History The tower was built in 1889.", "It is 330 metres tall today. See also",
    ]
    assert split_sentences(text, per_chunk=2) == [
        "History The tower was built in 1889. It is 330 metres tall today. See also",
    ]


# --- files --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "columns"), [("ff", {"context", "answer"}), ("ar", {"answer"}),
                                               ("cr", {"context"})])
def test_real_pair_files_have_fifty_pairs(kind: str, columns: set[str]) -> None:
    assert PAIRS.parent.name == "agree" and PAIRS.parent.parent.name == "localeval"
    pairs = read_pairs(PAIRS / f"{kind}.csv")
    assert len(pairs) == 50 and len({p.question for p in pairs}) == 50
    for p in pairs:
        assert set(p.good) == set(p.bad) == columns
        assert all("\\n" not in v for v in [*p.good.values(), *p.bad.values()])  # unescaped
        assert p.good != p.bad
    samples = pair_samples(kind, pairs[:2])
    assert [s.id for s in samples] == [f"{kind}-1-good", f"{kind}-1-bad", f"{kind}-2-good", f"{kind}-2-bad"]


def _write(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_bad_pair_files_say_what_is_wrong(tmp_path: Path) -> None:
    _write(tmp_path / "ar.csv", [{"question": "q", "label": "1"}])
    with pytest.raises(LocalevalError, match="missing column"):
        read_pairs(tmp_path / "ar.csv")
    _write(tmp_path / "ar.csv", [{"question": "q", "answer": "a", "label": "1"},
                                 {"question": "q", "answer": "b", "label": "1"}])
    with pytest.raises(LocalevalError, match="second label=1"):
        read_pairs(tmp_path / "ar.csv")
    _write(tmp_path / "ar.csv", [{"question": "q", "answer": "a", "label": "1"}])
    with pytest.raises(LocalevalError, match="no label=0"):
        read_pairs(tmp_path / "ar.csv")
    _write(tmp_path / "ar.csv", [{"question": "q", "answer": "a", "label": "yes"}])
    with pytest.raises(LocalevalError, match="label must be 0 or 1"):
        read_pairs(tmp_path / "ar.csv")


# --- running ------------------------------------------------------------------------------------


def test_run_pairs_on_hand_made_pairs(tmp_path: Path) -> None:
    ctx = "The river Alpha flows into the northern sea. Its delta holds many birds."
    _write(tmp_path / "ff.csv", [
        {"question": "Where does the river Alpha flow?", "context": ctx,
         "answer": "The river Alpha flows into the northern sea.", "label": "1"},
        {"question": "Where does the river Alpha flow?", "context": ctx,
         "answer": "The river Alpha flows into a southern desert lake.", "label": "0"},
        {"question": "What holds many birds?", "context": ctx, "answer": "Its delta holds many birds.",
         "label": "0"},
        {"question": "What holds many birds?", "context": ctx, "answer": "Its delta holds many birds.",
         "label": "1"},
    ])
    _write(tmp_path / "cr.csv", [
        {"question": "Where does the river Alpha flow?", "context": "The river Alpha reaches the sea.",
         "label": "1"},
        {"question": "Where does the river Alpha flow?",
         "context": "The river Alpha reaches the sea.\\nMountains are high and cold places.", "label": "0"},
    ])
    engine = ScriptedEngine(script)
    report = run_pairs(tmp_path, engine, HashEmbedder())
    ff, cr = report.files
    assert (ff.file, ff.metric) == ("ff.csv", "faithfulness")
    assert ff.scores == [(1.0, 0.0), (1.0, 1.0)]  # a win, then a tie
    assert ff.count == PairCount(wins=1, losses=0, ties=1, nan_pairs=0) and ff.accuracy == 0.75
    assert cr.scores == [(1.0, 0.5)]  # the padding sentence shares no word with the question
    assert cr.accuracy == 1.0 and cr.paper == PAPER["context_relevance"]
    labels = {r.label for r in engine.requests}
    assert "context_relevance" in labels and "nli" in labels
    assert report.to_dict()["files"][0]["accuracy"] == 0.75
    # the result names the exact file its labels came from
    assert ff.sha256 == hashlib.sha256((tmp_path / "ff.csv").read_bytes()).hexdigest()
    assert report.to_dict()["files"][1]["sha256"] == hashlib.sha256((tmp_path / "cr.csv").read_bytes()).hexdigest()


def test_run_pairs_reports_each_finished_file_as_it_goes(tmp_path: Path) -> None:
    ctx = "The river Alpha flows into the northern sea."
    _write(tmp_path / "ff.csv", [
        {"question": "Where does Alpha flow?", "context": ctx, "answer": "It flows into the northern sea.",
         "label": "1"},
        {"question": "Where does Alpha flow?", "context": ctx, "answer": "It flows into a desert lake.",
         "label": "0"},
    ])
    _write(tmp_path / "cr.csv", [
        {"question": "Where does Alpha flow?", "context": "Alpha reaches the sea.", "label": "1"},
        {"question": "Where does Alpha flow?", "context": "Alpha reaches the sea.\\nHills are cold.", "label": "0"},
    ])
    seen: list[list[str]] = []
    final = run_pairs(tmp_path, ScriptedEngine(script), HashEmbedder(), files=("ff", "cr"),
                      on_file=lambda r: seen.append([f.file for f in r.files]))
    assert seen == [["ff.csv"], ["ff.csv", "cr.csv"]]
    assert [f.file for f in final.files] == ["ff.csv", "cr.csv"]


def test_run_pairs_offset_takes_later_questions(tmp_path: Path) -> None:
    rows = []
    for q in ("Where does Alpha flow?", "Where does Beta flow?", "Where does Gamma flow?"):
        river = q.split()[2]
        rows += [{"question": q, "context": f"{river} flows into the sea.", "answer": f"{river} flows into the sea.",
                  "label": "1"},
                 {"question": q, "context": f"{river} flows into the sea.", "answer": "It is a desert.", "label": "0"}]
    _write(tmp_path / "ff.csv", rows)
    engine = ScriptedEngine(script)
    report = run_pairs(tmp_path, engine, HashEmbedder(), files=("ff",), offset=1, limit=1)
    assert report.files[0].count.pairs == 1 and report.settings["offset"] == 1
    asked = " ".join(r.messages[-1][1] for r in engine.requests)
    assert "Beta" in asked and "Alpha" not in asked and "Gamma" not in asked
    with pytest.raises(LocalevalError, match="offset"):
        run_pairs(tmp_path, engine, HashEmbedder(), files=("ff",), offset=-1)


def test_run_pairs_on_three_real_pairs() -> None:
    engine = ScriptedEngine(script)
    report = run_pairs(None, engine, HashEmbedder(), limit=3)
    assert [f.file for f in report.files] == ["ff.csv", "ar.csv", "cr.csv"]
    for f in report.files:
        assert f.count.pairs == 3 and len(f.scores) == 3
        assert f.accuracy == count_pairs([g for g, _ in f.scores], [b for _, b in f.scores]).accuracy
        assert f.judge_calls > 0
    table = format_pairs_report(report)
    assert "0.95" in table and "0.78" in table and "0.70" in table and "counts as half" in table
    assert "95% CI" in table and report.to_dict()["files"][0]["accuracy_ci95"] is not None


def test_missing_folder_is_explained(tmp_path: Path) -> None:
    with pytest.raises(LocalevalError, match=r"ff\.csv"):
        run_pairs(tmp_path, ScriptedEngine(script), HashEmbedder())


def test_accuracy_interval_resamples_pairs() -> None:
    assert PairCount(wins=5, losses=0, ties=0, nan_pairs=0).interval() == (1.0, 1.0)
    assert PairCount(wins=1, losses=0, ties=0, nan_pairs=0).interval() is None
    fifty = PairCount(wins=19, losses=19, ties=10, nan_pairs=2)  # the bundled judge on ff.csv
    low, high = fifty.interval()
    assert low < fifty.accuracy == 0.5 < high
    assert 0.2 < high - low < 0.35  # about +-0.14: 50 pairs cannot tell 0.5 from 0.62
    assert fifty.interval() == fifty.interval(seed=0) and fifty.interval(level=0.5)[1] < high
    many = PairCount(wins=190, losses=190, ties=100, nan_pairs=20)
    many_low, many_high = many.interval()
    assert many_high - many_low < (high - low) / 2  # ten times the pairs: about a third of the width
