"""SQL semantic equivalence (Ragas 0.4.3's ``SQLSemanticEquivalence``): 1.0 when the judge finds that the
response's query returns what the reference query returns on the database schema, else 0.0.

The schema is the reference contexts joined with newlines (empty when the sample has none). Ragas raises
ValueError on a blank response or reference; here that is ``Nan("missing_field")`` with no ask.
"""

from __future__ import annotations

from localeval.data.sample import Sample
from localeval.nan import Nan
from localeval.prompts.sql import SQL_EQUIVALENCE, SqlInput
from localeval.steps import Ask, Steps


def sql_semantic_equivalence(sample: Sample, trace: dict) -> Steps:
    """One ask: both queries and the schema; the verdict as 1.0 or 0.0."""
    response, reference = sample.response, sample.reference
    if not response or not response.strip() or not reference or not reference.strip():
        return Nan("missing_field")
    schema = "\n".join(sample.reference_contexts) if sample.reference_contexts else ""
    judged = yield Ask(SQL_EQUIVALENCE, SqlInput(database_schema=schema, reference=reference, response=response))
    trace.update(equivalent=bool(judged.equivalent), response_explanation=judged.response_explanation,
                 reference_explanation=judged.reference_explanation)
    return 1.0 if judged.equivalent else 0.0
