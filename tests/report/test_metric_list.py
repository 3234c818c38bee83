"""``localeval metrics``: one aligned row per metric, options in words, aliases, plain text when piped."""

from __future__ import annotations

import io
import re

import pytest

from localeval.cli import main
from localeval.metrics.definition import MetricDef
from localeval.metrics.registry import ALIASES, METRICS
from localeval.report.metric_list import CRITERIA_ROW, _needs, alias_rows, metric_rows, print_metrics

ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(autouse=True)
def no_forced_colour(monkeypatch):
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)


def _listing(capsys) -> list[str]:
    assert main(["metrics"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out.splitlines()


def test_piped_output_is_plain_text(capsys) -> None:
    lines = _listing(capsys)
    assert not any(ESCAPE.search(line) for line in lines)
    assert all(line == line.rstrip() for line in lines)  # no padding to the terminal width
    assert max(map(len, lines)) <= 80


def test_one_row_per_metric_starting_in_the_first_column(capsys) -> None:
    lines = _listing(capsys)
    aliases_at = lines.index("Aliases")
    starts = [line.split()[0] for line in lines[:aliases_at] if line.startswith("  ") and line[2] != " "]
    names = [s for s in starts if s in METRICS]
    assert names == list(METRICS)
    alias_lines = [line.split() for line in lines[aliases_at:] if line.startswith("  ") and line[2] != " "]
    assert [parts[0] for parts in alias_lines[1:]] == list(ALIASES)  # after the header row


def test_the_needed_fields_line_up_under_their_header(capsys) -> None:
    lines = _listing(capsys)
    header_at = next(i for i, line in enumerate(lines) if "needs (sample fields)" in line)
    column = lines[header_at].index("needs (sample fields)")
    body = lines[header_at + 2:lines.index("Aliases")]
    body = body[:next(i for i, line in enumerate(body) if line.startswith("* "))]
    cells = [line[column:].split("  ")[0] for line in body]
    assert all(line[:column].endswith(" ") or not line[column:] for line in body)
    fields = [cell for cell in cells if cell and cell != CRITERIA_ROW[2]]  # a criterion's fields: its file's
    assert set(fields) <= {"user_input", "retrieved_contexts", "response", "reference", "reference_contexts",
                           "retrieved_context_ids", "reference_context_ids", "user_input (conversation)",
                           "reference_tool_calls", "reference_topics", "rubrics"}
    assert len(fields) == sum(len(d.required) for d in METRICS.values())


def test_options_are_in_words_not_python_values(capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # wide enough that no option wraps
    text = "\n".join(_listing(capsys))
    assert "None" not in text and "{" not in text
    assert text.count("k: 1 or more, or all (default all ranks)") == 4  # precision_at_k, hit_rate, mrr, ndcg
    assert "mode: f1 | precision | recall (default f1)" in text
    assert "noise_sensitivity:mode=irrelevant" in text  # an alias as --metrics takes it
    assert "question -> user_input" in text and "answer -> response" in text


def test_rows_hold_the_registry() -> None:
    rows = {name.rstrip(" *"): row for name, *row in metric_rows()}
    assert list(rows) == [*METRICS, CRITERIA_ROW[0]]  # the registry, then how to pass a criterion of your own
    assert "(judge + embedder)" in rows["answer_correctness"][0] and "(embedder)" in rows["semantic_similarity"][0]
    summary, needs, options = rows["factual_correctness"]
    assert needs.split("\n") == ["response", "reference"] and "(judge)" in summary
    assert options.split("\n")[0] == "mode: f1 | precision | recall (default f1)"
    assert rows["ndcg"][2] == "k: 1 or more, or all (default all ranks)"
    assert "(no model)" in rows["ndcg"][0] and "(judge + embedder)" in rows["answer_relevancy"][0]
    assert rows["faithfulness"][2] == "-"
    assert dict(alias_rows())["response_relevancy"] == "answer_relevancy"


def test_a_conversation_is_read_from_user_input() -> None:
    agent = MetricDef(lambda sample, trace: iter(()), ("conversation", "reference_tool_calls", "reference_topics",
                                                       "rubrics"), ("reference_topics",))
    assert _needs(agent).split("\n") == ["user_input (conversation)", "reference_tool_calls", "reference_topics",
                                          "rubrics"]


def test_options_stand_under_the_summary_indented(capsys) -> None:
    lines = _listing(capsys)
    at = next(i for i, line in enumerate(lines) if line.startswith("  factual_correctness"))
    assert any(line.startswith("    mode: f1 | precision | recall (default f1)") for line in lines[at:at + 6])


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_styles_and_a_pipe_does_not() -> None:
    terminal, pipe = _Terminal(), io.StringIO()
    print_metrics(terminal)
    print_metrics(pipe)
    assert ESCAPE.search(terminal.getvalue()) and not ESCAPE.search(pipe.getvalue())
    assert ESCAPE.sub("", terminal.getvalue()).split() == pipe.getvalue().split()


def test_a_metric_whose_small_judge_mode_asks_the_embedder_says_so() -> None:
    from localeval.report.metric_list import metric_rows

    faithfulness = next(row for row in metric_rows() if row[0].rstrip(" *") == "faithfulness")
    assert faithfulness[1].endswith("(judge; + embedder with --judge-mode small)")
    relevancy = next(row for row in metric_rows() if row[0].rstrip(" *") == "answer_relevancy")
    assert relevancy[1].endswith("(judge + embedder)")
