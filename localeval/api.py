"""The Python API: ``evaluate(samples, metrics=[...], judge=..., embedder=...)``, a façade over the run wing
(``localeval.run``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from localeval.config import JudgeOptions, build_config, model_object, with_engine_options
from localeval.data import Sample, as_samples
from localeval.engine.base import JudgeEngine
from localeval.prompts.base import Settings
from localeval.result import EvaluationResult
from localeval.run.models import load_embedder, load_judge
from localeval.run.start import evaluate_run


def evaluate(
    samples: str | Path | Iterable[Sample | Mapping[str, Any]],
    metrics: str | Sequence[str] | None = None,
    judge: str | Path | JudgeEngine | None = None,
    embedder: str | Path | Any | None = None,
    *,
    out: str | Path | None = None,
    cache: str | Path | bool = True,
    judge_options: JudgeOptions | None = None,
    settings: Settings | None = None,
    seed: int = 0,
    progress: bool = True,
    on_missing: str = "error",
    report: bool = True,
    long_context: str = "skip",
    chunk_size: int | None = None,
    soft: bool | None = None,
    replace: bool = False,
    **engine_options: Any,
) -> EvaluationResult:
    """Score samples with the chosen metrics (default: the six LLM metrics).

    ``judge`` and ``embedder`` are local model folders (None: the bundled defaults) or engine and
    embedder objects. ``out``: a run folder to write scores, summary and the judge cache into.
    ``cache``: True (the run folder's ``judge.sqlite``, when ``out`` is given), False, or a path
    to a cache shared between runs. Bad samples raise DataError before any model is loaded;
    with ``on_missing="nan"`` a sample lacking a field a metric needs scores ``Nan("missing_field")``
    for that metric instead, and the other metrics and samples are scored as usual. ``chunk_size``: samples
    scored and written to ``out`` at a time (default: the engine's; docs/bulk-runs.md). ``soft=True``
    (or ``Settings(soft=True)``): also record p(1) at every 0/1 verdict and give each verdict metric a soft
    score (the trace's ``soft_score``, the summary's ``soft_mean``). An ``out`` that holds another run's scores
    (other samples, or metrics this run leaves out) stops the run before any model loads, unless ``replace``.
    ``engine_options``: the engine (``engine="vllm"``; default transformers) and its options by name, as the CLI
    names them (``threads=1``, ``batch_size=8``, ``dtype="float32"``, ``server_url=[...]``, ...: the engine's model
    in ``engine.options``), checked before any model loads.
    """
    if soft is not None:
        settings = dataclasses.replace(settings or Settings(), soft=soft)
    judge_options = with_engine_options(judge_options, engine_options)
    config = build_config(metrics, judge, embedder, settings=settings, seed=seed, long_context=long_context,
                          on_missing=on_missing, judge_options=judge_options, chunk_size=chunk_size)
    return evaluate_run(samples, config, judge=model_object(judge), embedder=model_object(embedder), out=out,
                        cache=cache, progress=progress, report=report, replace=replace)


__all__ = ["EvaluationResult", "as_samples", "evaluate", "evaluate_run", "load_embedder", "load_judge"]
