"""Reading WikiEval-style pair files: one ``label=1`` (better) and one ``label=0`` (worse) row per question.

* ``ff.csv`` (question, context, answer): faithfulness of the answer to the context;
* ``ar.csv`` (question, answer): response relevancy of the answer;
* ``cr.csv`` (question, context): context relevance, the context split into sentences.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from localeval.data.sample import Sample
from localeval.errors import LocalevalError
from localeval.metrics.context_relevance import split_sentences

FILES: dict[str, tuple[str, tuple[str, ...]]] = {  # file stem -> (metric, columns it needs)
    "ff": ("faithfulness", ("question", "context", "answer", "label")),
    "ar": ("answer_relevancy", ("question", "answer", "label")),
    "cr": ("context_relevance", ("question", "context", "label")),
}


def default_pairs_folder() -> Path:
    """The WikiEval pairs shipped inside the package (``localeval/agree/wikieval_pairs``)."""
    return Path(str(resources.files("localeval.agree") / "wikieval_pairs"))


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

