"""Score conversations with Ragas 0.4.3's agent metrics (collections classes) and a local judge; write JSON.

Runs in benchmarks/.ragas-venv (``speed/agents_vs_ragas.py`` launches it), beside ``ragas_run.py`` and with
the same adapter (``ragas_adapter.LocalTransformersLLM``: greedy, one request at a time, Ragas' 1,024-token
default, the first JSON object that fits the response model; any exception is a NaN, counted by reason).
The conversations are read by Ragas itself, ``EvaluationDataset.from_jsonl``, so each is a
``MultiTurnSample`` with Ragas' message objects. They are scored one after another, each with every
metric, and the JSON is rewritten after each, so a run stopped by ``--time-limit`` still tells how far it got.

    benchmarks/.ragas-venv/bin/python -m benchmarks.ragas.ragas_agents_run --samples C.jsonl \\
        --judge models/smollm2-135m-instruct --out ragas_agents.json
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from benchmarks.ragas.ragas_adapter import LocalTransformersLLM, nan_reason
from benchmarks.ragas.ragas_run import arguments, finish, load_judge, score_all

# localeval's metric name -> (Ragas collections class, whether it takes the judge, the fields its ascore takes)
AGENT_METRICS: dict[str, tuple[str, bool, tuple[str, ...]]] = {
    "agent_goal_accuracy_with_reference": ("AgentGoalAccuracyWithReference", True, ("user_input", "reference")),
    "agent_goal_accuracy_without_reference": ("AgentGoalAccuracyWithoutReference", True, ("user_input",)),
    "topic_adherence": ("TopicAdherence", True, ("user_input", "reference_topics")),
    "tool_call_accuracy": ("ToolCallAccuracy", False, ("user_input", "reference_tool_calls")),
    "tool_call_f1": ("ToolCallF1", False, ("user_input", "reference_tool_calls")),
}


def build_agent_metric(name: str, llm: LocalTransformersLLM) -> Any:
    """A Ragas collections agent metric with its default settings (TopicAdherence: mode f1)."""
    from ragas.metrics import collections

    cls_name, judged, _ = AGENT_METRICS[name]
    cls = getattr(collections, cls_name)
    return cls(llm=llm) if judged else cls()


async def score_agent(metric: Any, name: str, sample: Any,
                      llm: LocalTransformersLLM) -> tuple[float | None, str | None]:
    """One conversation's value (None when NaN) and NaN reason; ``sample`` is Ragas' MultiTurnSample."""
    llm.metric = name
    try:
        result = await metric.ascore(**{f: getattr(sample, f) for f in AGENT_METRICS[name][2]})
    except Exception as error:  # as Ragas' executor with raise_exceptions=False: a failure is a NaN
        return None, nan_reason(error)
    value = float(result.value) if result.value is not None else float("nan")
    return (None, "nan_result") if value != value else (value, None)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from ragas.dataset_schema import EvaluationDataset, MultiTurnSample

    samples = list(EvaluationDataset.from_jsonl(args.samples).samples)
    if not all(isinstance(s, MultiTurnSample) for s in samples):
        raise SystemExit(f"{args.samples}: Ragas did not read every row as a MultiTurnSample")
    started = time.perf_counter()
    llm = load_judge(args)
    metrics = {name: build_agent_metric(name, llm) for name in args.metrics.split(",")}
    load_seconds = time.perf_counter() - started
    classes = {name: AGENT_METRICS[name][0] for name in metrics}
    return await score_all(args, samples, metrics, score_agent, llm, load_seconds, classes,
                           {"samples_read_by": "ragas EvaluationDataset.from_jsonl"}, noun="conversation")


def main(argv: list[str] | None = None) -> int:
    parser = arguments((__doc__ or "").splitlines()[0], "JSONL of conversations in Ragas' MultiTurnSample shape",
                       list(AGENT_METRICS), noun="conversation")
    args = parser.parse_args(argv)
    return finish(args, asyncio.run(run(args)), noun="conversation")


if __name__ == "__main__":
    raise SystemExit(main())
