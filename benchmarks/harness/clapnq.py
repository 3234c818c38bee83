"""Benchmark samples from the ClapNQ dev set, deterministic for a seed, at any size.

Each sample: a ClapNQ question; as retrieved contexts its gold passage at a random rank among
``top_k`` passages, the others drawn from other rows; the human answer as reference; as response
the human answer, or for a ``wrong_share`` of the rows another row's answer (a wrong answer the
metrics should catch). ``unanswerable_share`` of the rows may come from the unanswerable file: the
gold passage does not answer the question, the reference and the right response say so.

    python -m benchmarks.harness.clapnq --n 50 --seed 0 --top-k 3 --out clapnq_50.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DATA = REPO / "benchmarks" / "data" / "clapnq"
ANSWERABLE = "dev_answerable.jsonl"
UNANSWERABLE = "dev_unanswerable.jsonl"
NO_ANSWER = "The passages do not say; this question cannot be answered from them."


@dataclass(frozen=True)
class Row:
    """One ClapNQ record: question, its passage and, when answerable, the first annotator's answer."""

    id: str
    question: str
    title: str
    passage: str
    answer: str  # "" when unanswerable

    @property
    def passage_id(self) -> str:
        return f"clapnq:{self.id}"

    @property
    def context(self) -> str:
        return f"{self.title}\n{self.passage}"


def read_rows(path: Path) -> list[Row]:
    """The rows of one ClapNQ JSONL file, in file order."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        passage = record["passages"][0]
        answers = [o.get("answer", "") for o in record.get("output", [])]
        rows.append(Row(str(record["id"]), record["input"], passage["title"], passage["text"],
                        next((a for a in answers if a), "")))
    return rows


def _load(data: Path) -> tuple[list[Row], list[Row]]:
    files = [data / ANSWERABLE, data / UNANSWERABLE]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise FileNotFoundError(f"ClapNQ file(s) not found: {', '.join(missing)}; pass --data DIR "
                                "(the folder holding dev_answerable.jsonl and dev_unanswerable.jsonl)")
    return read_rows(files[0]), read_rows(files[1])


def _draw(rows: list[Row], count: int, rng: random.Random) -> list[tuple[Row, int]]:
    """``count`` rows (and how many times each was drawn before): a shuffled pass, then more passes."""
    out: list[tuple[Row, int]] = []
    passes = 0
    while len(out) < count and rows:
        order = rows[:]
        rng.shuffle(order)
        out.extend((r, passes) for r in order[: count - len(out)])
        passes += 1
    return out


def build_samples(
    n: int,
    seed: int = 0,
    top_k: int = 3,
    wrong_share: float = 0.3,
    unanswerable_share: float = 0.0,
    data: str | Path = DEFAULT_DATA,
) -> list[dict[str, Any]]:
    """``n`` samples as dicts with Ragas' field names (plus ``answerable``, ``response_kind``, ``gold_rank``).

    The same arguments give the same samples. Exactly ``round(n * wrong_share)`` samples get a wrong
    response and ``round(n * unanswerable_share)`` come from the unanswerable file. Beyond 300
    answerable rows, questions repeat with new distractors and ranks (their ids get ``#2``, ``#3``...).
    """
    if n < 1 or top_k < 1:
        raise ValueError("n and top_k must be at least 1")
    if not 0 <= wrong_share <= 1 or not 0 <= unanswerable_share <= 1:
        raise ValueError("wrong_share and unanswerable_share must be between 0 and 1")
    answerable, unanswerable = _load(Path(data))
    rng = random.Random(seed)
    n_unanswerable = round(n * unanswerable_share)
    chosen = [*_draw(answerable, n - n_unanswerable, rng), *_draw(unanswerable, n_unanswerable, rng)]
    rng.shuffle(chosen)
    wrong = set(rng.sample(range(n), round(n * wrong_share)))
    pool = answerable + unanswerable  # distractor passages come from any row
    answers = [r for r in answerable if r.answer]
    samples = []
    for i, (row, repeat) in enumerate(chosen):
        distractors = _distractors(row, pool, top_k - 1, rng)
        rank = rng.randrange(top_k)
        passages = [*distractors[:rank], row, *distractors[rank:]]
        if i in wrong:
            other = rng.choice([a for a in answers if a.question != row.question and a.answer != row.answer])
            response, kind = other.answer, "wrong"
        else:
            response, kind = (row.answer, "human") if row.answer else (NO_ANSWER, "refusal")
        samples.append({
            "id": f"{row.id}#{repeat + 1}" if repeat else row.id,
            "user_input": row.question,
            "retrieved_contexts": [p.context for p in passages],
            "response": response,
            "reference": row.answer or NO_ANSWER,
            "retrieved_context_ids": [p.passage_id for p in passages],
            "reference_context_ids": [row.passage_id] if row.answer else [],
            "answerable": bool(row.answer),
            "response_kind": kind,
            "gold_rank": rank + 1,
        })
    return samples


def _distractors(row: Row, pool: list[Row], count: int, rng: random.Random) -> list[Row]:
    """``count`` passages of other rows: not the same passage, nor another passage of its article."""
    picked: list[Row] = []
    seen = {row.passage, row.title}
    while len(picked) < count:
        candidate = pool[rng.randrange(len(pool))]
        if candidate.passage in seen or candidate.title in seen:
            continue
        seen.update((candidate.passage, candidate.title))
        picked.append(candidate)
    return picked


def write_jsonl(samples: list[dict[str, Any]], path: str | Path) -> Path:
    """Write samples as JSON lines (the format ``localeval evaluate`` reads)."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in samples), encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build benchmark samples from the ClapNQ dev set.")
    parser.add_argument("--n", type=int, default=10, help="number of samples")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--top-k", type=int, default=3, help="retrieved passages per sample, gold included")
    parser.add_argument("--wrong-share", type=float, default=0.3, help="share with a wrong response")
    parser.add_argument("--unanswerable-share", type=float, default=0.0)
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="folder with the ClapNQ dev files")
    parser.add_argument("--out", default="-", help="JSONL file to write ('-': standard output)")
    args = parser.parse_args(argv)
    samples = build_samples(args.n, args.seed, args.top_k, args.wrong_share, args.unanswerable_share,
                            args.data)
    if args.out == "-":
        for s in samples:
            sys.stdout.write(json.dumps(s, ensure_ascii=False) + "\n")
    else:
        print(f"wrote {len(samples)} samples to {write_jsonl(samples, args.out)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
