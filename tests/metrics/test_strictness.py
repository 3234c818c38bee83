"""Response relevancy at strictness 1 to 5 through the scheduler and the scripted engine."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from localeval.data.sample import Sample
from localeval.embed import HashEmbedder
from localeval.engine.scripted import ScriptedEngine
from localeval.metrics import parse_metric
from localeval.prompts import QUESTION, STATEMENTS, QuestionInput, StatementsInput
from localeval.scheduler import Scheduler
from localeval.steps import Ask

VECTORS = {"the user input": [1.0, 0.0], "q0": [1.0, 0.0], "q1": [0.0, 1.0], "q2": [1.0, 1.0],
           "q3": [-1.0, 0.0], "q4": [3.0, 4.0]}
COSINES = [1.0, 0.0, 2 ** -0.5, -1.0, 0.6]  # of each generated question to the user input


def _embedder() -> HashEmbedder:
    return HashEmbedder(dim=2, fixed=VECTORS)


SAMPLE = Sample(id="s", user_input="the user input", response="the response")


@pytest.mark.parametrize("strictness", [1, 2, 3, 4, 5])
def test_strictness_generations_are_sampled_and_scored(strictness: int) -> None:
    requests: list[Any] = []

    def script(label: str, data: dict, request: Any) -> Any:
        requests.append(request)
        return [{"question": f"q{i}", "noncommittal": 0} for i in range(request.n)]

    spec = parse_metric(f"answer_relevancy:strictness={strictness}")
    out = Scheduler(ScriptedEngine(script), _embedder(), progress=False).run([SAMPLE], [spec])
    value = out.outcomes[spec.name][0]
    assert value == pytest.approx(float(np.mean(COSINES[:strictness])))
    assert [r.n for r in requests] == [strictness]
    assert requests[0].temperature == QUESTION.sampling_temperature > 0  # sampled, also for one
    assert out.traces[spec.name][0]["questions"] == [f"q{i}" for i in range(strictness)]


def test_strictness_one_with_no_question_scores_as_ragas() -> None:
    def script(label: str, data: dict, request: Any) -> Any:
        return [{"question": "", "noncommittal": 0}]

    zero, nan = parse_metric("answer_relevancy:strictness=1"), parse_metric("answer_relevancy:strictness=1:empty=nan")
    out = Scheduler(ScriptedEngine(script), _embedder(), progress=False).run([SAMPLE], [zero, nan])
    assert out.outcomes[zero.name][0] == 0.0
    assert getattr(out.outcomes[nan.name][0], "reason", None) == "no_questions"


def test_a_sampled_ask_of_one_gets_a_tuple_and_a_plain_ask_one_answer() -> None:
    got: list[Any] = []

    def script(label: str, data: dict, request: Any) -> Any:
        if label == "question":
            return [{"question": "q0", "noncommittal": 0}] * request.n
        assert request.temperature == 0.0 and request.n == 1  # a plain ask stays greedy
        return {"statements": ["s"]}

    def steps(sample: Any, trace: dict) -> Any:
        got.append((yield Ask(QUESTION, QuestionInput(response="r"), n=1)))
        got.append((yield Ask(STATEMENTS, StatementsInput(question="q", answer="a"))))
        return 1.0

    results, _ = Scheduler(ScriptedEngine(script), None, progress=False).run_tasks([("probe", steps(SAMPLE, {}))])
    assert isinstance(got[0], tuple) and len(got[0]) == 1 and got[0][0].question == "q0"
    assert got[1].statements == ["s"]
    assert results == [1.0]
