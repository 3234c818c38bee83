"""The ladder's rows come from the runs' JSON, counted against the shipped labels: a result made on the files as
first copied (the label column the shuffled positions) has its pairs turned round where the better candidate
held the first row; the small mode's halves pool pair by pair."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from benchmarks.quality.ladder import SOURCE_SHA256, _better_first, pool, relabelled, rows
from localeval.agree.pair_files import default_pairs_folder

SHIPPED = hashlib.sha256((default_pairs_folder() / "ff.csv").read_bytes()).hexdigest()


def _agree(path: Path, scores: list[list[float]], soft: list[list[float]], seconds: float, sha256: str | None,
           offset: int = 0) -> Path:
    run = {"judge": "transformers:qwen2.5-coder-1.5b-instruct@abc:bfloat16:invariant",
           "settings": {"judge_mode": "small", "offset": offset},
           "files": [{"file": "ff.csv", "scores": scores, "soft_scores": soft, "wall_seconds": seconds,
                      **({"sha256": sha256} if sha256 else {})}]}
    path.write_text(json.dumps({"pairs": run}))
    return path


def test_a_row_on_the_shipped_labels_gives_the_counts_and_seconds_a_pair_of_the_run(tmp_path: Path) -> None:
    run = _agree(tmp_path / "r.json", [[1.0, 0.5], [0.5, 1.0], [1.0, 1.0], [0.9, 0.1]],
                 [[0.9, 0.4], [0.2, 0.8], [0.7, 0.6], [0.8, 0.3]], seconds=40.0, sha256=SHIPPED)
    (row,) = rows(run)
    assert row.startswith("| qwen2.5-coder-1.5b-instruct | small | ff | 0.62 [")
    assert "(2 / 1 / 1)" in row and "0.75 [" in row and "(3 / 1 / 0)" in row and "| 10.0 |" in row


def test_a_result_on_the_copied_positions_is_turned_round_where_the_better_candidate_came_first() -> None:
    first = _better_first("ff.csv")
    assert 0 < sum(first) < 50
    scores = [(float(i), -float(i)) for i in range(10)]  # as counted then: (second row, first row)
    for sha256 in (None, SOURCE_SHA256["ff.csv"]):
        turned = relabelled("ff.csv", scores, 20, sha256)
        assert turned == [((b, g) if first[20 + i] else (g, b)) for i, (g, b) in enumerate(scores)]
    assert relabelled("ff.csv", scores, 20, SHIPPED) == scores


def test_the_two_halves_pool_into_one_figure_over_all_their_pairs(tmp_path: Path) -> None:
    first = _better_first("ff.csv")
    tuning = tmp_path / "tune.json"
    # pair 1 as copied: the second row scored 1.0, the first 0.0; pair 2 a NaN
    samples = [{"id": "ff-1-good", "score": 1.0, "trace": {"soft_score": 0.9}},
               {"id": "ff-1-bad", "score": 0.0, "trace": {"soft_score": 0.1}},
               {"id": "ff-2-good", "score": "nan", "trace": {}},
               {"id": "ff-2-bad", "score": 0.5, "trace": {"soft_score": 0.5}}]
    tuning.write_text(json.dumps({"args": {"offset": 0}, "lines": ["30 s, 15.0 s a pair, 2 engine calls"],
                                  "samples": samples}))
    held_out = _agree(tmp_path / "h.json", [[0.0, 1.0], [1.0, 0.0]], [[0.1, 0.9], [0.8, 0.2]], seconds=50.0,
                      sha256=SHIPPED, offset=25)
    row = pool(tuning, held_out)
    wins = 1 + (not first[0])  # held out: a loss and a win; tuning pair 1 a win unless its better row came first
    assert f"({wins} / {3 - wins} / 1)" in row and "| 20.0 |" in row  # (30 + 50) s over 4 pairs
