"""The metrics after the first seven: asks, edge cases without asks, shared asks, options, schemas."""

from __future__ import annotations

from typing import Any

import pytest

from localeval.data.sample import Sample
from localeval.embed import HashEmbedder
from localeval.engine.scripted import ScriptedEngine
from localeval.errors import LocalevalError
from localeval.metrics import parse_metric, parse_metrics
from localeval.nan import Nan
from localeval.prompts.base import DEFAULT_SETTINGS, Settings
from localeval.prompts.ratings import ACCURACY_1, GROUNDEDNESS_2, RELEVANCE_1, AccuracyInput, Rating, vote_rating
from localeval.scheduler import Scheduler

SAMPLE = Sample(id="s", user_input="When did it open?", response="It opened in 1889. It is tall.",
                reference="It opened in March 1889.", retrieved_contexts=("It opened in March 1889.", "Tall."))


def _script(label: str, data: dict[str, Any], request: Any) -> Any:
    if label == "statements":
        return {"statements": [s.strip() for s in data["answer"].split(".") if s.strip()]}
    if label == "nli":
        return {"verdicts": [{"reason": "", "verdict": int("1889" in s)} for s in data["statements"]]}
    if label == "entities":
        return {"entities": ["March", "1889"] if data["text"] == SAMPLE.reference else ["1889"]}
    return {"reason": "", "rating": 4 if label.startswith("accuracy") else 2}


def _run(metrics: str, sample: Sample = SAMPLE, embedder: Any = None) -> tuple[dict, ScriptedEngine]:
    engine = ScriptedEngine(_script)
    out = Scheduler(engine, embedder or HashEmbedder(), progress=False).run([sample], parse_metrics(metrics))
    return {k: (v[0], out.traces[k][0]) for k, v in out.outcomes.items()}, engine


def test_answer_correctness_counts_both_sides_and_shares_the_statements_ask_with_faithfulness() -> None:
    scores, engine = _run("faithfulness,answer_correctness:weight=0")
    value, trace = scores[next(iter(scores.keys() - {"faithfulness"}))]
    # response: "It opened in 1889" (TP), "It is tall" (FP); reference: "It opened in March 1889" (stated)
    assert trace["response_verdicts"] == [1, 0] and trace["reference_verdicts"] == [1]
    assert value == pytest.approx(2 * 0.5 * 1.0 / 1.5)
    statements = [r for r in engine.requests if r.label == "statements"]
    assert len(statements) == 2  # the response's statements are asked once for both metrics


def test_answer_correctness_with_an_empty_side_is_perfect_factuality_and_asks_no_verdict() -> None:
    one_side = Sample(id="s", user_input="q", response="...", reference="It opened in 1889.")
    scores, engine = _run("answer_correctness:weight=0.5", one_side, HashEmbedder(dim=2, fixed={
        "...": [1.0, 0.0], "It opened in 1889.": [0.0, 1.0]}))
    value, trace = scores[next(iter(scores.keys() - {"faithfulness"}))]
    assert trace["factuality"] == 1.0 and trace["similarity"] == 0.0 and value == 0.5
    assert not [r for r in engine.requests if r.label == "nli"]


def test_context_relevance_scores_a_context_that_repeats_the_question_zero_without_asking() -> None:
    echo = Sample(id="s", user_input="When did it open?", retrieved_contexts=("it open",))
    scores, engine = _run("context_relevance", echo)
    assert scores["context_relevance"][0] == 0.0 and not engine.requests
    scores, engine = _run("context_relevance,response_groundedness,answer_accuracy")
    assert {k: v for k, (v, _) in scores.items()} == {"context_relevance": 1.0, "response_groundedness": 1.0,
                                                      "answer_accuracy": 1.0}
    assert sorted(r.label for r in engine.requests) == ["accuracy_1", "accuracy_2", "groundedness_1",
                                                        "groundedness_2", "relevance_rating_1", "relevance_rating_2"]
    swapped = next(r for r in engine.requests if r.label == "accuracy_2").messages[-1][1]
    assert swapped.index(SAMPLE.reference) < swapped.index(SAMPLE.response)  # judge 2 sees the two swapped


def test_entity_recall_counts_distinct_entities_and_keeps_the_missing_ones() -> None:
    scores, engine = _run("context_entity_recall")
    value, trace = scores["context_entity_recall"]
    assert value == pytest.approx(0.5) and trace["missing_entities"] == ["March"]
    texts = [r.messages[-1][1] for r in engine.requests]
    assert any("Tall." in t for t in texts)  # the contexts are joined into one ask


def test_semantic_similarity_asks_no_judge_and_thresholds() -> None:
    table = {"a b": [3.0, 4.0], "a c": [4.0, 3.0], "zero": [0.0, 0.0]}
    sample = Sample(id="s", response="a b", reference="a c")
    scores, engine = _run("semantic_similarity,semantic_similarity:threshold=0.97", sample,
                          HashEmbedder(dim=2, fixed=table))
    assert scores["semantic_similarity"][0] == pytest.approx(24 / 25)
    assert scores["semantic_similarity(threshold=0.97)"][0] == 0.0 and not engine.requests
    zero = Sample(id="s", response="zero", reference="a c")
    scores, _ = _run("semantic_similarity", zero, HashEmbedder(dim=2, fixed=table))
    assert scores["semantic_similarity"][0] == Nan("undefined")


@pytest.mark.parametrize(("spec", "words"), [
    ("answer_correctness:weight=2", ["weight='2'", "from 0.0 to 1.0"]),
    ("answer_correctness:wieght=0.5", ["did you mean 'weight'"]),
    ("semantic_similarity:threshold=high", ["threshold='high'", "must be a number"]),
])
def test_option_errors_say_what_the_option_takes(spec: str, words: list[str]) -> None:
    with pytest.raises(LocalevalError) as error:
        parse_metric(spec)
    assert all(w in str(error.value) for w in words), str(error.value)


def test_rating_schemas_allow_only_the_scale() -> None:
    inp = AccuracyInput(question="q", answer="a", reference="r")
    assert ACCURACY_1.schema(inp, DEFAULT_SETTINGS)["properties"]["rating"]["enum"] == [0, 2, 4]
    assert list(ACCURACY_1.schema(inp, Settings(reasons=False))["properties"]) == ["rating"]
    for prompt in (RELEVANCE_1, GROUNDEDNESS_2):
        assert prompt.schema(None, DEFAULT_SETTINGS)["properties"]["rating"]["enum"] == [0, 1, 2]
    votes = [Rating(reason=r, rating=v) for r, v in (("a", 2), ("b", 0), ("c", 0), ("d", 2))]
    assert vote_rating(votes).reason == "a"  # a tie goes to the first answer seen, as Ragas' Counter does
