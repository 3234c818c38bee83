"""Model-free context precision and recall: retrieved contexts against reference contexts by string
similarity (``strings.similarity``) and a threshold, with Ragas 0.4.3's arithmetic."""

from __future__ import annotations

from collections.abc import Sequence

from localeval.data.sample import Sample
from localeval.metrics.context_precision import average_precision
from localeval.metrics.strings import similarity
from localeval.nan import Nan
from localeval.steps import Outcome, no_asks

SHOWN_CHARS = 120  # a reference context in the trace: its start


def closest(
    texts: Sequence[str], others: Sequence[str], measure: str, *, retrieved_first: bool
) -> list[tuple[int, float]]:
    """Per text, the index of the most similar of ``others`` and that similarity (the first on a tie).

    ``similarity`` always takes the retrieved context first, as Ragas calls it.
    """
    out = []
    for text in texts:
        scores = [similarity(text, o, measure) if retrieved_first else similarity(o, text, measure) for o in others]
        best = max(range(len(scores)), key=scores.__getitem__)
        out.append((best, scores[best]))
    return out


def _record(trace: dict, best: list[tuple[int, float]], verdicts: list[int], what: str, signs: tuple[str, str],
            threshold: float) -> None:
    trace["verdicts"] = verdicts
    trace["reasons"] = [f"closest {what}: {i + 1}, similarity {s:.4f} {signs[0] if v else signs[1]} {threshold}"
                        for (i, s), v in zip(best, verdicts, strict=True)]


@no_asks
def non_llm_context_precision(sample: Sample, trace: dict, distance_measure: str = "levenshtein",
                              threshold: float = 0.5) -> Outcome:
    """Each retrieved context is relevant when its similarity to the closest reference context is at least
    `threshold` (1 minus the normalised `distance_measure`, as in `non_llm_string_similarity`); the score is
    the average precision of those verdicts in rank order (Ragas' epsilon included, so no relevant context,
    or no retrieved context, gives 0.0)."""
    retrieved, reference = sample.retrieved_contexts, sample.reference_contexts
    if retrieved is None or reference is None or (retrieved and not reference):
        return Nan("missing_field")  # Ragas raises when there is no reference context to compare with
    best = closest(retrieved, reference, distance_measure, retrieved_first=True)
    verdicts = [int(s >= threshold) for _, s in best]
    _record(trace, best, verdicts, "reference context", (">=", "<"), threshold)
    return average_precision(verdicts)


@no_asks
def non_llm_context_recall(sample: Sample, trace: dict, distance_measure: str = "levenshtein",
                           threshold: float = 0.5) -> Outcome:
    """Share of reference contexts whose closest retrieved context has a similarity above `threshold`
    (strictly: a similarity equal to it is a miss, where precision counts it) by the `distance_measure`.
    Ragas cannot score a sample without reference or retrieved contexts (NaN, or it raises)."""
    retrieved, reference = sample.retrieved_contexts, sample.reference_contexts
    if retrieved is None or reference is None or (reference and not retrieved):
        return Nan("missing_field")  # Ragas raises when there is no retrieved context to compare with
    if not reference:
        return Nan("undefined")  # Ragas: 0/0 gives NaN
    best = closest(reference, retrieved, distance_measure, retrieved_first=False)
    verdicts = [int(s > threshold) for _, s in best]
    trace["statements"] = [text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "…" for text in reference]
    _record(trace, best, verdicts, "retrieved context", (">", "<="), threshold)
    return sum(verdicts) / len(verdicts)
