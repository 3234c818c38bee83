"""Model-free metrics of the response's text: against the reference (exact match, string presence, string
similarity, BLEU, ROUGE, chrF) and against the contexts (quoted spans). Ragas 0.4.3's arithmetic; the
libraries it uses do the counting: rapidfuzz, sacrebleu and rouge-score, each imported where it is used."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from localeval.data.sample import Sample
from localeval.nan import Nan
from localeval.steps import Outcome, no_asks

MEASURES = ("levenshtein", "hamming", "jaro", "jaro_winkler")
ROUGE_TYPES = ("rouge1", "rougeL")
ROUGE_MODES = ("fmeasure", "precision", "recall")


def similarity(reference: str, response: str, measure: str = "levenshtein") -> float:
    """1 minus rapidfuzz's normalised distance: 1.0 for equal texts (two empty ones too), case and spaces count.

    >>> similarity("kitten", "sitting")
    0.5714285714285714
    """
    from rapidfuzz import distance

    kinds = {"levenshtein": distance.Levenshtein, "hamming": distance.Hamming, "jaro": distance.Jaro,
             "jaro_winkler": distance.JaroWinkler}
    return 1 - kinds[measure].normalized_distance(reference, response)


def bleu(reference: str, response: str) -> float:
    """sacrebleu's corpus BLEU over 100, as Ragas calls it.

    Ragas splits both texts on ``". "`` and passes each reference sentence as a reference stream of one
    segment, so there is one segment: sacrebleu scores the response's first sentence alone, against every
    reference sentence as an alternative reference. That is what this does (default tokenizer ``13a``,
    exponential smoothing, no effective order: a first sentence under four words scores 0.0).
    """
    from sacrebleu import corpus_bleu

    first_sentence = response.split(". ")[0]
    alternatives = [[sentence] for sentence in reference.split(". ")]
    return float(corpus_bleu([first_sentence], alternatives).score / 100)


@lru_cache(maxsize=len(ROUGE_TYPES))
def _rouge_scorer(rouge_type: str) -> Any:
    from rouge_score.rouge_scorer import RougeScorer

    return RougeScorer([rouge_type], use_stemmer=True)


def rouge(reference: str, response: str, rouge_type: str = "rougeL", mode: str = "fmeasure") -> float:
    """rouge-score's ROUGE-1 or ROUGE-L with the Porter stemmer; its tokenizer lowercases and keeps only
    ASCII letters and digits, so a text of other characters has no tokens and scores 0.0."""
    score = _rouge_scorer(rouge_type).score(reference, response)[rouge_type]
    return float(getattr(score, mode))


def chrf(reference: str, response: str) -> float:
    """sacrebleu's chrF (character 6-grams, beta 2) over 100; 0.0 when either text is empty or blank."""
    if not reference.strip() or not response.strip():
        return 0.0
    from sacrebleu import corpus_chrf

    return float(corpus_chrf([response], [[reference]]).score / 100)


QUOTE_MARKS = "\"'`\u00b4\u201c\u201d\u201e\u201f\u2018\u2019"  # any of them opens a span, any closes it
_QUOTED = re.compile(f"[{re.escape(QUOTE_MARKS)}](.*?)[{re.escape(QUOTE_MARKS)}]")


def _plain(text: str) -> str:
    """Runs of whitespace as one space, ends trimmed, lowercased (``str.lower``: ß stays ß)."""
    return " ".join(text.split()).lower()


def quoted_spans(response: str, min_span_words: int = 3) -> list[str]:
    """The spans between two quote marks on one line, trimmed, of at least ``min_span_words`` words.

    >>> quoted_spans('He said "the results are significant" and "yes".')
    ['the results are significant']
    """
    spans = (m.group(1).strip() for m in _QUOTED.finditer(response))
    return [span for span in spans if len(span.split()) >= min_span_words]


def spans_found(spans: Sequence[str], contexts: Sequence[str], casefold: bool = True) -> list[bool]:
    """Whether each span is a substring of the contexts joined by spaces; ``casefold`` compares both with
    whitespace collapsed and lowercased, else as they are. An empty span is never found."""
    joined = " ".join(contexts)
    if casefold:
        joined = _plain(joined)
    return [bool(key) and key in joined for key in (_plain(s) if casefold else s for s in spans)]


def _texts(sample: Sample) -> tuple[str, str] | None:
    if sample.reference is None or sample.response is None:
        return None
    return sample.reference, sample.response


def _pair(sample: Sample, score: Any, *options: str) -> Outcome:
    texts = _texts(sample)
    return Nan("missing_field") if texts is None else score(*texts, *options)


@no_asks
def exact_match(sample: Sample, trace: dict) -> Outcome:
    """1.0 when the response is the reference, character for character (case and whitespace count), else 0.0."""
    return _pair(sample, lambda reference, response: float(reference == response))


@no_asks
def string_presence(sample: Sample, trace: dict) -> Outcome:
    """1.0 when the reference occurs in the response as it is (case counts; an empty reference always does),
    else 0.0."""
    return _pair(sample, lambda reference, response: float(reference in response))


@no_asks
def non_llm_string_similarity(sample: Sample, trace: dict, distance_measure: str = "levenshtein") -> Outcome:
    """1 minus the normalised edit distance between reference and response (rapidfuzz): `levenshtein`,
    `hamming` (the shorter text padded), `jaro` or `jaro_winkler`. Two empty texts score 1.0."""
    return _pair(sample, similarity, distance_measure)


@no_asks
def bleu_score(sample: Sample, trace: dict) -> Outcome:
    """sacrebleu's BLEU over 100, with Ragas' sentence split: both texts are split on ". ", and only the
    response's first sentence is scored, against each reference sentence as an alternative reference."""
    return _pair(sample, bleu)


@no_asks
def rouge_score(sample: Sample, trace: dict, rouge_type: str = "rougeL", mode: str = "fmeasure") -> Outcome:
    """ROUGE-1 (unigram overlap) or ROUGE-L (longest common subsequence) of response against reference, with
    rouge-score's Porter stemmer; its tokenizer keeps ASCII letters and digits only, lowercased."""
    return _pair(sample, rouge, rouge_type, mode)


@no_asks
def chrf_score(sample: Sample, trace: dict) -> Outcome:
    """sacrebleu's chrF (character n-gram F-score) over 100; 0.0 when the response or reference is blank."""
    return _pair(sample, chrf)


@no_asks
def quoted_spans_alignment(sample: Sample, trace: dict, casefold: str = "true", min_span_words: int = 3) -> Outcome:
    """Share of the response's quoted spans (of `min_span_words` words or more, in straight or curly quotes,
    backticks or acute accents) found verbatim in the retrieved contexts joined by spaces; with `casefold`
    true both sides are lowercased with whitespace collapsed. A response that quotes nothing scores 1.0."""
    if sample.response is None or sample.retrieved_contexts is None:
        return Nan("missing_field")
    spans = quoted_spans(sample.response, min_span_words)
    found = spans_found(spans, sample.retrieved_contexts, casefold == "true")
    trace["statements"], trace["verdicts"] = spans, [int(f) for f in found]
    return sum(found) / len(found) if found else 1.0
