"""Agreement with the labels of WikiEval-style pairs (the Ragas paper's Table 1): the runner.

A folder holds up to three pair files (``ff.csv``, ``ar.csv``, ``cr.csv``: ``pair_files``), each scored
with its metric: faithfulness, response relevancy, and context relevance (``metrics.context_relevance``,
the context split into sentences). A metric agrees with the humans on a pair when it scores the better
candidate higher; pairwise accuracy counts a tie as half, and so a pair where either score is NaN
(reported separately).
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from localeval.agree.pair_count import count_pairs, score_value
from localeval.agree.pair_files import FILES, default_pairs_folder, pair_samples, read_pairs
from localeval.agree.pair_table import PAPER, FileAgreement, PairsReport
from localeval.config import RunConfig
from localeval.errors import LocalevalError
from localeval.metrics.context_relevance import CONTEXT_RELEVANCE_SPEC
from localeval.metrics.registry import parse_metric
from localeval.nan import Nan
from localeval.scheduler import Scheduler, total_usage
from localeval.store.cache import JudgeCache

if TYPE_CHECKING:
    from localeval.engine.base import JudgeEngine


def _mean(values: list[float | None]) -> float | None:
    valid = [v for v in values if v is not None]
    return sum(valid) / len(valid) if valid else None


def _soft(outcomes: Sequence[Any], traces: Sequence[dict[str, Any]]) -> list[float | None]:
    """Each score's soft twin from its trace; None (a NaN pair) where the score is NaN or has none."""
    return [None if score_value(o) is None else t.get("soft_score") for o, t in zip(outcomes, traces, strict=True)]


def run_pairs(
    folder: str | Path | None = None,
    judge: str | Path | JudgeEngine | None = None,
    embedder: str | Path | Any | None = None,
    limit: int | None = None,
    config: RunConfig | None = None,
    *,
    files: Sequence[str] = ("ff", "ar", "cr"),
    chunk_sentences: int = 1,
    cache: str | Path | None = None,
    progress: bool = False,
    offset: int = 0,
    on_file: Callable[[PairsReport], None] | None = None,
) -> PairsReport:
    """Score every pair file in ``folder`` (default: the shared WikiEval pairs) and count agreement.

    ``limit``: the first ``limit`` questions of each file, from question ``offset`` (counted from 0).
    ``judge`` and ``embedder``: local model folders (None: the bundled defaults) or engine and
    embedder objects. ``cache``: an SQLite file of judge answers to reuse between runs.
    ``on_file``: called with the report so far after each file, so that a long run can save what it has
    measured before it ends.
    """
    from localeval.run import models  # here, so that importing this module loads no model code

    started = time.perf_counter()
    if offset < 0:
        raise LocalevalError(f"offset must be 0 or more, got {offset}")
    base = Path(folder) if folder is not None else default_pairs_folder()
    present = [f for f in files if (base / f"{f}.csv").is_file()]
    if not present:
        raise LocalevalError(f"{base}: none of {', '.join(f + '.csv' for f in files)} found")
    config = config or RunConfig()
    settings, seed = config.settings, config.seed
    engine = judge if judge is not None and not isinstance(judge, str | Path) else None
    emb = embedder if embedder is not None and not isinstance(embedder, str | Path) else None
    # relevancy compares embeddings; the small-judge mode's faithfulness ranks context sentences with them
    embeds = "ar" in present or ("ff" in present and settings.judge_mode != "ragas")
    if emb is None and embeds:  # a wrong embedder folder fails before the judge loads
        embedder = models.resolve_model(embedder, "embedder")
    if engine is None:
        engine = models.load_judge(judge, config.engine)  # type: ignore[arg-type]
    if emb is None and embeds:
        emb = models.load_embedder(embedder)
    store = JudgeCache(Path(cache)) if cache is not None else JudgeCache.disabled()
    results: list[FileAgreement] = []

    def report() -> PairsReport:
        return PairsReport(
            folder=str(base), judge=getattr(engine, "fingerprint", None), files=list(results),
            settings={"reasons": settings.reasons, "max_examples": settings.max_examples, "votes": settings.votes,
                      "temperature": settings.temperature if settings.votes > 1 else 0.0, "limit": limit,
                      "offset": offset, "chunk_sentences": chunk_sentences, "seed": seed,
                      **({"soft": True} if settings.soft else {}),
                      **({} if settings.merge_repeats else {"merge_repeats": False}),
                      **({} if settings.judge_mode == "ragas" else {"judge_mode": settings.judge_mode})},
            wall_seconds=time.perf_counter() - started,
        )

    try:
        for kind in present:
            path = base / f"{kind}.csv"
            pairs = read_pairs(path)[offset:][:limit]
            metric = FILES[kind][0]
            spec = CONTEXT_RELEVANCE_SPEC if kind == "cr" else parse_metric(metric)
            scheduler = Scheduler(engine, emb, store, settings, seed=seed, progress=progress)
            output = scheduler.run(pair_samples(kind, pairs, chunk_sentences), [spec])
            outcomes = output.outcomes[spec.name]
            good, bad = outcomes[0::2], outcomes[1::2]
            usage, wall = total_usage(output.usage), output.wall_seconds
            soft = _soft(outcomes, output.traces[spec.name]) if settings.soft else None
            results.append(FileAgreement(
                file=f"{kind}.csv", metric=metric, count=count_pairs(good, bad), paper=PAPER.get(metric),
                nan_reasons=dict(Counter(v.reason for v in outcomes if isinstance(v, Nan))),
                mean_good=_mean([score_value(v) for v in good]), mean_bad=_mean([score_value(v) for v in bad]),
                judge_calls=usage.judge_calls, completion_tokens=usage.completion_tokens,
                engine_seconds=usage.engine_seconds, wall_seconds=wall,
                scores=[(score_value(g), score_value(b)) for g, b in zip(good, bad, strict=True)],
                soft_count=count_pairs(soft[0::2], soft[1::2]) if soft is not None else None,
                soft_scores=list(zip(soft[0::2], soft[1::2], strict=True)) if soft is not None else None,
                sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
            ))
            if on_file is not None:
                on_file(report())
    finally:
        store.close()
    return report()
