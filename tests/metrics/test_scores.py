"""Score functions on hand-computed verdicts, including every worked example of the seeds."""

from __future__ import annotations

import math

import pytest

from localeval.errors import LocalevalError
from localeval.metrics import parse_metric, parse_metrics
from localeval.metrics.answer_relevancy import relevancy_score
from localeval.metrics.context_precision import average_precision, precision_at_k_score
from localeval.metrics.factual_correctness import factual_score, fbeta
from localeval.metrics.faithfulness import supported_ratio
from localeval.metrics.noise_sensitivity import noise_score
from localeval.metrics.retrieval import hit_rate_score, id_precision, id_recall, ndcg_score, reciprocal_rank


def test_context_precision_seed_examples() -> None:
    assert average_precision([0, 1]) == pytest.approx(0.5)  # right chunk second (travel receipt)
    assert average_precision([1, 0]) == pytest.approx(1.0)
    assert average_precision([1, 0, 0]) == pytest.approx(1.0)
    assert average_precision([0, 1, 0]) == pytest.approx(0.5)
    assert round(average_precision([1, 0, 1]), 3) == 0.833
    assert average_precision([0, 0, 0]) == 0.0  # a real zero, not NaN


def test_precision_at_k_seed_example() -> None:
    assert precision_at_k_score([0, 1]) == 0.5
    assert precision_at_k_score([1, 0]) == 0.5  # order does not matter
    assert precision_at_k_score([1, 0, 0, 1], k=2) == 0.5
    assert precision_at_k_score([1, 0, 0, 1], k=1) == 1.0


def test_context_recall_and_faithfulness_seed_examples() -> None:
    assert supported_ratio([1, 0]) == 0.5  # recall: R1 supported, R2 not
    assert supported_ratio([1, 0]) == 0.5  # faithfulness: A supported, B (lodging) not
    assert round(supported_ratio([1, 1, 0]), 3) == 0.667
    assert math.isnan(supported_ratio([]))  # no statements: NaN, not 0


def test_factual_correctness_seed_example() -> None:
    # tp=1, fp=1 (response claims); fn=1 (reference claim R2 not covered)
    assert factual_score([1, 0], [1, 0], "f1") == 0.5
    assert factual_score([1, 0], None, "precision") == 0.5
    assert factual_score([1, 0], [1, 0], "recall") == 0.5
    assert factual_score([1, 1, 0], None, "precision") == 0.67  # rounded as Ragas does
    assert factual_score([], [1, 1], "f1") == 0.0  # no response claims: zero true positives


def test_fbeta_weights_recall_above_one() -> None:
    # tp=2, fp=2, fn=0: precision 0.5, recall 1
    assert fbeta(2, 2, 0, beta=1.0) == pytest.approx(2 / 3)
    assert fbeta(2, 2, 0, beta=2.0) == pytest.approx(5 * 0.5 / (4 * 0.5 + 1))
    assert fbeta(0, 3, 3) == 0.0


def test_noise_sensitivity_seed_example() -> None:
    # chunk 1 supports the reference statement; chunk 2 does not (irrelevant).
    reference_by_context = [[1], [0]]
    # response statements A (receipt), B (annual leave): A in chunk 1, B in chunk 2.
    response_by_context = [[1, 0], [0, 1]]
    response_in_reference = [1, 0]  # A matches the reference, B does not
    assert noise_score(reference_by_context, response_by_context, response_in_reference, "relevant") == 0.0
    assert noise_score(reference_by_context, response_by_context, response_in_reference, "irrelevant") == 0.5


def test_noise_sensitivity_nan_without_statements() -> None:
    assert math.isnan(noise_score([[], []], [[1], [0]], [1]))
    assert math.isnan(noise_score([[1], [0]], [[], []], []))


def test_answer_relevancy_noncommittal_zeroes_the_score() -> None:
    q = [1.0, 0.0]
    gen = [[1.0, 0.0], [0.0, 1.0]]
    assert relevancy_score(q, gen, [0, 0]) == pytest.approx(0.5)
    assert relevancy_score(q, gen, [1, 0]) == pytest.approx(0.5)  # not all evasive
    assert relevancy_score(q, gen, [1, 1]) == 0.0
    assert relevancy_score(q, [[-1.0, 0.0]], [0]) == pytest.approx(-1.0)  # not clipped


def test_retrieval_metrics_by_hand() -> None:
    retrieved, reference = ["a", "b", "c", "d"], ["c", "a", "z"]
    assert id_precision(retrieved, reference) == 0.5
    assert id_recall(retrieved, reference) == pytest.approx(2 / 3)
    assert hit_rate_score(retrieved, reference, k=1) == 1.0
    assert hit_rate_score(["x", "a"], ["a"], k=1) == 0.0
    assert reciprocal_rank(["x", "y", "a"], ["a"]) == pytest.approx(1 / 3)
    assert reciprocal_rank(["x", "y", "a"], ["a"], k=2) == 0.0
    # DCG = 1/log2(2) + 1/log2(4) = 1.5; IDCG (3 relevant, k=4) = 1 + 1/log2(3) + 1/log2(4)
    ideal = 1 + 1 / math.log2(3) + 0.5
    assert ndcg_score(retrieved, reference) == pytest.approx(1.5 / ideal)
    assert ndcg_score(retrieved, reference, k=1) == 1.0
    assert ndcg_score(["a", "a"], ["a", "b"]) == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_metric_names_and_options() -> None:
    assert parse_metric("factual_correctness:mode=precision").name == "factual_correctness(mode=precision)"
    assert parse_metric("ndcg:k=5").options == {"k": 5}
    assert parse_metric("response_relevancy").base == "answer_relevancy"
    irrelevant = parse_metric("noise_sensitivity_irrelevant")
    assert irrelevant.name == "noise_sensitivity_irrelevant"
    assert irrelevant.options == {"mode": "irrelevant"}
    assert parse_metric("noise_sensitivity:mode=irrelevant").name == "noise_sensitivity_irrelevant"
    fc = parse_metric("factual_correctness:mode=f1:beta=0.5:atomicity=high")
    assert fc.options == {"mode": "f1", "beta": 0.5, "atomicity": "high", "coverage": "low", "empty": "zero"}
    assert [s.name for s in parse_metrics("faithfulness, faithfulness ,mrr")] == ["faithfulness", "mrr"]


@pytest.mark.parametrize("bad", ["nope", "ndcg:k=0", "ndcg:depth=3", "factual_correctness:mode=f2", "mrr:k=x"])
def test_bad_metric_names_are_explained(bad: str) -> None:
    with pytest.raises(LocalevalError):
        parse_metric(bad)


def test_fbeta_keeps_exact_halves_and_rounds_as_ragas() -> None:
    """Ragas 0.4.3's F-beta has no epsilon, so these sit on 0.875 (not just below it): 0.88."""
    # 7 of 8 response claims supported (tp 7, fp 1), 6 of 7 reference claims supported (fn 1), beta 0.3
    assert fbeta(7, 1, 1, beta=0.3) == pytest.approx(0.875, abs=1e-15)  # 0.8750000000000001
    assert factual_score([1] * 7 + [0], [1] * 6 + [0], "f1", beta=0.3) == 0.88
    # 7 of 7 response claims supported, 0 of 2 reference claims (fn 2), beta 1
    assert fbeta(7, 0, 2, beta=1.0) == pytest.approx(0.875, abs=1e-15)
    assert factual_score([1] * 7, [0, 0], "f1", beta=1.0) == 0.88
    # precision and recall modes keep Ragas' 1e-8 epsilon there, so 7/8 rounds down in both
    assert factual_score([1] * 7 + [0], None, "precision") == 0.87
    assert factual_score([1] * 7, [1] * 7 + [0], "recall") == 0.87


def test_factual_score_rounds_with_numpy_not_round() -> None:
    # tp 1, fn 3, beta 1.5: the float is 0.32500000000000001; round() gives 0.33, Ragas' np.round 0.32
    assert round(fbeta(1, 0, 3, beta=1.5), 2) == 0.33
    assert factual_score([1], [0, 0, 0], "f1", beta=1.5) == 0.32


def test_fbeta_zero_denominators_are_zero_as_in_ragas() -> None:
    assert fbeta(0, 0, 0) == 0.0  # no claims on either side
    assert fbeta(0, 0, 4) == 0.0
    assert fbeta(3, 0, 0) == 1.0
