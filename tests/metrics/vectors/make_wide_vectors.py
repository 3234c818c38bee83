"""Wide conformance vectors: Ragas 0.4.3's own metric classes scored on scripted verdicts and vectors.

Runs only in Ragas' environment, ``benchmarks/.ragas-venv`` (``bash benchmarks/ragas/setup_ragas.sh``):

    benchmarks/.ragas-venv/bin/python tests/metrics/vectors/make_wide_vectors.py \\
        --out tests/metrics/vectors/ragas-0.4.3-wide.jsonl

Each case draws seeded random inputs (verdicts, claim counts, beta, strictness, embedding vectors,
context ids), runs the Ragas class with a judge that answers exactly those verdicts and an embedder
that returns exactly those vectors, and writes one JSON line in the format of
``ragas-0.4.3-vectors.jsonl``. ``expected`` is Ragas' value, ``null`` where Ragas returned NaN or raised.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import typing as t
from fractions import Fraction
from pathlib import Path

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")

import numpy as np
from pydantic import BaseModel
from ragas.dataset_schema import SingleTurnSample
from ragas.embeddings.base import BaseRagasEmbedding
from ragas.llms.base import InstructorBaseRagasLLM
from ragas.metrics import IDBasedContextPrecision, IDBasedContextRecall
from ragas.metrics.collections import (
    AnswerRelevancy,
    ContextPrecision,
    ContextRecall,
    ContextUtilization,
    FactualCorrectness,
    Faithfulness,
    NoiseSensitivity,
)

M = t.TypeVar("M", bound=BaseModel)
Answer = t.Callable[[dict[str, t.Any], type[BaseModel]], dict[str, t.Any]]
USER_INPUT, RESPONSE, REFERENCE = "the user input", "the response", "the reference"
BETAS = (0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)  # the grid searched for exact halves


def prompt_input(prompt: str) -> dict[str, t.Any]:
    """The input JSON of a rendered Ragas prompt (the part after its last ``input:``)."""
    tail = prompt.rsplit("\ninput: ", 1)[1]
    return json.loads(tail.rsplit("\nOutput:", 1)[0])


class ScriptedLLM(InstructorBaseRagasLLM):
    """Answers each prompt with ``answer(input, response_model)``, validated into that model."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer

    def generate(self, prompt: str, response_model: type[M]) -> M:
        return response_model.model_validate(self.answer(prompt_input(prompt), response_model))

    async def agenerate(self, prompt: str, response_model: type[M]) -> M:
        return self.generate(prompt, response_model)


class TableEmbedding(BaseRagasEmbedding):
    """Returns the given vector for each text."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        super().__init__()
        self.table = table

    def embed_text(self, text: str, **kwargs: t.Any) -> list[float]:
        return list(self.table[text])

    async def aembed_text(self, text: str, **kwargs: t.Any) -> list[float]:
        return self.embed_text(text)


def names(prefix: str, n: int) -> list[str]:
    return [f"{prefix} {i}" for i in range(n)]


def bits(rng: random.Random, n: int, p: float | None = None) -> list[int]:
    """n random 0/1 verdicts, with a per-list density so all-0 and all-1 lists come up often."""
    p = rng.choice((0.0, 0.2, 0.5, 0.8, 1.0, rng.random())) if p is None else p
    return [int(rng.random() < p) for _ in range(n)]


def nli(statements: list[str], verdict_of: t.Callable[[str], int]) -> dict[str, t.Any]:
    return {"statements": [{"statement": s, "reason": "scripted", "verdict": verdict_of(s)} for s in statements]}


def index(name: str) -> int:
    return int(name.split()[-1])


# -- one case per metric: (params, inputs, metric object, ascore keyword arguments) -------------------


def faithfulness_case(rng: random.Random) -> tuple[dict, dict, t.Any, dict]:
    n = rng.randint(0, 12)
    verdicts = bits(rng, n)

    def answer(data: dict, model: type) -> dict:
        if "statements" in model.model_fields and "question" in data:
            return {"statements": names("statement", n)}
        return nli(data["statements"], lambda s: verdicts[index(s)])

    kwargs = {"user_input": USER_INPUT, "response": RESPONSE, "retrieved_contexts": ["ctx 0"]}
    return {}, {"statements": n, "verdicts": verdicts}, Faithfulness(llm=ScriptedLLM(answer)), kwargs


def precision_case(rng: random.Random, against_reference: bool) -> tuple[dict, dict, t.Any, dict]:
    verdicts = bits(rng, rng.randint(1, 12))

    def answer(data: dict, model: type) -> dict:
        return {"reason": "scripted", "verdict": verdicts[index(data["context"])]}

    llm = ScriptedLLM(answer)
    contexts = names("ctx", len(verdicts))
    if against_reference:
        kwargs = {"user_input": USER_INPUT, "reference": REFERENCE, "retrieved_contexts": contexts}
        return {}, {"verdicts": verdicts}, ContextPrecision(llm=llm), kwargs
    kwargs = {"user_input": USER_INPUT, "response": RESPONSE, "retrieved_contexts": contexts}
    return {}, {"verdicts": verdicts}, ContextUtilization(llm=llm), kwargs


def recall_case(rng: random.Random) -> tuple[dict, dict, t.Any, dict]:
    attributed = bits(rng, rng.randint(0, 12))

    def answer(data: dict, model: type) -> dict:
        return {"classifications": [{"statement": f"s{i}", "reason": "scripted", "attributed": a}
                                    for i, a in enumerate(attributed)]}

    kwargs = {"user_input": USER_INPUT, "retrieved_contexts": ["ctx 0", "ctx 1"], "reference": REFERENCE}
    return {}, {"attributed": attributed}, ContextRecall(llm=ScriptedLLM(answer)), kwargs


def vector(rng: random.Random, dim: int) -> list[float]:
    return [round(rng.uniform(-1, 1), 3) for _ in range(dim)]


def relevancy_case(rng: random.Random) -> tuple[dict, dict, t.Any, dict]:
    strictness, dim = rng.randint(1, 5), rng.randint(2, 16)
    questions = ["" if rng.random() < 0.2 else f"generated question {i}" for i in range(strictness)]
    flags = bits(rng, strictness, rng.choice((0.0, 0.3, 1.0)))
    question_vector = vector(rng, dim)
    generated: list[list[float] | None] = [vector(rng, dim) if q else None for q in questions]
    zero = rng.random()
    if zero < 0.08:
        question_vector = [0.0] * dim
    elif zero < 0.16 and any(generated):
        generated[rng.choice([i for i, g in enumerate(generated) if g])] = [0.0] * dim
    table = {USER_INPUT: question_vector, **{q: g for q, g in zip(questions, generated, strict=True) if q}}
    calls = iter(range(strictness))

    def answer(data: dict, model: type) -> dict:
        i = next(calls)  # Ragas asks once per generation, in order
        return {"question": questions[i], "noncommittal": flags[i]}

    params: dict[str, t.Any] = {"strictness": strictness}
    if rng.random() < 0.3:
        params["empty"] = "zero"  # Ragas' behaviour when no generation has a question
    inputs = {"generated_questions": questions, "noncommittal": flags, "question_vector": question_vector,
              "generated_vectors": generated}
    metric = AnswerRelevancy(llm=ScriptedLLM(answer), embeddings=TableEmbedding(table), strictness=strictness)
    return params, inputs, metric, {"user_input": USER_INPUT, "response": RESPONSE}


def factual_case(mode: str, beta: float, response_verdicts: list[int], reference_verdicts: list[int] | None,
                 empty: bool) -> tuple[dict, dict, t.Any, dict]:
    def answer(data: dict, model: type) -> dict:
        if "claims" in model.model_fields:
            if data["response"] == RESPONSE:
                return {"claims": names("response claim", len(response_verdicts))}
            assert reference_verdicts is not None, "precision mode decomposes only the response"
            return {"claims": names("reference claim", len(reference_verdicts))}
        verdicts = response_verdicts if data["context"] == REFERENCE else reference_verdicts
        assert verdicts is not None
        return nli(data["statements"], lambda s: verdicts[index(s)])

    params: dict[str, t.Any] = {"mode": mode, "beta": beta}
    if empty:
        params["empty"] = "zero"
    inputs = {"response_claim_verdicts": response_verdicts, "reference_claim_verdicts": reference_verdicts}
    metric = FactualCorrectness(llm=ScriptedLLM(answer), mode=mode, beta=beta)
    return params, inputs, metric, {"response": RESPONSE, "reference": REFERENCE}


def random_factual_case(rng: random.Random) -> tuple[dict, dict, t.Any, dict]:
    mode = rng.choice(("f1", "f1", "precision", "recall"))
    beta = rng.choice((*BETAS, round(rng.uniform(0.3, 3.0), 2)))
    response = bits(rng, rng.randint(0, 10))
    reference = None if mode == "precision" else bits(rng, rng.randint(0, 10))
    return factual_case(mode, beta, response, reference, rng.random() < 0.3)


def verdict_lists(tp: int, fp: int, fn: int, supported: int, rng: random.Random) -> tuple[list[int], list[int]]:
    response, reference = [1] * tp + [0] * fp, [0] * fn + [1] * supported
    rng.shuffle(response)
    rng.shuffle(reference)
    return response, reference


def rounding_splits(beta: float) -> list[tuple[int, int, int]]:
    """Counts whose F-beta ``round(x, 2)`` and ``np.round(x, 2)`` round to different values."""
    b2, found = beta**2, []
    for tp in range(1, 11):
        for fp in range(0, 11 - tp):
            for fn in range(0, 11):
                p, r = tp / (tp + fp), tp / (tp + fn)
                value = (1 + b2) * (p * r) / (b2 * p + r)
                if round(value, 2) != float(np.round(value, 2)):
                    found.append((tp, fp, fn))
    return found


def half_cases(rng: random.Random) -> list[tuple[dict, dict, t.Any, dict]]:
    """Every F-beta on the beta grid, up to 10 claims a side, whose exact value ends in a 5 at the
    third decimal (where an epsilon or a different rounding flips the 2-decimal result), and every
    count on a 0.01 grid of beta where Python's and numpy's rounding disagree."""
    seen, cases = set(), []
    # The two halves the differential check found: 7/8 and 6/7 at beta 0.3; 7/7 and 0/2 at beta 1.
    cases.append(factual_case("f1", 0.3, *verdict_lists(7, 1, 1, 6, rng), False))
    cases.append(factual_case("f1", 1.0, *verdict_lists(7, 0, 2, 0, rng), False))
    for beta in BETAS:
        b2 = Fraction(str(beta)) ** 2
        for tp in range(1, 11):
            for fp in range(0, 11 - tp):
                for fn in range(0, 11):
                    p, r = Fraction(tp, tp + fp), Fraction(tp, tp + fn)
                    value = (1 + b2) * p * r / (b2 * p + r)
                    if (value * 1000).denominator == 1 and (value * 1000).numerator % 10 == 5:
                        key = (beta, value)
                        if key not in seen:
                            seen.add(key)
                            supported = rng.randint(0, 10 - fn)
                            cases.append(factual_case("f1", beta, *verdict_lists(tp, fp, fn, supported, rng), False))
    for beta in [round(0.3 + 0.01 * i, 2) for i in range(271)]:
        for tp, fp, fn in rounding_splits(beta):
            cases.append(factual_case("f1", beta, *verdict_lists(tp, fp, fn, rng.randint(0, 10 - fn), rng), False))
    for mode in ("precision", "recall"):  # 7/8 in precision and recall modes (Ragas' 1e-8 epsilon)
        response, reference = verdict_lists(7, 1, 1, 7, rng)
        cases.append(factual_case(mode, 1.0, response, None if mode == "precision" else reference, False))
    return cases


def noise_case(rng: random.Random) -> tuple[dict, dict, t.Any, dict]:
    mode = rng.choice(("relevant", "irrelevant"))
    chunks, n_ref, n_resp = rng.randint(1, 12), rng.randint(0, 12), rng.randint(0, 12)
    density = rng.choice((0.1, 0.3, 0.5, 0.8))
    by_ref = [bits(rng, n_ref, density) for _ in range(chunks)]
    by_resp = [bits(rng, n_resp, density) for _ in range(chunks)]
    in_ref = bits(rng, n_resp)

    def answer(data: dict, model: type) -> dict:
        if "statements" in model.model_fields and "question" in data:
            is_ref = data["answer"] == REFERENCE
            return {"statements": names("ref" if is_ref else "resp", n_ref if is_ref else n_resp)}
        if data["context"] == REFERENCE:
            return nli(data["statements"], lambda s: in_ref[index(s)])
        k = index(data["context"])
        return nli(data["statements"], lambda s: (by_ref if s.startswith("ref") else by_resp)[k][index(s)])

    inputs = {"reference_statements_by_context": by_ref, "response_statements_by_context": by_resp,
              "response_statements_in_reference": in_ref}
    kwargs = {"user_input": USER_INPUT, "response": RESPONSE, "reference": REFERENCE,
              "retrieved_contexts": names("ctx", chunks)}
    return {"mode": mode}, inputs, NoiseSensitivity(llm=ScriptedLLM(answer), mode=mode), kwargs


def id_case(rng: random.Random, precision: bool) -> tuple[dict, dict, t.Any, dict]:
    pool = names("doc", 16)
    retrieved = [rng.choice(pool[:10]) for _ in range(rng.choice((0, *range(1, 13))))]  # repeats allowed
    reference = rng.sample(pool, rng.choice((0, *range(1, 9))))
    inputs = {"retrieved_context_ids": retrieved, "reference_context_ids": reference}
    metric = IDBasedContextPrecision() if precision else IDBasedContextRecall()
    return {}, inputs, metric, {"sample": SingleTurnSample(**inputs)}


# -- running -------------------------------------------------------------------------------------------


async def ragas_value(metric: t.Any, kwargs: dict) -> float | None:
    """Ragas' score, None for NaN or an exception (its evaluate() scores both as NaN)."""
    try:
        if "sample" in kwargs:
            value = await metric.single_turn_ascore(kwargs["sample"])
        else:
            value = (await metric.ascore(**kwargs)).value
    except Exception:  # every raise is a NaN in Ragas' evaluate()
        return None
    value = float(value)
    return None if math.isnan(value) else value


Case = tuple[dict, dict, t.Any, dict]  # params, inputs, the Ragas scorer, the keyword arguments it scores
Plan = tuple[tuple[str, int, t.Callable[[random.Random], Case]], ...]  # metric, how many cases, the case maker


def plan_build(plan: Plan, value: t.Callable[[t.Any, dict], t.Awaitable[float | None]] = ragas_value
               ) -> t.Callable[[int], t.Awaitable[list[dict[str, t.Any]]]]:
    """``build(seed)`` for a plan: each case made in turn and scored by Ragas (``value``), a row per case."""
    async def build(seed: int) -> list[dict[str, t.Any]]:
        rng = random.Random(seed)
        rows = []
        for metric, count, make in plan:
            for _ in range(count):
                params, inputs, scorer, kwargs = make(rng)
                rows.append({"metric": metric, "params": params, "inputs": inputs,
                             "expected": await value(scorer, kwargs)})
        return rows

    return build


PLAN: Plan = (
    ("faithfulness", 80, faithfulness_case),
    ("context_precision", 80, lambda rng: precision_case(rng, True)),
    ("context_utilization", 50, lambda rng: precision_case(rng, False)),
    ("context_recall", 60, recall_case),
    ("answer_relevancy", 150, relevancy_case),
    ("factual_correctness", 200, random_factual_case),
    ("noise_sensitivity", 160, noise_case),
    ("id_context_precision", 50, lambda rng: id_case(rng, True)),
    ("id_context_recall", 50, lambda rng: id_case(rng, False)),
)


async def build(seed: int) -> list[dict[str, t.Any]]:
    rng = random.Random(seed)
    rows = []
    for metric, count, make in PLAN:
        cases = [make(rng) for _ in range(count)]
        if metric == "factual_correctness":
            cases += half_cases(rng)
        for params, inputs, scorer, kwargs in cases:
            expected = await ragas_value(scorer, kwargs)
            rows.append({"metric": metric, "params": params, "inputs": inputs, "expected": expected})
    return rows


def main(build: t.Callable[[int], t.Awaitable[list[dict]]] | None = None, seed: int = 43,
         description: str | None = None) -> None:
    """Write the cases ``build(seed)`` makes to ``--out`` and print a count per metric (this script's cases
    by default; ``make_more_vectors.py`` passes its own)."""
    parser = argparse.ArgumentParser(description=(description or __doc__).split("\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=seed)
    args = parser.parse_args()
    rows = asyncio.run((build or globals()["build"])(args.seed))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    counts: dict[str, list[int]] = {}
    for r in rows:
        c = counts.setdefault(r["metric"], [0, 0])
        c[0] += 1
        c[1] += r["expected"] is None
    for metric, (n, nan) in counts.items():
        print(f"{metric:22s} {n:4d} cases, {nan:3d} NaN")
    print(f"{len(rows)} cases -> {args.out}")


if __name__ == "__main__":
    main()
