"""Rich tables as plain text: no escape codes even when colour is forced, right-aligned numbers, no cut cells."""

from __future__ import annotations

from localeval.report.plain import KeptTogether, plain_table, plain_text


def test_plain_even_when_colour_is_forced(monkeypatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    text = plain_text(plain_table(("name", "count"), [("alpha", "7"), ("b", "1234")], right=(1,)), width=100)
    assert text.isascii() and "\x1b" not in text
    assert text.splitlines() == ["name   count", "------------", "alpha      7", "b       1234"]


def test_kept_together_wraps_only_at_ordinary_spaces() -> None:
    cell = KeptTogether("10% (alpha\u00a01, beta\u00a02, gamma\u00a03)")
    lines = plain_text(plain_table(("x", "why"), [("a", cell)]), width=18).splitlines()
    assert all(len(line) <= 18 for line in lines)
    assert lines[2:] == ["a  10% (alpha 1,", "    beta 2,", "    gamma 3)"]


def test_a_table_too_wide_for_the_width_is_widened_not_cut() -> None:
    text = plain_text(plain_table(("metric", "n"), [("x" * 70, "3")], right=(1,)), width=40)
    assert text.splitlines()[2] == "x" * 70 + "  3"
