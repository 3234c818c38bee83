"""The Python API: ``evaluate(samples, metrics=[...], judge=..., embedder=...)``."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from localeval.bulk import check_out, open_source, run_chunks
from localeval.config import JudgeOptions, RunConfig, build_config, model_object, with_engine_options
from localeval.data import Sample, as_samples
from localeval.engine.base import JudgeEngine
from localeval.metrics.registry import parse_metrics
from localeval.model_folders import resolve_model
from localeval.prompts.base import Settings
from localeval.result import EvaluationResult
from localeval.run_record import probe_cache
from localeval.silence import quiet, stderr_is_terminal
from localeval.store.out_path import check_out_path


def load_judge(judge: str | Path | None, options: JudgeOptions | None = None) -> JudgeEngine:
    """A judge engine from a local model folder (None: the bundled default), or the judge server the options name."""
    from localeval.engine.build import build_engine

    options = options or JudgeOptions()
    if options.engine == "server":
        return build_engine("server", None, options.extra)
    return build_engine(
        options.engine, resolve_model(judge, "judge"),
        {"grammar": options.grammar, "batch_size": options.batch_size, "batch_tokens": options.batch_tokens,
         "threads": options.threads, "trust_remote_code": options.trust_remote_code, **options.extra},
        replicas=options.replicas, ray_address=options.ray_address,
    )


def load_embedder(embedder: str | Path | None) -> Any:
    """A sentence-transformers embedder from a local folder (None: the bundled default)."""
    from localeval.embed import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(resolve_model(embedder, "embedder"))


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
    ``engine_options``: the transformers engine's options by name (``threads=1``, ``batch_size=8``,
    ``dtype="float32"``, ...: ``engine.options.TransformersOptions``), checked before any model loads.
    """
    if soft is not None:
        settings = dataclasses.replace(settings or Settings(), soft=soft)
    judge_options = with_engine_options(judge_options, engine_options)
    config = build_config(metrics, judge, embedder, settings=settings, seed=seed, long_context=long_context,
                          on_missing=on_missing, judge_options=judge_options, chunk_size=chunk_size)
    return evaluate_run(samples, config, judge=model_object(judge), embedder=model_object(embedder), out=out,
                        cache=cache, progress=progress, report=report, replace=replace)


def evaluate_run(
    samples: str | Path | Iterable[Sample | Mapping[str, Any]],
    config: RunConfig,
    *,
    judge: JudgeEngine | None = None,
    embedder: Any = None,
    out: str | Path | None = None,
    cache: str | Path | bool = True,
    progress: bool = True,
    report: bool = True,
    replace: bool = False,
) -> EvaluationResult:
    """Score samples as ``config`` says; ``judge`` and ``embedder``: loaded objects (None: load the config's).

    The data, the run folder and both model folders are checked before either model loads; then the samples are
    scored in chunks of ``RunConfig.chunk_samples`` (one chunk when they fit: ``localeval.bulk``).
    ``replace``: overwrite the run ``out`` holds, whatever it is (else another run there stops this one).
    """
    specs = parse_metrics(list(config.metrics) or None)
    size = config.chunk_samples(judge)
    source = open_source(samples, specs, config.on_missing == "error", size, config.chunk_size is not None)
    check_out_path(out)  # a file, or a place this user cannot write, stops the run before a model loads
    probe_cache(cache, out)  # so does a damaged judge cache
    if out is not None and not replace:
        check_out(Path(out), source, specs)
    started = time.time()
    needs_judge = any(s.definition.judge for s in specs)
    needs_embedder = any(s.uses_embedder(config.settings.judge_mode) for s in specs)
    engine, emb = judge, embedder
    served = config.engine.engine == "server"  # the judge a server runs: no folder here
    # Both folders are found and checked before either model is loaded.
    judge_dir = resolve_model(config.judge, "judge") if needs_judge and engine is None and not served else None
    embedder_dir = resolve_model(config.embedder, "embedder") if needs_embedder and emb is None else None
    # progress=False: no loading bars or library warnings either; off a terminal, no loading bars
    with quiet(not progress or not stderr_is_terminal(), bars_only=progress):
        if judge_dir is not None or (served and needs_judge and engine is None):
            engine = load_judge(judge_dir, config.engine)
        if embedder_dir is not None:
            emb = load_embedder(embedder_dir)
    if needs_judge and config.settings.soft and callable(getattr(engine, "require_soft", None)):
        engine.require_soft()  # type: ignore[union-attr]  # a judge that cannot give p(1) stops here, not mid-run
    config = config.with_models(engine if needs_judge else None, emb if needs_embedder else None)
    return run_chunks(source, specs, config, engine, emb, out=out, cache=cache, progress=progress, report=report,
                      replace=replace, started=started)


__all__ = ["EvaluationResult", "as_samples", "evaluate", "evaluate_run", "load_embedder", "load_judge"]
