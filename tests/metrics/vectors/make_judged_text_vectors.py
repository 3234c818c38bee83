"""Conformance vectors for summary score, instance-specific rubrics and SQL semantic equivalence: Ragas
0.4.3's own collections classes run end to end on a scripted judge.

Runs only in Ragas' environment, ``benchmarks/.ragas-venv`` (``bash benchmarks/ragas/setup_ragas.sh``):

    benchmarks/.ragas-venv/bin/python tests/metrics/vectors/make_judged_text_vectors.py \\
        --out tests/metrics/vectors/ragas-0.4.3-judged-texts.jsonl

``SummaryScore`` (both length_penalty settings, several coeffs; summaries shorter and longer than the
text) with a judge that answers the case's key phrases, questions and 0/1 answers;
``InstanceSpecificRubrics`` with rubrics of several level sets and the level the judge picks;
``SQLSemanticEquivalence`` with the judge's verdict. Same line format as ``ragas-0.4.3-wide.jsonl``:
``expected`` is Ragas' value, ``null`` where Ragas returned NaN or raised.
"""

from __future__ import annotations

import random

from make_wide_vectors import Case, Plan, ScriptedLLM, bits, names, plan_build
from make_wide_vectors import main as write_cases
from ragas.metrics.collections import InstanceSpecificRubrics, SQLSemanticEquivalence, SummaryScore

WORDS = ("river", "barge", "1998", "Rotterdam", "tonnes", "42%", "harbour", "the", "of", "and", "fell", "rose",
         "Kaub", "EUR 3 million", "winter", "drought", "lock", "canal")
COEFFS = (0.5, 0.5, 0.0, 1.0, 0.25, 0.8, 0.1)


def check(ok: bool, what: str) -> None:
    """A scripted judge asked something the case did not plan is a bug here, never Ragas' NaN: stop."""
    if not ok:
        raise SystemExit(f"the scripted judge got an unplanned ask: {what}")


def words(rng: random.Random, chars: int) -> str:
    """Random words up to about ``chars`` characters (at least one word)."""
    out = [rng.choice(WORDS)]
    while len(" ".join(out)) < chars:
        out.append(rng.choice(WORDS))
    return " ".join(out)


def most_keyphrases(text: str) -> int:  # localeval's bound: one per 20 characters plus two, 4 to 40
    return max(4, min(40, len(text) // 20 + 2))


def most_questions(keyphrases: int) -> int:  # localeval's bound: two per key phrase plus two, 4 to 40
    return max(4, min(40, 2 * keyphrases + 2))


def summary_case(rng: random.Random) -> Case:
    contexts = [words(rng, rng.choice((15, 60, 200, 600, 1500))) for _ in range(rng.randint(1, 3))]
    text = "\n".join(contexts)
    kind = rng.choice(("short", "short", "near", "longer", "tiny", "blank response", "blank contexts")
                      if rng.random() < 0.1 else ("short", "short", "near", "longer", "tiny"))
    size = {"short": rng.randint(5, max(6, len(text) // 2)), "near": len(text) + rng.randint(-3, 3),
            "longer": len(text) + rng.randint(1, 400), "tiny": 1}.get(kind, 0)
    response = "  " if kind == "blank response" else words(rng, size)[: max(1, size)]
    if kind == "blank contexts":
        contexts = [" ", ""][: rng.randint(1, 2)]
    k = rng.randint(0, min(12, most_keyphrases(text)))
    q = 0 if rng.random() < 0.08 else rng.randint(1, min(14, most_questions(k)))
    answers = bits(rng, q)

    def answer(data: dict, model: type) -> dict:
        if "keyphrases" in model.model_fields:
            return {"keyphrases": names("keyphrase", k)}
        if "questions" in model.model_fields:
            check(data.get("keyphrases", []) == names("keyphrase", k), "keyphrases")
            return {"questions": names("question", q)}
        check(data.get("questions", []) == names("question", q), "questions")
        return {"answers": [str(a) for a in answers]}

    penalty = rng.random() < 0.7
    coeff = rng.choice((*COEFFS, round(rng.random(), 2)))
    params = {"length_penalty": "true" if penalty else "false", "coeff": coeff}
    inputs = {"reference_contexts": contexts, "response": response, "keyphrases": names("keyphrase", k),
              "questions": names("question", q), "answers": answers}
    metric = SummaryScore(llm=ScriptedLLM(answer), length_penalty=penalty, coeff=coeff)
    return params, inputs, metric, {"reference_contexts": contexts, "response": response}


LEVEL_SETS = ((1, 2, 3, 4, 5),) * 4 + ((0, 1, 2, 3), (1, 2, 3), (1, 2, 3, 4, 5, 6, 7, 8, 9, 10), (0, 1))
FIELDS = ("user_input", "response", "retrieved_contexts", "reference_contexts", "reference")


def rubric_case(rng: random.Random) -> Case:
    levels = list(rng.choice(LEVEL_SETS) if rng.random() < 0.85 else sorted(rng.sample(range(0, 12), 3)))
    rng.shuffle(levels)  # the rubric's keys in any order
    style = rng.choice(("score{}_description", "score{}_description", "level {}", "{} points"))
    rubrics = {style.format(n): f"what a level {n} response looks like" for n in levels}
    if rng.random() < 0.04:
        rubrics = {}
    score = rng.choice(levels)
    fields = {f: (["context 0", "context 1"] if f.endswith("contexts") else f"the {f}")
              for f in FIELDS if rng.random() < 0.6}

    def answer(data: dict, model: type) -> dict:
        check(data["rubrics"] == rubrics and all(data.get(f) == v for f, v in fields.items()), "rubric fields")
        return {"feedback": "scripted", "score": score}

    inputs = {"rubrics": rubrics, "fields": fields, "score": score}
    return {}, inputs, InstanceSpecificRubrics(llm=ScriptedLLM(answer)), {"rubrics": rubrics, **fields}


def sql_case(rng: random.Random) -> Case:
    equivalent = rng.random() < 0.5
    kind = rng.choice(("judged",) * 8 + ("blank response", "blank reference"))
    response = "  " if kind == "blank response" else "SELECT id FROM t WHERE a = 1"
    reference = "" if kind == "blank reference" else "SELECT id FROM t WHERE a = true"
    schema = rng.choice((None, None, [], ["Table t: id INT, a BOOLEAN"], ["Table t: id INT", "a BOOLEAN"]))

    def answer(data: dict, model: type) -> dict:
        check(data["database_schema"] == "\n".join(schema or []), "schema")
        return {"response_explanation": "scripted", "reference_explanation": "scripted", "equivalent": equivalent}

    inputs = {"response": response, "reference": reference, "reference_contexts": schema, "equivalent": equivalent}
    kwargs = {"response": response, "reference": reference, "reference_contexts": schema}
    return {}, inputs, SQLSemanticEquivalence(llm=ScriptedLLM(answer)), kwargs


PLAN: Plan = (
    ("summary_score", 240, summary_case),
    ("instance_specific_rubrics", 90, rubric_case),
    ("sql_semantic_equivalence", 60, sql_case),
)



if __name__ == "__main__":
    write_cases(plan_build(PLAN), seed=45, description=__doc__)
