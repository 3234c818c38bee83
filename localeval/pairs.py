"""Agreement with human labels on WikiEval-style pairs, as in the Ragas paper's Table 1.

A folder holds up to three CSV files, each with one ``label=1`` (better) and one ``label=0`` (worse)
candidate per question:

* ``ff.csv`` (question, context, answer): faithfulness of the answer to the context;
* ``ar.csv`` (question, answer): response relevancy of the answer;
* ``cr.csv`` (question, context): context relevance, the share of the context that helps answer
  the question (the paper's definition: relevant sentences / all sentences). Our context precision
  needs a reference or a response, and this file has neither, so the context is split into
  sentences (``chunk_sentences`` at a time) and the judge decides for each whether it helps answer
  the question; the score is the share judged relevant. A padded context scores lower, which
  average precision would not show when the padding comes last.

A metric agrees with the humans on a pair when it scores the better candidate higher. Pairwise
accuracy counts a tie as half, and so a pair where either score is NaN (reported separately).
"""

from __future__ import annotations

import csv
import math
import re
import time
from collections import Counter
from collections.abc import Callable, Generator, Sequence
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from localeval.config import RunConfig
from localeval.data.sample import Sample
from localeval.errors import LocalevalError
from localeval.metrics.context_precision import precision_at_k_score
from localeval.metrics.faithfulness import supported_ratio
from localeval.metrics.registry import MetricDef, MetricSpec, parse_metric
from localeval.nan import Nan
from localeval.prompts import NLI, STATEMENTS, NLIInput, StatementsInput
from localeval.prompts.base import Prompt, Verdict, verdict_schema, vote_field
from localeval.report.aggregate import bootstrap_mean_ci
from localeval.scheduler import Scheduler, total_usage
from localeval.steps import Ask, Steps
from localeval.store.cache import JudgeCache

if TYPE_CHECKING:
    from localeval.engine.base import JudgeEngine

FILES: dict[str, tuple[str, tuple[str, ...]]] = {  # file stem -> (metric, columns it needs)
    "ff": ("faithfulness", ("question", "context", "answer", "label")),
    "ar": ("answer_relevancy", ("question", "answer", "label")),
    "cr": ("context_relevance", ("question", "context", "label")),
}
PAPER = {"faithfulness": 0.95, "answer_relevancy": 0.78, "context_relevance": 0.70}  # gpt-3.5-turbo-16k
CHANCE = 0.5


def default_pairs_folder() -> Path:
    """The WikiEval pairs shipped inside the package (``localeval/agree/wikieval_pairs``)."""
    return Path(str(resources.files("localeval.agree") / "wikieval_pairs"))


# --- pairwise accuracy: pure arithmetic -------------------------------------------------------------


@dataclass(frozen=True)
class PairCount:
    """How the pairs came out: better candidate higher (win), lower (loss), equal, or NaN on a side."""

    wins: int
    losses: int
    ties: int
    nan_pairs: int

    @property
    def pairs(self) -> int:
        return self.wins + self.losses + self.ties + self.nan_pairs

    @property
    def accuracy(self) -> float:
        """Wins plus half of ties and NaN pairs, over all pairs (NaN when there are none)."""
        if not self.pairs:
            return math.nan
        return (self.wins + 0.5 * (self.ties + self.nan_pairs)) / self.pairs

    def interval(self, level: float = 0.95, resamples: int = 2000, seed: int = 0) -> tuple[float, float] | None:
        """Percentile bootstrap interval of the accuracy, resampling pairs (None under two pairs).

        50 pairs leave about +-0.12 to 0.14 at 95 %: what a judge's figure can and cannot tell apart.
        """
        if self.pairs < 2:
            return None
        credits = [1.0] * self.wins + [0.0] * self.losses + [0.5] * (self.ties + self.nan_pairs)
        return bootstrap_mean_ci(credits, level=level, resamples=resamples, seed=seed)


def _value(score: float | Nan | None) -> float | None:
    if score is None or isinstance(score, Nan) or math.isnan(score):
        return None
    return float(score)


def count_pairs(good: Sequence[float | Nan | None], bad: Sequence[float | Nan | None]) -> PairCount:
    """Compare each better candidate's score with its worse twin's.

    >>> count_pairs([1.0, 0.5, 0.2, None], [0.0, 0.5, 0.9, 0.1])
    PairCount(wins=1, losses=1, ties=1, nan_pairs=1)
    """
    if len(good) != len(bad):
        raise ValueError(f"{len(good)} scores for better candidates but {len(bad)} for worse ones")
    wins = losses = ties = nan_pairs = 0
    for g, b in zip(map(_value, good), map(_value, bad), strict=True):
        if g is None or b is None:
            nan_pairs += 1
        elif g > b:
            wins += 1
        elif g < b:
            losses += 1
        else:
            ties += 1
    return PairCount(wins, losses, ties, nan_pairs)


def pairwise_accuracy(
    scores_good: Sequence[float | Nan | None], scores_bad: Sequence[float | Nan | None]
) -> float:
    """Share of pairs where the better candidate scores higher; a tie or a NaN on either side is half.

    >>> pairwise_accuracy([1.0, 0.5, 0.2, float("nan")], [0.0, 0.5, 0.9, 0.1])
    0.5
    """
    return count_pairs(scores_good, scores_bad).accuracy


# --- reading pair files -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    """One question's two candidates, as dicts of the file's columns."""

    question: str
    good: dict[str, str]
    bad: dict[str, str]


def _clean(text: str) -> str:
    # The public WikiEval CSVs carry newlines as the two characters backslash and n.
    return text.replace("\\n", "\n").strip()


def read_pairs(path: str | Path) -> list[Pair]:
    """The pairs of one file (``ff.csv``, ``ar.csv`` or ``cr.csv``), in the order questions first appear."""
    file = Path(path)
    kind = file.stem
    if kind not in FILES:
        expected = ", ".join(f + ".csv" for f in FILES)
        raise LocalevalError(f"{file}: unknown pair file; expected one of {expected}")
    needed = FILES[kind][1]
    with file.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in needed if c not in (reader.fieldnames or [])]
        if missing:
            raise LocalevalError(f"{file}: missing column(s) {', '.join(missing)}; "
                                 f"{kind}.csv needs {', '.join(needed)}")
        rows = list(reader)
    by_question: dict[str, dict[str, dict[str, str]]] = {}
    for line, row in enumerate(rows, 2):
        label = row["label"].strip()
        if label not in ("0", "1"):
            raise LocalevalError(f"{file}, line {line}: label must be 0 or 1, not {label!r}")
        slot = by_question.setdefault(row["question"].strip(), {})
        if label in slot:
            raise LocalevalError(f"{file}, line {line}: a second label={label} row for question "
                                 f"{row['question'][:60]!r}; each question needs one 1 and one 0")
        slot[label] = {c: _clean(row[c]) for c in needed if c not in ("question", "label")}
    pairs = []
    for question, slot in by_question.items():
        if set(slot) != {"0", "1"}:
            lacking = "0" if "1" in slot else "1"
            raise LocalevalError(f"{file}: question {question[:60]!r} has no label={lacking} row")
        pairs.append(Pair(question, slot["1"], slot["0"]))
    return pairs


# --- context relevance: a share of relevant sentences ----------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
MIN_UNIT_CHARS = 20  # shorter pieces (headings, list items) are joined to the next one


def split_sentences(text: str, per_chunk: int = 1) -> list[str]:
    """Lines, then sentences; short pieces joined to the next; then ``per_chunk`` sentences a chunk.

    >>> split_sentences("Intro\\nThe bee is small. It lives in southern Spain.")
    ['Intro The bee is small.', 'It lives in southern Spain.']
    """
    pieces = [s.strip() for line in text.splitlines() for s in _SENTENCE_END.split(line) if s.strip()]
    units: list[str] = []
    carry = ""
    for piece in pieces:
        carry = f"{carry} {piece}".strip()
        if len(carry) >= MIN_UNIT_CHARS:
            units.append(carry)
            carry = ""
    if carry and units:
        units[-1] = f"{units[-1]} {carry}"
    elif carry:
        units.append(carry)
    return [" ".join(units[i : i + per_chunk]) for i in range(0, len(units), per_chunk)]


class RelevanceInput(BaseModel):
    question: str
    excerpt: str  # last: the asks of one context differ only here


REASON_CHARS = 160

CONTEXT_RELEVANCE: Prompt[RelevanceInput, Verdict] = Prompt(
    name="context_relevance",
    instruction=(
        "You judge one excerpt of a retrieved context. Given a question and the excerpt, decide whether "
        "the excerpt contains information that helps answer the question: verdict 1 if it does, "
        "verdict 0 if it is off-topic or about the same subject but not about what is asked."
    ),
    input_model=RelevanceInput,
    output_model=Verdict,
    examples=(
        (
            RelevanceInput(
                question="When was the Eiffel Tower built, and why?",
                excerpt="It was built from 1887 to 1889 as the entrance arch of the 1889 World's Fair.",
            ),
            Verdict(reason="It gives both the years of construction and the purpose.", verdict=1),
        ),
        (
            RelevanceInput(
                question="When was the Eiffel Tower built, and why?",
                excerpt="The tower is repainted every seven years with about 60 tonnes of paint.",
            ),
            Verdict(reason="About the tower, but not about when or why it was built.", verdict=0),
        ),
    ),
    schema=lambda inp, settings: verdict_schema(settings, REASON_CHARS),
    max_tokens=lambda inp, settings: (REASON_CHARS // 3 + 24) if settings.reasons else 12,
    vote=vote_field(),
)


def context_relevance(sample: Sample, trace: dict) -> Steps:
    """Share of the context's chunks (sentences) the judge finds relevant to the question."""
    assert sample.user_input is not None
    judged = yield [Ask(CONTEXT_RELEVANCE, RelevanceInput(question=sample.user_input, excerpt=c))
                    for c in sample.retrieved_contexts or ()]
    verdicts = [j.verdict for j in judged]
    trace["verdicts"] = verdicts
    trace["reasons"] = [j.reason for j in judged]
    return precision_at_k_score(verdicts)


CONTEXT_RELEVANCE_SPEC = MetricSpec(
    "context_relevance", "context_relevance",
    MetricDef(context_relevance, ("user_input", "retrieved_contexts"), ("retrieved_contexts",),
              summary="share of context sentences judged relevant to the question"),
    {},
)


def merged_faithfulness(question: str, context: str, good: str, bad: str) -> Generator[Any, Any, tuple[Any, Any]]:
    """Faithfulness of two answers to one context with a single NLI ask for both statement lists.

    The layout noise sensitivity uses (both lists against a chunk in one ask, verdicts split back),
    here on ``ff.csv``, whose two answers share their context: the pairs tell whether merging costs
    agreement with humans. Returns the (good, bad) scores.
    """
    extracted = yield [Ask(STATEMENTS, StatementsInput(question=question, answer=a)) for a in (good, bad)]
    lists = [e.statements for e in extracted]
    if not lists[0] and not lists[1]:
        return Nan("no_statements"), Nan("no_statements")
    judged = yield Ask(NLI, NLIInput(context=context, statements=[*lists[0], *lists[1]]))
    verdicts = [v.verdict for v in judged.verdicts]
    split = (verdicts[: len(lists[0])], verdicts[len(lists[0]) :])
    good_score, bad_score = (supported_ratio(v) if statements else Nan("no_statements")
                             for v, statements in zip(split, lists, strict=True))
    return good_score, bad_score


def pair_samples(kind: str, pairs: Sequence[Pair], chunk_sentences: int = 1) -> list[Sample]:
    """Two samples per pair, better first, for the metric that judges ``kind``."""
    samples = []
    for i, pair in enumerate(pairs):
        for side, row in (("good", pair.good), ("bad", pair.bad)):
            sid = f"{kind}-{i + 1}-{side}"
            if kind == "ff":
                samples.append(Sample(sid, pair.question, (row["context"],), row["answer"]))
            elif kind == "ar":
                samples.append(Sample(sid, pair.question, response=row["answer"]))
            else:
                chunks = tuple(split_sentences(row["context"], chunk_sentences)) or (row["context"],)
                samples.append(Sample(sid, pair.question, chunks))
    return samples


# --- running --------------------------------------------------------------------------------------


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

    @property
    def accuracy(self) -> float:
        return self.count.accuracy

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        interval = self.count.interval()
        out.update(accuracy=self.accuracy, accuracy_ci95=list(interval) if interval else None,
                   pairs=self.count.pairs, wall_seconds=round(self.wall_seconds, 3),
                   engine_seconds=round(self.engine_seconds, 3))
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


def _mean(values: list[float | None]) -> float | None:
    valid = [v for v in values if v is not None]
    return sum(valid) / len(valid) if valid else None


def run_pairs(
    folder: str | Path | None = None,
    judge: str | Path | JudgeEngine | None = None,
    embedder: str | Path | Any | None = None,
    limit: int | None = None,
    config: RunConfig | None = None,
    *,
    files: Sequence[str] = ("ff", "ar", "cr"),
    chunk_sentences: int = 1,
    cache: str | Path | None = None,
    progress: bool = False,
    merge_nli: bool = False,
    offset: int = 0,
    on_file: Callable[[PairsReport], None] | None = None,
) -> PairsReport:
    """Score every pair file in ``folder`` (default: the shared WikiEval pairs) and count agreement.

    ``limit``: the first ``limit`` questions of each file, from question ``offset`` (counted from 0).
    ``judge`` and ``embedder``: local model folders (None: the bundled defaults) or engine and
    embedder objects. ``cache``: an SQLite file of judge answers to reuse between runs.
    ``merge_nli``: score ``ff.csv`` with one NLI ask per pair for both answers
    (:func:`merged_faithfulness`). ``on_file``: called with the report so far after each file, so
    that a long run can save what it has measured before it ends.
    """
    from localeval import api  # here, so that importing this module loads no model code

    started = time.perf_counter()
    if offset < 0:
        raise LocalevalError(f"offset must be 0 or more, got {offset}")
    base = Path(folder) if folder is not None else default_pairs_folder()
    present = [f for f in files if (base / f"{f}.csv").is_file()]
    if not present:
        raise LocalevalError(f"{base}: none of {', '.join(f + '.csv' for f in files)} found")
    config = config or RunConfig()
    settings, seed = config.settings, config.seed
    engine = judge if judge is not None and not isinstance(judge, str | Path) else None
    emb = embedder if embedder is not None and not isinstance(embedder, str | Path) else None
    if emb is None and "ar" in present:  # a wrong embedder folder fails before the judge loads
        embedder = api.resolve_model(embedder, "embedder")
    if engine is None:
        engine = api.load_judge(judge, config.engine)  # type: ignore[arg-type]
    if emb is None and "ar" in present:
        emb = api.load_embedder(embedder)
    store = JudgeCache(Path(cache)) if cache is not None else JudgeCache.disabled()
    results: list[FileAgreement] = []

    def report() -> PairsReport:
        return PairsReport(
            folder=str(base), judge=getattr(engine, "fingerprint", None), files=list(results),
            settings={"reasons": settings.reasons, "max_examples": settings.max_examples, "votes": settings.votes,
                      "temperature": settings.temperature if settings.votes > 1 else 0.0, "limit": limit,
                      "offset": offset, "chunk_sentences": chunk_sentences, "seed": seed, "merge_nli": merge_nli},
            wall_seconds=time.perf_counter() - started,
        )

    try:
        for kind in present:
            pairs = read_pairs(base / f"{kind}.csv")[offset:][:limit]
            metric = FILES[kind][0]
            spec = CONTEXT_RELEVANCE_SPEC if kind == "cr" else parse_metric(metric)
            scheduler = Scheduler(engine, emb, store, settings, seed=seed, progress=progress)
            if kind == "ff" and merge_nli:
                file_started = time.perf_counter()
                tasks = [(metric, merged_faithfulness(p.question, p.good["context"], p.good["answer"],
                                                      p.bad["answer"])) for p in pairs]
                both, usages = scheduler.run_tasks(tasks)
                pairs_out = [b if isinstance(b, tuple) else (b, b) for b in both]  # a failed ask: NaN on both
                good, bad = [g for g, _ in pairs_out], [b for _, b in pairs_out]
                outcomes = [*good, *bad]
                usage, wall = total_usage(usages), time.perf_counter() - file_started
            else:
                output = scheduler.run(pair_samples(kind, pairs, chunk_sentences), [spec])
                outcomes = output.outcomes[spec.name]
                good, bad = outcomes[0::2], outcomes[1::2]
                usage, wall = total_usage(output.usage), output.wall_seconds
            results.append(FileAgreement(
                file=f"{kind}.csv", metric=metric, count=count_pairs(good, bad), paper=PAPER.get(metric),
                nan_reasons=dict(Counter(v.reason for v in outcomes if isinstance(v, Nan))),
                mean_good=_mean([_value(v) for v in good]), mean_bad=_mean([_value(v) for v in bad]),
                judge_calls=usage.judge_calls, completion_tokens=usage.completion_tokens,
                engine_seconds=usage.engine_seconds, wall_seconds=wall,
                scores=[(_value(g), _value(b)) for g, b in zip(good, bad, strict=True)],
            ))
            if on_file is not None:
                on_file(report())
    finally:
        store.close()
    return report()


def format_pairs_report(report: PairsReport) -> str:
    """The agreement table, next to the Ragas paper's figures and chance."""
    head = (f"{'file':<7} {'metric':<18} {'pairs':>5} {'accuracy':>8} {'95% CI':>12} {'win':>4} {'loss':>4} {'tie':>4} "
            f"{'NaN':>4} {'good':>6} {'bad':>6} {'paper':>6} {'chance':>6} {'calls':>6} {'seconds':>8}")
    lines = [f"Agreement with human labels on {report.folder}", f"judge: {report.judge}", "",
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
    lines.append(f"total {report.wall_seconds:.1f} s")
    return "\n".join(lines)
