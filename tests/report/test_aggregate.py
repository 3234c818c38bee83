"""Aggregation on hand-computed scores, including the seed's worked example (b2.py)."""

import json
import math

import pytest

from localeval.nan import Nan, NanReason
from localeval.report import aggregate
from localeval.report.aggregate import MetricSummary, bootstrap_mean_ci, format_table, summarize

# The seed's ten faithfulness scores, three of them NaN (given reasons here).
NS, TR = Nan("no_statements"), Nan("truncated")
SEED: list[float | Nan] = [1.0, 0.9, 1.0, 0.8, NS, 1.0, TR, 0.9, NS, 1.0]


def test_seed_worked_example() -> None:
    s = summarize("faithfulness", SEED)
    assert (s.n, s.valid, s.nan_count) == (10, 7, 3)
    assert s.nan_share == pytest.approx(0.3)
    assert s.mean == pytest.approx(6.6 / 7)
    assert f"{s.mean:.3f}" == "0.943"
    assert s.mean_nan_as_zero == pytest.approx(0.66)
    assert s.interval == pytest.approx((0.66, 6.6 / 7))
    # sample std of [1, .9, 1, .8, 1, .9, 1]: squared deviations sum to 0.26/7, over 6 degrees of freedom
    assert s.std == pytest.approx(math.sqrt(0.26 / 7 / 6))


def test_nan_reasons_counted_and_sorted_by_count() -> None:
    values: list[float | Nan] = [
        Nan("truncated"),
        0.5,
        Nan("no_statements"),
        Nan("truncated"),
        Nan("engine_error"),
        Nan("truncated"),
        Nan("no_statements"),
    ]
    s = summarize("m", values)
    assert s.nan_reasons == {"truncated": 3, "no_statements": 2, "engine_error": 1}
    assert list(s.nan_reasons) == ["truncated", "no_statements", "engine_error"]


def test_ties_follow_the_order_of_the_reason_list() -> None:
    s = summarize("m", [Nan("engine_error"), Nan("no_statements"), 1.0])
    assert list(s.nan_reasons) == ["no_statements", "engine_error"]


def test_bare_float_nan_and_none_count_as_undefined() -> None:
    s = summarize("m", [math.nan, None, 0.4])
    assert s.nan_reasons == {"undefined": 2}
    assert s.mean == pytest.approx(0.4)
    assert s.mean_nan_as_zero == pytest.approx(0.4 / 3)


def test_no_nan() -> None:
    s = summarize("m", [0.2, 0.4, 0.6])
    assert s.nan_count == 0 and s.nan_share == 0.0 and s.nan_reasons == {}
    assert s.mean == pytest.approx(0.4)
    assert s.interval == pytest.approx((0.4, 0.4))
    assert s.std == pytest.approx(0.2)


def test_empty() -> None:
    s = summarize("m", [])
    assert (s.n, s.valid, s.nan_count, s.nan_share) == (0, 0, 0, 0.0)
    assert s.mean is None and s.mean_nan_as_zero is None and s.interval is None
    assert s.ci95 is None and s.std is None


def test_all_nan() -> None:
    s = summarize("m", [Nan("truncated"), Nan("truncated")])
    assert (s.n, s.valid, s.nan_share) == (2, 0, 1.0)
    assert s.mean is None and s.interval is None and s.ci95 is None and s.std is None
    assert s.mean_nan_as_zero == 0.0


def test_single_valid_value_has_no_ci_or_std() -> None:
    s = summarize("m", [0.7, Nan("truncated")])
    assert s.mean == pytest.approx(0.7)
    assert s.interval == pytest.approx((0.35, 0.7))
    assert s.ci95 is None and s.std is None


def test_negative_scores_still_count_nan_as_zero() -> None:
    s = summarize("answer_relevancy", [-0.2, Nan("no_questions")])
    assert s.mean == pytest.approx(-0.2)
    assert s.mean_nan_as_zero == pytest.approx(-0.1)
    assert s.interval == pytest.approx((-0.1, -0.2))


def test_ci_contains_mean_and_is_deterministic() -> None:
    s = summarize("faithfulness", SEED)
    assert s.ci95 is not None and s.mean is not None
    assert s.ci95[0] <= s.mean <= s.ci95[1]
    assert 0.8 <= s.ci95[0] < s.ci95[1] <= 1.0
    assert summarize("faithfulness", SEED).ci95 == s.ci95


def test_bootstrap_seed_level_and_edge_cases() -> None:
    values = [0.13, 0.571, 0.9, 0.342, 0.7177, 0.26, 0.8839]
    ci = bootstrap_mean_ci(values)
    assert ci == bootstrap_mean_ci(values)
    assert ci != bootstrap_mean_ci(values, seed=1)
    narrow = bootstrap_mean_ci(values, level=0.5)
    assert ci[0] < narrow[0] <= narrow[1] < ci[1]
    assert bootstrap_mean_ci([0.4, 0.4, 0.4]) == pytest.approx((0.4, 0.4))
    assert bootstrap_mean_ci([0.3]) == pytest.approx((0.3, 0.3))
    with pytest.raises(ValueError):
        bootstrap_mean_ci([])
    with pytest.raises(ValueError):
        bootstrap_mean_ci(values, level=1.0)


def test_bootstrap_in_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    # Large inputs are resampled a block at a time; the answer stays a sensible interval.
    monkeypatch.setattr(aggregate, "_BOOTSTRAP_BLOCK", 50)
    values = [i / 9 for i in range(10)]
    low, high = bootstrap_mean_ci(values, resamples=101)
    assert 0.0 <= low < 0.5 < high <= 1.0


def test_to_dict_is_json_ready() -> None:
    data = summarize("faithfulness", SEED).to_dict()
    assert isinstance(data["interval"], list) and isinstance(data["ci95"], list)
    back = json.loads(json.dumps(data))
    assert back["nan_reasons"] == {"no_statements": 2, "truncated": 1}
    assert MetricSummary(**{**back, "interval": tuple(back["interval"]), "ci95": tuple(back["ci95"])}) == (
        summarize("faithfulness", SEED)
    )


def test_format_table() -> None:
    table = format_table(
        [
            summarize("faithfulness", SEED),
            summarize("context_recall", [Nan("invalid_output")]),
            summarize("answer_relevancy", [0.5, 0.25]),
        ]
    )
    lines = table.splitlines()
    assert all(len(line) <= 100 and line == line.rstrip() for line in lines)
    assert table.isascii()  # no escape codes, no box characters a narrow terminal encoding cannot print
    header = lines[0]
    assert header.split() == ["metric", "mean", "valid/n", "NaN", "%", "(reasons)", "range", "95%", "CI"]
    assert set(lines[1]) == {"-"} and len(lines[1]) == len(header)
    row = lines[2]
    assert row.startswith("faithfulness")
    for text in ("0.943", "7/10", "30% (no_statements 2, truncated 1)", "[0.660, 0.943]"):
        assert text in row
    # numbers align right, under the right end of their header
    for name, value in (("mean", "0.943"), ("valid/n", "7/10"), ("range", "[0.660, 0.943]")):
        assert row.index(value) + len(value) == header.index(name) + len(name)
    recall = next(line for line in lines if line.startswith("context_recall"))
    assert "0/1" in recall and "100% (invalid_output 1)" in recall
    relevancy = next(line for line in lines if line.startswith("answer_relevancy"))
    assert "0.375" in relevancy and "2/2" in relevancy and "[0.375, 0.375]" in relevancy
    assert lines[-1] == "range: [mean with NaN as 0, mean on valid]; the true mean lies between the two."
    assert len(lines) == 6  # header, rule, one line a metric, the note


def test_format_table_wraps_many_reasons_within_width() -> None:
    reasons: list[NanReason] = [
        "no_statements",
        "no_claims",
        "no_questions",
        "invalid_output",
        "truncated",
        "engine_error",
        "context_too_long",
        "missing_field",
        "undefined",
    ]
    s = summarize("a_rather_long_metric_name", [0.5, *(Nan(r) for r in reasons)])
    table = format_table([s])
    lines = table.splitlines()
    assert all(len(line) <= 100 for line in lines)
    assert max(len(line) for line in lines) == 100  # the reasons column takes what the others leave
    for reason in reasons:
        assert f"{reason} 1" in table  # a reason and its count never split across lines
    column = lines[0].index("NaN % (reasons)")
    row, *more = lines[2:-1]
    assert row.startswith("a_rather_long_metric_name") and row[column:].startswith("90% (no_statements 1,")
    assert "[0.050, 0.500]" in row and "1/10" in row and "0.500" in row
    assert len(more) >= 2  # wrapped, each further line indented one under the column
    assert all(line[:column + 1].strip() == "" and line[column + 1] != " " for line in more)
    assert more[-1].endswith("undefined 1)")


def test_format_table_widens_rather_than_cutting_a_long_name() -> None:
    name = "factual_correctness(mode=precision, atomicity=high, coverage=high, beta=1.0)"
    table = format_table([summarize(name, [Nan("truncated"), 0.5])], width=60)
    row = table.splitlines()[2]
    assert row.startswith(name) and "50% (truncated 1)" in row and "[0.250, 0.500]" in row


def test_percent_never_rounds_to_zero_or_full() -> None:
    assert "<1%" in format_table([summarize("m", [Nan("truncated"), *[1.0] * 299])])
    assert ">99%" in format_table([summarize("m", [1.0, *[Nan("truncated")] * 299])])


def test_a_large_sample_of_few_values_is_resampled_as_counts_with_the_same_interval() -> None:
    import numpy as np

    from localeval.report import aggregate

    rng = np.random.default_rng(3)
    values = rng.choice([0.0, 0.25, 0.5, 1.0], size=40_000, p=[0.2, 0.1, 0.3, 0.4])
    low, high = aggregate.bootstrap_mean_ci(values)  # the counts path: 4 distinct values
    by_index = aggregate.resampled(values.size, lambda d: values[d].mean(axis=1), resamples=2000, seed=0,
                                   block_cells=4_000_000)
    index_low, index_high = aggregate.percentile_interval(by_index, 0.95)
    width = high - low
    se = values.std() / np.sqrt(values.size)
    assert abs(width - 2 * 1.96 * se) < 0.1 * width  # the normal interval's width, within Monte Carlo error
    assert abs(low - index_low) < 0.1 * width and abs(high - index_high) < 0.1 * width
    assert low < values.mean() < high
    assert aggregate.bootstrap_mean_ci(values) == (low, high)  # seeded
    many = rng.random(40_000)  # 40,000 distinct values: drawn by index as before
    assert aggregate.bootstrap_mean_ci(many) != aggregate.bootstrap_mean_ci(many, seed=1)
