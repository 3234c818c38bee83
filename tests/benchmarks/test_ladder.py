"""The ladder's rows come from the runs' JSON as they are; the small mode's halves pool pair by pair."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.quality.ladder import pool, rows


def _agree(path: Path, scores: list[list[float]], soft: list[list[float]], seconds: float) -> Path:
    def count(pairs: list[list[float]]) -> dict[str, int]:
        return {"wins": sum(g > b for g, b in pairs), "losses": sum(g < b for g, b in pairs),
                "ties": sum(g == b for g, b in pairs), "nan_pairs": 0}

    run = {"judge": "transformers:qwen2.5-coder-1.5b-instruct@abc:bfloat16:invariant",
           "settings": {"judge_mode": "small"},
           "files": [{"file": "ff.csv", "count": count(scores), "scores": scores, "soft_count": count(soft),
                      "soft_scores": soft, "wall_seconds": seconds}]}
    path.write_text(json.dumps({"pairs": run}))
    return path


def test_a_row_gives_the_counts_and_seconds_a_pair_of_the_run(tmp_path: Path) -> None:
    run = _agree(tmp_path / "r.json", [[1.0, 0.5], [0.5, 1.0], [1.0, 1.0], [0.9, 0.1]],
                 [[0.9, 0.4], [0.2, 0.8], [0.7, 0.6], [0.8, 0.3]], seconds=40.0)
    (row,) = rows(run)
    assert row.startswith("| qwen2.5-coder-1.5b-instruct | small | ff | 0.62 [")
    assert "(2 / 1 / 1)" in row and "0.75 [" in row and "(3 / 1 / 0)" in row and "| 10.0 |" in row


def test_the_two_halves_pool_into_one_figure_over_all_their_pairs(tmp_path: Path) -> None:
    tuning = tmp_path / "tune.json"
    samples = [{"id": "ff-1-good", "score": 1.0, "trace": {"soft_score": 0.9}},
               {"id": "ff-1-bad", "score": 0.0, "trace": {"soft_score": 0.1}},
               {"id": "ff-2-good", "score": "nan", "trace": {}},
               {"id": "ff-2-bad", "score": 0.5, "trace": {"soft_score": 0.5}}]
    tuning.write_text(json.dumps({"lines": ["30 s, 15.0 s a pair, 2 engine calls"], "samples": samples}))
    held_out = _agree(tmp_path / "h.json", [[0.0, 1.0], [1.0, 0.0]], [[0.1, 0.9], [0.8, 0.2]], seconds=50.0)
    row = pool(tuning, held_out)
    assert "| 0.62 [" in row and "(2 / 1 / 1)" in row  # tuning: a win, a NaN pair; held out: a loss, a win
    assert "| 20.0 |" in row  # (30 + 50) s over 4 pairs
