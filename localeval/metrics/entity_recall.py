"""Context entity recall: the share of the reference's named entities that the retrieved contexts name."""

from __future__ import annotations

from collections.abc import Sequence

from localeval.data.sample import Sample
from localeval.prompts.entities import ENTITIES, EntitiesInput
from localeval.steps import Ask, Steps

EPSILON = 1e-8  # Ragas' epsilon: no reference entity scores 0.0, not NaN


def entity_recall_score(reference_entities: Sequence[str], context_entities: Sequence[str]) -> float:
    """Distinct reference entities also among the context's (exact text), over distinct reference entities.

    >>> entity_recall_score(["Paris", "1889", "Paris"], ["Paris", "Eiffel"])
    0.4999999975
    """
    reference = set(reference_entities)
    return len(reference & set(context_entities)) / (len(reference) + EPSILON)


def context_entity_recall(sample: Sample, trace: dict) -> Steps:
    """Extract entities from the reference and from the joined contexts (two asks), then compare them."""
    assert sample.reference is not None
    context = "\n".join(sample.retrieved_contexts or ())
    extracted = yield [Ask(ENTITIES, EntitiesInput(text=sample.reference)), Ask(ENTITIES, EntitiesInput(text=context))]
    reference, found = extracted[0].entities, extracted[1].entities
    trace["reference_entities"] = reference
    trace["context_entities"] = found
    trace["missing_entities"] = sorted(set(reference) - set(found))
    return entity_recall_score(reference, found)
