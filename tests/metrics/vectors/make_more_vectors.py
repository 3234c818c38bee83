"""Conformance vectors for the metrics after the first seven: Ragas 0.4.3's own classes on scripted answers.

Runs only in Ragas' environment, ``benchmarks/.ragas-venv`` (``bash benchmarks/ragas/setup_ragas.sh``):

    benchmarks/.ragas-venv/bin/python tests/metrics/vectors/make_more_vectors.py \\
        --out tests/metrics/vectors/ragas-0.4.3-more.jsonl

Context entity recall, answer accuracy, context relevance, response groundedness, answer correctness and
semantic similarity run end to end (``ascore``) with a judge that answers exactly the case's entities,
ratings, statements or TP/FP/FN lists and an embedder that returns the case's vectors. For criteria:
the rubric score (``DomainSpecificRubrics.ascore``) end to end, and the aspect critic's vote arithmetic
(``AspectCritic._compute_score`` on the case's verdicts, with the strictness Ragas makes odd), because
its ``_ascore`` asks once whatever the strictness. Same line format as ``ragas-0.4.3-wide.jsonl``.
"""

from __future__ import annotations

import random
import typing as t

from make_wide_vectors import (
    REFERENCE,
    RESPONSE,
    USER_INPUT,
    Case,
    Plan,
    ScriptedLLM,
    TableEmbedding,
    bits,
    names,
    plan_build,
)
from make_wide_vectors import main as write_cases
from ragas.metrics import AspectCritic
from ragas.metrics._aspect_critic import AspectCriticOutput
from ragas.metrics.collections import (
    AnswerAccuracy,
    AnswerCorrectness,
    ContextEntityRecall,
    ContextRelevance,
    DomainSpecificRubrics,
    ResponseGroundedness,
    SemanticSimilarity,
)

POOL = ["Paris", "1889", "Gustave Eiffel", "France", "Seine", "330 metres", "World's Fair", "iron", "Europe"]


def entity_case(rng: random.Random) -> Case:
    reference = [rng.choice(POOL) for _ in range(rng.randint(0, 6))]  # repeats: Ragas counts distinct ones
    context = [rng.choice(POOL) for _ in range(rng.randint(0, 8))]

    def answer(data: dict, model: type) -> dict:
        return {"entities": reference if data["text"] == REFERENCE else context}

    inputs = {"reference_entities": reference, "context_entities": context}
    kwargs = {"reference": REFERENCE, "retrieved_contexts": ["ctx 0", "ctx 1"]}
    return {}, inputs, ContextEntityRecall(llm=ScriptedLLM(answer)), kwargs


def accuracy_case(rng: random.Random) -> Case:
    first, second = rng.choice((0, 2, 4)), rng.choice((0, 2, 4))

    def answer(data: dict, model: type) -> dict:  # judge 2 gets response and reference swapped
        return {"rating": first if data["user_answer"] == RESPONSE else second}

    kwargs = {"user_input": USER_INPUT, "response": RESPONSE, "reference": REFERENCE}
    return {}, {"ratings": [first, second]}, AnswerAccuracy(llm=ScriptedLLM(answer)), kwargs


def _two_judges(ratings: list[int]) -> t.Callable[[dict, type], dict]:
    calls = iter(ratings)  # Ragas asks judge 1, then judge 2

    def answer(data: dict, model: type) -> dict:
        return {"rating": next(calls)}

    return answer


def relevance_case(rng: random.Random) -> Case:
    ratings = [rng.choice((0, 1, 2)), rng.choice((0, 1, 2))]
    kind = rng.choice(("judged",) * 6 + ("equal", "inside", "blank"))
    contexts = {"judged": ["ctx 0", "ctx 1"], "equal": [USER_INPUT], "inside": ["user"], "blank": [" ", ""]}[kind]
    inputs = {"ratings": ratings, "retrieved_contexts": contexts}
    metric = ContextRelevance(llm=ScriptedLLM(_two_judges(ratings)))
    return {}, inputs, metric, {"user_input": USER_INPUT, "retrieved_contexts": contexts}


def groundedness_case(rng: random.Random) -> Case:
    ratings = [rng.choice((0, 1, 2)), rng.choice((0, 1, 2))]
    kind = rng.choice(("judged",) * 7 + ("blank response", "blank context"))
    response = "  " if kind == "blank response" else RESPONSE
    contexts = [" "] if kind == "blank context" else ["ctx 0", "ctx 1"]
    inputs = {"ratings": ratings, "response": response, "retrieved_contexts": contexts}
    metric = ResponseGroundedness(llm=ScriptedLLM(_two_judges(ratings)))
    return {}, inputs, metric, {"response": response, "retrieved_contexts": contexts}


def vector(rng: random.Random, dim: int, zero: float = 0.08) -> list[float]:
    if rng.random() < zero:
        return [0.0] * dim
    return [round(rng.uniform(-1, 1), 3) for _ in range(dim)]


def correctness_case(rng: random.Random) -> Case:
    response_v, reference_v = bits(rng, rng.randint(0, 8)), bits(rng, rng.randint(0, 8))
    beta = rng.choice((0.5, 1.0, 1.0, 2.0, round(rng.uniform(0.3, 3.0), 2)))
    weight = rng.choice((0.25, 0.25, 0.0, 0.5, 1.0, round(rng.uniform(0, 1), 2)))
    dim = rng.randint(2, 12)
    table = {RESPONSE: vector(rng, dim), REFERENCE: vector(rng, dim)}

    def answer(data: dict, model: type) -> dict:
        if "statements" in model.model_fields:
            is_response = data["answer"] == RESPONSE
            return {"statements": names("response st" if is_response else "reference st",
                                        len(response_v if is_response else reference_v))}
        items = [f"response st {i}" for i, v in enumerate(response_v) if v]
        wrong = [f"response st {i}" for i, v in enumerate(response_v) if not v]
        missed = [f"reference st {i}" for i, v in enumerate(reference_v) if not v]
        as_list = lambda xs: [{"statement": s, "reason": "scripted"} for s in xs]  # noqa: E731
        return {"TP": as_list(items), "FP": as_list(wrong), "FN": as_list(missed)}

    params = {"beta": beta, "weight": weight}
    inputs = {"response_verdicts": response_v, "reference_verdicts": reference_v,
              "response_vector": table[RESPONSE], "reference_vector": table[REFERENCE]}
    metric = AnswerCorrectness(llm=ScriptedLLM(answer), embeddings=TableEmbedding(table),
                               weights=[1 - weight, weight], beta=float(beta))
    return params, inputs, metric, {"user_input": USER_INPUT, "response": RESPONSE, "reference": REFERENCE}


def similarity_case(rng: random.Random) -> Case:
    dim = rng.randint(2, 12)
    table = {REFERENCE: vector(rng, dim), RESPONSE: vector(rng, dim)}
    threshold = rng.choice((None, None, None, 0.0, 0.5, round(rng.uniform(-0.5, 0.9), 2)))
    params = {} if threshold is None else {"threshold": threshold}
    inputs = {"response_vector": table[RESPONSE], "reference_vector": table[REFERENCE]}
    metric = SemanticSimilarity(embeddings=TableEmbedding(table), threshold=threshold)
    return params, inputs, metric, {"reference": REFERENCE, "response": RESPONSE}


def rubric_case(rng: random.Random) -> Case:
    points, rating = 5, rng.randint(1, 5)

    def answer(data: dict, model: type) -> dict:
        return {"feedback": "scripted", "score": rating}

    metric = DomainSpecificRubrics(llm=ScriptedLLM(answer))
    kwargs = {"user_input": USER_INPUT, "response": RESPONSE}
    return {"scale": points}, {"votes": [rating]}, metric, kwargs


class CriticVotes:
    """Ragas' aspect critic scoring the case's sampled verdicts (its strictness arithmetic)."""

    def __init__(self, strictness: int, votes: list[int]) -> None:
        self.critic = AspectCritic(name="criterion", definition="scripted", strictness=strictness)
        self.votes = votes

    async def ascore(self) -> t.Any:
        class Value:
            value = self.critic._compute_score([AspectCriticOutput(reason="", verdict=v) for v in self.votes])

        return Value()


def critic_case(rng: random.Random) -> Case:
    strictness = rng.randint(1, 8)
    n = AspectCritic(name="criterion", definition="scripted", strictness=strictness).strictness  # made odd
    votes = bits(rng, n)
    return {"scale": "binary", "strictness": strictness}, {"votes": votes}, CriticVotes(strictness, votes), {}


PLAN: Plan = (
    ("context_entity_recall", 60, entity_case),
    ("answer_accuracy", 30, accuracy_case),
    ("context_relevance", 50, relevance_case),
    ("response_groundedness", 50, groundedness_case),
    ("answer_correctness", 120, correctness_case),
    ("semantic_similarity", 60, similarity_case),
    ("criterion", 20, rubric_case),
    ("criterion", 60, critic_case),
)



if __name__ == "__main__":
    write_cases(plan_build(PLAN), seed=44, description=__doc__)
