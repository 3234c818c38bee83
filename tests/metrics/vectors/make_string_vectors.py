"""Conformance vectors for the model-free string metrics: Ragas 0.4.3's own classes on fixed and seeded inputs.

Runs only in Ragas' environment (``bash benchmarks/ragas/setup_ragas.sh``, which also installs the three
libraries these metrics use; see README-strings.md):

    benchmarks/.ragas-venv/bin/python tests/metrics/vectors/make_string_vectors.py \\
        --out tests/metrics/vectors/ragas-0.4.3-strings.jsonl

Classes: ``ragas.metrics.collections`` for ``ExactMatch``, ``StringPresence``, ``NonLLMStringSimilarity``,
``BleuScore``, ``RougeScore``, ``CHRFScore`` and ``QuotedSpansAlignment`` (each pair metric is also run
through its legacy ``ragas.metrics`` class, and the two must agree); ``ragas.metrics`` for
``NonLLMContextPrecisionWithReference`` and ``NonLLMContextRecall``, which 0.4.3 has only there. None needs a
judge or an embedder. One JSON object a line: ``metric`` (localeval's name), ``params`` (localeval's option
names, Ragas' values), ``inputs`` (sample fields), ``expected`` (Ragas' value; ``null`` where Ragas returned
NaN or raised, which its ``evaluate()`` scores as NaN).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import typing as t
from pathlib import Path

from ragas.dataset_schema import SingleTurnSample
from ragas.metrics import BleuScore as LegacyBleu
from ragas.metrics import ChrfScore as LegacyChrf
from ragas.metrics import ExactMatch as LegacyExact
from ragas.metrics import NonLLMContextPrecisionWithReference, NonLLMContextRecall
from ragas.metrics import NonLLMStringSimilarity as LegacySimilarity
from ragas.metrics import RougeScore as LegacyRouge
from ragas.metrics import StringPresence as LegacyPresence
from ragas.metrics._string import DistanceMeasure as LegacyMeasure
from ragas.metrics.collections import (
    BleuScore,
    CHRFScore,
    ExactMatch,
    NonLLMStringSimilarity,
    QuotedSpansAlignment,
    RougeScore,
    StringPresence,
)
from ragas.metrics.collections._string import DistanceMeasure

MEASURES = ("levenshtein", "hamming", "jaro", "jaro_winkler")

# (reference, response): empty and blank texts, casing, whitespace, sentences split on ". ", unicode, stemming.
PAIRS: list[tuple[str, str]] = [
    ("", ""),
    ("Paris", ""),
    ("", "Paris"),
    ("   ", "   "),
    (" \t\n", "Paris"),
    ("Paris", "Paris"),
    ("Paris", "paris"),
    ("Paris", " Paris "),
    ("Paris", "Paris\n"),
    ("The capital of France is Paris.", "Paris is the capital of France."),
    ("The capital of France is Paris.", "The capital of France is Paris"),
    ("The capital of France is Paris.", "The capital of France is Paris."),
    ("The capital of France is Paris.", "THE CAPITAL OF FRANCE IS PARIS."),
    ("The cat sat on the mat. The dog ran in the park.", "The cat sat on the mat. A dog ran."),
    ("The cat sat on the mat.", "The cat sat on the mat. The dog barked at the mailman."),
    ("The Eiffel Tower was completed in 1889. It is 330 metres tall. It stands in Paris.",
     "The Eiffel Tower, finished in 1889, stands in Paris"),
    ("It stands in Paris", "The Eiffel Tower was completed in 1889. It stands in Paris. It is tall."),
    ("Café au lait à Zürich", "Cafe au lait a Zurich"),
    ("東京は日本の首都です。", "日本の首都は東京です。"),
    ("I love 🍕 and 🍣", "I love 🍕"),
    ("Ünïcödé text. Second sentence here", "ünïcödé text. second sentence here"),
    ("running runs ran quickly", "run running runner quick"),
    ("The studies were conducted by researchers", "The study was conducted by a researcher"),
    ("abc", "abcd"),
    ("kitten", "sitting"),
    ("MARTHA", "MARHTA"),
    ("DIXON", "DICKSONX"),
    ("prefix shared here", "prefix shared there"),
    ("The quick brown fox jumps over the lazy dog", "The quick brown fox jumped over the lazy dog"),
    ("The tower is 330 metres tall, built in 1889.", "It is 330 m tall and was built in 1889."),
    ("line one\nline two", "line one line two"),
    ("Eiffel", "The Eiffel Tower is in Paris."),
    ("Eiffel tower", "The Eiffel Tower is in Paris."),
    ("in Paris.", "The Eiffel Tower is in Paris."),
    ("The Eiffel Tower is in Paris. It was built for the 1889 World's Fair",
     "The Eiffel Tower is in Paris. It was built for the 1889 World's Fair"),
    ("a. b. c. d", "a. b. c. d"),
    ("...", "..."),
    ("Yes", "No"),
]

WORDS = ["the", "tower", "was", "built", "in", "paris", "for", "fair", "iron", "metres", "tall", "gustave", "eiffel",
         "designed", "it", "river", "seine", "visitors", "each", "year", "france", "europe", "stands", "near", "city"]


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(1, 12))]
    return " ".join(words).capitalize()


def _perturb(rng: random.Random, text: str) -> str:
    """A variant of text: words dropped, swapped or replaced, casing or spacing changed."""
    words = text.split(" ")
    for _ in range(rng.randint(0, 3)):
        kind, i = rng.choice(("drop", "swap", "replace", "case", "space")), rng.randrange(len(words))
        if kind == "drop" and len(words) > 1:
            words.pop(i)
        elif kind == "swap":
            j = rng.randrange(len(words))
            words[i], words[j] = words[j], words[i]
        elif kind == "replace":
            words[i] = rng.choice(WORDS)
        elif kind == "case":
            words[i] = words[i].upper()
        elif kind == "space":
            words[i] += " "
    return " ".join(words)


def random_pairs(rng: random.Random, n: int) -> list[tuple[str, str]]:
    out = []
    for _ in range(n):
        reference = ". ".join(_sentence(rng) for _ in range(rng.randint(1, 3))) + rng.choice(("", "."))
        response = (". ".join(_perturb(rng, s) for s in reference.split(". ")) if rng.random() < 0.7
                    else ". ".join(_sentence(rng) for _ in range(rng.randint(1, 3))))
        out.append((reference, response))
    return out


async def _pair_scores(reference: str, response: str) -> list[tuple[str, dict, t.Any]]:
    """(metric, params, Ragas' value) for every pair metric and option value; legacy classes must agree."""
    sample = SingleTurnSample(reference=reference, response=response)
    runs: list[tuple[str, dict, t.Any, t.Any]] = [
        ("exact_match", {}, ExactMatch(), LegacyExact()),
        ("string_presence", {}, StringPresence(), LegacyPresence()),
        *[("non_llm_string_similarity", {"distance_measure": m},
           NonLLMStringSimilarity(distance_measure=DistanceMeasure(m)),
           LegacySimilarity(distance_measure=LegacyMeasure(m))) for m in MEASURES],
        ("bleu_score", {}, BleuScore(), LegacyBleu()),
        *[("rouge_score", {"rouge_type": r, "mode": mode}, RougeScore(rouge_type=r, mode=mode),  # type: ignore[arg-type]
           LegacyRouge(rouge_type=r, mode=mode))  # type: ignore[arg-type]
          for r in ("rouge1", "rougeL") for mode in ("fmeasure", "precision", "recall")],
        ("chrf_score", {}, CHRFScore(), LegacyChrf()),
    ]
    out = []
    for metric, params, current, legacy in runs:
        value = await score_or_nan(current.ascore(reference=reference, response=response))
        old = await score_or_nan(legacy.single_turn_ascore(sample))
        if not _same(value, old):
            raise SystemExit(f"{metric} {params}: collections {value} != legacy {old} on {reference!r}, {response!r}")
        out.append((metric, params, value))
    return out


async def score_or_nan(awaitable: t.Awaitable[t.Any]) -> float | None:
    try:
        result = await awaitable
    except Exception:  # Ragas' evaluate() scores a raising sample as NaN
        return None
    value = float(getattr(result, "value", result))
    return None if math.isnan(value) else value


def _same(a: float | None, b: float | None) -> bool:
    return a == b


# (response, retrieved_contexts): quotes of every kind Ragas' pattern knows, spacing and casing, spans split
# across contexts, apostrophes, empty quotes and lists.
QUOTES: list[tuple[str, list[str]]] = [
    ("", ["anything at all"]),
    ("No quotes in this answer at all.", ["The results are significant."]),
    ('He said "the results are significant".', ["The results are significant according to the paper."]),
    ('He said "The Results Are Significant".', ["the results are significant according to the paper."]),
    ('He said "the results   are\nsignificant".', ["The results are  significant, the paper says."]),
    ("Quoted: “machine learning models improve accuracy” and ‘data quality matters most’.",
     ["Machine learning models improve accuracy by 15%.", "Nothing about data here."]),
    ("Quoted: „the tower is tall‟ and `built in the year 1889` and ´a famous iron lattice´.",
     ["The tower is tall and was built in the year 1889.", "It is a famous iron lattice tower."]),
    ('Mixed "opening and closing” quotes here.', ["opening and closing quotes"]),
    ('Across contexts: "stands in Paris France".', ["The tower stands in Paris", "France is in Europe."]),
    ('It\'s said "the tower is tall" and "it was never painted red".', ["The tower is tall.", "Painted brown."]),
    ('Short "hi" and "ok then" and "this one is long enough".', ["this one is long enough, hi, ok then"]),
    ('Empty "" quotes and "" again.', ["Empty quotes"]),
    ('"the results are significant"', []),
    ('"the results are significant" and "results are not significant"', ["", "  "]),
    ('Unicode "Café au lait à Zürich" and "東京 は 日本 の 首都"',
     ["Café au lait à Zürich is nice", "東京 は 日本 の 首都 です"]),
    ('Unclosed "quote that never ends', ["quote that never ends"]),
    ("Single 'quoted words in here' too.", ["Quoted words in here, yes."]),
    ('He wrote "die große Straße hier" once.', ["DIE GROSSE STRASSE HIER", "die große straße hier"]),
    ('He wrote "die große Straße dort" once.', ["DIE GROSSE STRASSE DORT"]),  # lower(), not casefold()
    ('Spaces: "no\u00a0break\u2003em space here"', ["No break em  space here."]),
    ('Three "one two three" spans "four five six" and "seven eight nine".',
     ["One two three.", "four five six seven eight", "nine"]),
]


def random_quotes(rng: random.Random, n: int) -> list[tuple[str, list[str]]]:
    out = []
    for _ in range(n):
        contexts = [_sentence(rng) + "." for _ in range(rng.randint(0, 4))]
        spans = []
        for _ in range(rng.randint(0, 4)):
            if contexts and rng.random() < 0.6:
                words = rng.choice(contexts).rstrip(".").split()
                start = rng.randrange(len(words))
                spans.append(" ".join(words[start:start + rng.randint(1, 6)]))
            else:
                spans.append(_perturb(rng, _sentence(rng)))
        opener, closer = rng.choice((('"', '"'), ("“", "”"), ("'", "'"), ("‘", "’"), ("`", "´")))
        out.append((" and ".join(f"{opener}{s}{closer}" for s in spans) or "nothing quoted", contexts))
    return out


async def _quote_scores(response: str, contexts: list[str]) -> list[tuple[str, dict, t.Any]]:
    out = []
    for casefold in (True, False):
        for words in (0, 1, 2, 3, 5):
            metric = QuotedSpansAlignment(casefold=casefold, min_span_words=words)
            value = await score_or_nan(metric.ascore(response=response, retrieved_contexts=contexts))
            out.append(("quoted_spans_alignment", {"casefold": casefold, "min_span_words": words}, value))
    return out


# (retrieved_contexts, reference_contexts): empty lists, repeats, unicode, similarities exactly at a threshold.
CONTEXTS: list[tuple[list[str], list[str]]] = [
    ([], []),
    ([], ["The tower is in Paris."]),
    (["The tower is in Paris."], []),
    (["The tower is in Paris."], ["The tower is in Paris."]),
    (["abcd"], ["abxy"]),  # Levenshtein similarity exactly 0.5
    (["abcd", "wxyz"], ["abxy", "abcd"]),
    (["wxyz", "abcd", "abcd"], ["abcd"]),
    (["", "The tower is in Paris."], ["The tower is in Paris.", ""]),
    (["Café au lait à Zürich", "東京は日本の首都です。"], ["Cafe au lait a Zurich", "日本の首都は東京です。"]),
    (["The Eiffel Tower is in Paris.", "Bananas are yellow.", "It was built in 1889."],
     ["The Eiffel Tower is located in Paris.", "The tower was completed in 1889."]),
    (["Bananas are yellow.", "The sky is blue.", "The Eiffel Tower is in Paris."],
     ["The Eiffel Tower is in Paris, France."]),
]
THRESHOLDS = (0.0, 0.3, 0.5, 0.8, 1.0)


def random_contexts(rng: random.Random, n: int) -> list[tuple[list[str], list[str]]]:
    out = []
    for _ in range(n):
        reference = [_sentence(rng) for _ in range(rng.randint(1, 4))]
        retrieved = [_perturb(rng, rng.choice(reference)) if rng.random() < 0.5 else _sentence(rng)
                     for _ in range(rng.randint(1, 6))]
        out.append((retrieved, reference))
    return out


async def _context_scores(retrieved: list[str], reference: list[str], rng: random.Random,
                          every: bool) -> list[tuple[str, dict, t.Any]]:
    """Both metrics on every measure; every threshold for the fixed cases, two drawn ones for the random."""
    sample = SingleTurnSample(retrieved_contexts=retrieved, reference_contexts=reference)
    thresholds = THRESHOLDS if every else sorted({0.5, rng.choice(THRESHOLDS[:2] + THRESHOLDS[3:])})
    out = []
    for measure in MEASURES:
        for threshold in thresholds:
            params = {"distance_measure": measure, "threshold": threshold}
            precision = NonLLMContextPrecisionWithReference(
                distance_measure=LegacySimilarity(distance_measure=LegacyMeasure(measure)), threshold=threshold)
            recall = NonLLMContextRecall(threshold=threshold)
            recall.distance_measure = LegacyMeasure(measure)  # type: ignore[assignment]  # Ragas' setter
            out.append(("non_llm_context_precision", params,
                        await score_or_nan(precision.single_turn_ascore(sample))))
            out.append(("non_llm_context_recall", params, await score_or_nan(recall.single_turn_ascore(sample))))
    return out


async def cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    out: list[dict] = []
    for reference, response in PAIRS + random_pairs(rng, 24):
        for metric, params, value in await _pair_scores(reference, response):
            out.append({"metric": metric, "params": params,
                        "inputs": {"reference": reference, "response": response}, "expected": value})
    for response, contexts in QUOTES + random_quotes(rng, 16):
        for metric, params, value in await _quote_scores(response, contexts):
            out.append({"metric": metric, "params": params,
                        "inputs": {"response": response, "retrieved_contexts": contexts}, "expected": value})
    fixed = len(CONTEXTS)
    for i, (retrieved, reference) in enumerate(CONTEXTS + random_contexts(rng, 20)):
        for metric, params, value in await _context_scores(retrieved, reference, rng, every=i < fixed):
            out.append({"metric": metric, "params": params,
                        "inputs": {"retrieved_contexts": retrieved, "reference_contexts": reference},
                        "expected": value})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "ragas-0.4.3-strings.jsonl")
    parser.add_argument("--seed", type=int, default=45)
    args = parser.parse_args()
    rows = asyncio.run(cases(args.seed))
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    print(f"wrote {len(rows)} cases to {args.out}")


if __name__ == "__main__":
    main()
