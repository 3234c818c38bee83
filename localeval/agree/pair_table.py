"""The pairs' results per file and the agreement table, next to the Ragas paper's figures and chance."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from localeval.agree.pair_count import PairCount

PAPER = {"faithfulness": 0.95, "answer_relevancy": 0.78, "context_relevance": 0.70}  # gpt-3.5-turbo-16k
CHANCE = 0.5


@dataclass
class FileAgreement:
    """One pair file's result."""

    file: str
    metric: str
    count: PairCount
    paper: float | None
    nan_reasons: dict[str, int]
    mean_good: float | None
    mean_bad: float | None
    judge_calls: int
    completion_tokens: int
    engine_seconds: float
    wall_seconds: float
    scores: list[tuple[float | None, float | None]] = field(repr=False)  # (better, worse) per pair
    # Soft verdicts (--soft): the same pairs on the soft scores of the same answers (a missing one is NaN).
    soft_count: PairCount | None = None
    soft_scores: list[tuple[float | None, float | None]] | None = field(default=None, repr=False)
    sha256: str | None = None  # the pair file's, so a result says which labels it was counted against

    @property
    def accuracy(self) -> float:
        return self.count.accuracy

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        interval = self.count.interval()
        out.update(accuracy=self.accuracy, accuracy_ci95=list(interval) if interval else None,
                   pairs=self.count.pairs, wall_seconds=round(self.wall_seconds, 3),
                   engine_seconds=round(self.engine_seconds, 3))
        if self.soft_count is not None:
            soft = self.soft_count.interval()
            out.update(soft_accuracy=self.soft_count.accuracy, soft_accuracy_ci95=list(soft) if soft else None)
        return out


@dataclass
class PairsReport:
    """Agreement per pair file, with what the judge and the run were."""

    folder: str
    judge: str | None
    files: list[FileAgreement]
    settings: dict[str, Any]
    wall_seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"folder": self.folder, "judge": self.judge, "settings": self.settings,
                "wall_seconds": round(self.wall_seconds, 3), "chance": CHANCE,
                "files": [f.to_dict() for f in self.files]}



def format_pairs_report(report: PairsReport) -> str:
    """The agreement table, next to the Ragas paper's figures and chance."""
    head = (f"{'file':<7} {'metric':<18} {'pairs':>5} {'accuracy':>8} {'95% CI':>12} {'win':>4} {'loss':>4} {'tie':>4} "
            f"{'NaN':>4} {'good':>6} {'bad':>6} {'paper':>6} {'chance':>6} {'calls':>6} {'seconds':>8}")
    lines = [f"Agreement with the pair files' labels on {report.folder}", f"judge: {report.judge}", "",
             head, "-" * len(head)]

    def num(v: float | None, width: int = 6) -> str:
        return f"{v:>{width}.2f}" if v is not None and not math.isnan(v) else f"{'-':>{width}}"

    for f in report.files:
        c, interval = f.count, f.count.interval()
        ci = f"[{interval[0]:.2f}, {interval[1]:.2f}]" if interval else "-"
        lines.append(f"{f.file:<7} {f.metric:<18} {c.pairs:>5} {num(f.accuracy, 8)} {ci:>12} {c.wins:>4} "
                     f"{c.losses:>4} {c.ties:>4} {c.nan_pairs:>4} {num(f.mean_good)} {num(f.mean_bad)} "
                     f"{num(f.paper)} {num(CHANCE)} {f.judge_calls:>6} {f.wall_seconds:>8.1f}")
    lines.append("")
    lines.append("accuracy: pairs where the label=1 candidate scores higher; a tie, or NaN on either side, "
                 "counts as half. 95% CI: bootstrap over pairs. good/bad: mean score of each side. paper: Ragas "
                 "paper, gpt-3.5-turbo-16k.")
    for f in report.files:
        if f.nan_reasons:
            reasons = ", ".join(f"{k} {v}" for k, v in sorted(f.nan_reasons.items()))
            lines.append(f"{f.file}: {sum(f.nan_reasons.values())} NaN score(s): {reasons}")
    for f in report.files:
        if f.soft_count is not None:
            c, interval = f.soft_count, f.soft_count.interval()
            ci = f"[{interval[0]:.2f}, {interval[1]:.2f}]" if interval else "-"
            lines.append(f"{f.file}: soft verdicts (p(1) in place of 0/1): accuracy {num(c.accuracy, 0)} {ci}, "
                         f"win {c.wins}, loss {c.losses}, tie {c.ties}, NaN {c.nan_pairs} "
                         f"(hard: accuracy {num(f.accuracy, 0)}, tie {f.count.ties})")
    lines.append(f"total {report.wall_seconds:.1f} s")
    return "\n".join(lines)
