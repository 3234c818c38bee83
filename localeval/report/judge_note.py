"""The note on a run the bundled toy judge scored: its scores are for trying localeval, not a measure of quality.

``localeval models prepare`` builds SmolLM2-135M-Instruct so that everything runs anywhere in minutes; on the
WikiEval pairs it ranks the better candidate first no better than chance. A run records who judged it (summary.json's
``run.judge``: the engine's fingerprint, which names the model folder, or the model a server serves); where
that is the bundled judge, the printed summary, ``localeval evaluate``'s last lines and report.html say so.
A run with another judge, or with no judge metric (``run.judge`` is None), gets no note.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from localeval.model_folders.weight_packages import DEFAULT_JUDGE

JUDGE_DOCS = "docs/trusting-the-judge.md, 'Choosing a real judge'"
BEST_CPU_JUDGE = "qwen2.5-coder-1.5b-instruct"  # the best judge `models prepare NAME` builds for a CPU
TOY_NOTE = (f"note: the bundled toy judge ({DEFAULT_JUDGE}) scored this run: it is there to try localeval, and "
            "its scores say nothing about the quality of your system. For a real evaluation put a capable "
            f"instruct model in the models folder and pass --judge NAME ({JUDGE_DOCS}). The best CPU judge "
            f"localeval builds, `localeval models prepare {BEST_CPU_JUDGE}`, measures faithfulness in --judge-mode "
            "small (it ranks the faithful answer first on 0.82 of held-out WikiEval pairs); check it on your own "
            "labels before you trust its other metrics.")


def toy_judge(info: Mapping[str, Any]) -> bool:
    """Whether the run record says the bundled default judge answered (by the model its fingerprint names)."""
    judge = info.get("judge")
    return isinstance(judge, str) and DEFAULT_JUDGE in judge.lower()


def toy_judge_lines(info: Mapping[str, Any]) -> list[str]:
    """The printed summary's closing lines on a toy judge's run (a blank line, then the note); [] otherwise."""
    return ["", TOY_NOTE] if toy_judge(info) else []


def toy_judge_html(info: Mapping[str, Any]) -> str:
    """The report's warning under its title on a toy judge's run; "" otherwise."""
    if not toy_judge(info):
        return ""
    return (f"<div class=finding><b>Scored by the bundled toy judge</b> ({escape(DEFAULT_JUDGE)}): it is there to "
            "try localeval, and these scores say nothing about the quality of your system. For a real "
            "evaluation put a capable instruct model in the models folder and pass <code>--judge NAME</code> "
            f"({escape(JUDGE_DOCS)}). The best CPU judge localeval builds ({escape(BEST_CPU_JUDGE)}) is not shown "
            "to measure anything either.</div>")
