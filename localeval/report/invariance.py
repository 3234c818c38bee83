"""A run's batch invariance as summary.json records it (``run.invariance``), read back and said in words.

Batch-invariant: the judge's answer to an ask depends on the ask alone, not on the asks that share its batch.
Where it is not, a rerun or another run may answer an identical ask differently; one judge cache shared by
the runs of a comparison (``--cache FILE``) serves such an ask the answer it got first, in every run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from html import escape
from typing import Any

from localeval.errors import LocalevalError

NO_JUDGE = "no judge was asked: no metric of this run needs one"
SHARE_CACHE = ("to compare two runs, run both with one shared --cache FILE: an ask the first run answered is "
               "served the same answer in the second (docs/trusting-the-judge.md: Runs you can compare)")


@dataclass(frozen=True)
class RunInvariance:
    """Whether a run's judge was batch-invariant, and what it said."""

    batch_invariant: bool
    note: str

    def as_words(self) -> str:
        """One line for a table of facts: yes or no, then the engine's note."""
        said = "yes" if self.batch_invariant else "no"
        return f"{said} ({self.note})"


def run_invariance(info: Mapping[str, Any]) -> RunInvariance:
    """What a run record (summary.json's ``run``) says of its judge's batch invariance."""
    record = info.get("invariance")
    if isinstance(record, Mapping) and isinstance(record.get("batch_invariant"), bool):
        return RunInvariance(record["batch_invariant"], str(record.get("note") or ""))
    raise LocalevalError("summary.json: the run record says nothing of batch invariance; it was written by another "
                         "localeval version, rerun evaluate")


def invariance_warning(info: Mapping[str, Any]) -> str | None:
    """The printed summary's line when the run's judge is not batch-invariant; None when it is."""
    said = run_invariance(info)
    if said.batch_invariant:
        return None
    return (f"warning: the judge is not batch-invariant ({said.note}): an ask's answer can depend on the asks "
            f"that share its batch, so another run may answer an identical ask differently; {SHARE_CACHE}")


def invariance_html(info: Mapping[str, Any]) -> str:
    """The report's line under its title: batch-invariant or not; a visible warning when not."""
    said = run_invariance(info)
    if said.batch_invariant is False:
        return (f"<div class=finding><b>The judge is not batch-invariant</b> ({escape(said.note)}): an ask's answer "
                "can depend on the asks that share its batch, so another run may answer an identical ask "
                f"differently; {escape(SHARE_CACHE)}.</div>")
    return f"<p class=muted>Batch-invariant judge: {escape(said.as_words())}.</p>"
