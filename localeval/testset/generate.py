"""Test sets from a folder of documents: graph, question writing, style, and a judge check of every row.

Each candidate row is a generator (write, restyle, check) and all of a wave's candidates run together
through the scheduler, so a wave costs a handful of engine calls. A row is kept only if it passes its
check: an answerable row's reference must be supported by its reference contexts (its statements,
judged by NLI against the joined contexts: at least ``min_support`` of them, by default all; 0 turns the
check off); an unanswerable row must not be answered by any of the ``top_k`` chunks most similar to it;
no row may copy a name from the prompts' examples (small judges do). Rejected rows
are counted by reason and kept in ``rejected_rows``. A type that falls short gets more candidates in a
further wave, up to ``max_waves``; what is still missing is reported, never padded.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Generator, Mapping, Sequence
from pathlib import Path
from typing import Any

from localeval.config import RunConfig
from localeval.engine.base import JudgeEngine
from localeval.errors import LocalevalError
from localeval.nan import Nan
from localeval.prompts import NLI, STATEMENTS, NLIInput, StatementsInput
from localeval.run.scheduling import build_scheduler
from localeval.scheduler import Scheduler, Usage, total_usage
from localeval.steps import Ask, Embed, Yielded
from localeval.store.cache import JudgeCache
from localeval.testset.answer_shapes import EXAMPLE_MARKERS, REFUSAL, join_sentences
from localeval.testset.candidates import UNANSWERABLE, Candidate, candidates, parse_mix, plan_counts
from localeval.testset.documents import (
    MAX_CHARS,
    MIN_CHARS,
    OVERLAP,
    chunk_documents,
    documents_hash,
    read_documents,
)
from localeval.testset.graph import (
    SIMILARITY_THRESHOLD,
    KnowledgeGraph,
    Node,
    build_graph,
    load_matching,
    normalise_entity,
)
from localeval.testset.prompts import (
    ANSWERED,
    MULTI_HOP_ABSTRACT,
    MULTI_HOP_SPECIFIC,
    SINGLE_HOP,
    STYLE,
    STYLES,
    UNANSWERABLE_WRITER,
    AnsweredInput,
    MultiHopAbstractInput,
    MultiHopSpecificInput,
    SingleHopInput,
    StyleInput,
    UnanswerableInput,
)
from localeval.testset.result import Rejected, TestsetResult

DEFAULT_STYLES: tuple[str, ...] = tuple(STYLES)
MIN_SUPPORT = 1.0  # share of the reference's statements its contexts must support
TOP_K = 3  # chunks an unanswerable question is checked against
OVERSAMPLE = 1.5  # candidates written per row still needed, in each wave
MAX_WAVES = 3


def plan_targets(size: int, mix: str | Mapping[str, float] | None, unanswerable: float,
                 styles: Sequence[str]) -> dict[str, int]:
    """Rows per type, after checking the options (so a command can fail before it loads any model)."""
    unknown = [s for s in styles if s not in STYLES]
    if unknown or not styles:
        raise LocalevalError(f"unknown query style(s): {', '.join(unknown) or '(none given)'}; "
                             f"known: {', '.join(STYLES)}")
    return plan_counts(size, parse_mix(mix), unanswerable)


def _writer_ask(cand: Candidate, graph: KnowledgeGraph) -> Ask:
    texts = [graph.node(i).text for i in cand.node_ids]
    if cand.synthesizer == "single_hop_specific":
        return Ask(SINGLE_HOP, SingleHopInput(context=texts[0], entity=cand.focus))
    if cand.synthesizer == "multi_hop_abstract":
        return Ask(MULTI_HOP_ABSTRACT, MultiHopAbstractInput(contexts=texts, theme=cand.focus))
    if cand.synthesizer == "multi_hop_specific":
        return Ask(MULTI_HOP_SPECIFIC, MultiHopSpecificInput(contexts=texts, entity=cand.focus))
    summaries = [graph.node(i).summary for i in cand.node_ids]
    return Ask(UNANSWERABLE_WRITER, UnanswerableInput(topics=list(cand.topics), covered=summaries))


def _copied_example(text: str, nodes: Sequence[Node]) -> str | None:
    """A name from the prompts' examples that ``text`` holds but its source chunks do not."""
    lowered, sources = text.lower(), " ".join(n.text for n in nodes).lower()
    return next((m for m in EXAMPLE_MARKERS if m in lowered and m not in sources), None)


def row_steps(cand: Candidate, graph: KnowledgeGraph, min_support: float = MIN_SUPPORT,
              top_k: int = TOP_K) -> Generator[Yielded, Any, Any]:
    """Write one row, restyle its question, check it; returns the row (a dict) or a Rejected."""
    answerable = cand.synthesizer != UNANSWERABLE
    nodes = [graph.node(i) for i in cand.node_ids]
    written = yield _writer_ask(cand, graph)
    asked = written.question.strip()
    reference = join_sentences(written.reference) if answerable else REFUSAL
    if copied := _copied_example(f"{asked} {reference}", nodes):
        return Rejected("copied_example", asked, reference, f"mentions {copied!r} from a prompt example")
    question = asked
    if STYLES.get(cand.style):
        styled = yield Ask(STYLE, StyleInput(question=asked, style=STYLES[cand.style]))
        question = styled.question.strip() or asked
        if copied := _copied_example(question, nodes):
            return Rejected("copied_example", question, reference, f"mentions {copied!r} from a prompt example")
    if not question or not reference:
        return Rejected("empty_question", question, reference)
    if answerable and min_support > 0:
        # The well-formed question reads best for the checks; the restyled one asks the same thing.
        split = yield Ask(STATEMENTS, StatementsInput(question=asked, answer=reference))
        statements = list(dict.fromkeys(s.strip() for s in split.statements if s.strip()))
        if not statements:
            return Rejected("no_statements", question, reference)
        verdicts = yield Ask(NLI, NLIInput(context="\n\n".join(n.text for n in nodes), statements=statements))
        supported = sum(v.verdict for v in verdicts.verdicts)
        if supported < min_support * len(statements):
            return Rejected("unsupported_reference", question, reference,
                            f"{supported} of {len(statements)} statements supported")
    elif not answerable:
        vectors = yield Embed((asked,))
        near = graph.most_similar(vectors[0], top_k)
        checks = yield [Ask(ANSWERED, AnsweredInput(context=n.text, question=asked)) for n in near]
        answered_by = [n.id for n, c in zip(near, checks, strict=True) if c.verdict]
        if answered_by:
            return Rejected("answered_by_documents", question, reference, "answered by " + ", ".join(answered_by))
        nodes = []
    return {
        "user_input": question,
        "reference": reference,
        "reference_contexts": [n.text for n in nodes],
        "reference_context_ids": [n.id for n in nodes],
        "synthesizer": cand.synthesizer,
        "query_style": cand.style,
        "answerable": answerable,
    }


def generate_testset(
    docs_dir: str | Path,
    size: int,
    *,
    judge: JudgeEngine | None,
    embedder: Any,
    config: RunConfig | None = None,
    mix: str | Mapping[str, float] | None = None,
    unanswerable: float = 0.1,
    styles: Sequence[str] = DEFAULT_STYLES,
    cache: str | Path | JudgeCache | None = None,
    graph_out: str | Path | None = None,
    min_support: float = MIN_SUPPORT,
    max_chars: int = MAX_CHARS,
    overlap: int = OVERLAP,
    min_chars: int = MIN_CHARS,
    similarity_threshold: float = SIMILARITY_THRESHOLD,
    top_k: int = TOP_K,
    oversample: float = OVERSAMPLE,
    max_waves: int = MAX_WAVES,
    progress: bool = False,
) -> TestsetResult:
    """``size`` checked rows from the documents in ``docs_dir``: the mix of answerable types (default single hop
    specific 0.5, multi-hop abstract 0.25, multi-hop specific 0.25) plus an ``unanswerable`` share of the size.

    ``config``: the judge settings and the seed (also of the choices of chunks, entities and styles).
    Deterministic for a seed; with a ``cache`` file a rerun asks the judge nothing it has answered before.
    ``graph_out``: where to save the knowledge graph, reused when documents and embedder match.
    """
    started = time.perf_counter()
    config = config or RunConfig()
    targets = plan_targets(size, mix, unanswerable, styles)
    docs = read_documents(docs_dir)
    chunks = chunk_documents(docs, max_chars, overlap, min_chars)
    doc_hash = documents_hash(docs, max_chars, overlap, min_chars)
    store = cache if isinstance(cache, JudgeCache) else JudgeCache(cache) if cache else JudgeCache.disabled()
    usage: dict[str, Usage] = {}
    try:
        scheduler = build_scheduler(config, judge, embedder, store, progress)
        embedder_id = str(getattr(embedder, "fingerprint", "none"))
        graph = load_matching(graph_out, doc_hash, embedder_id, similarity_threshold) if graph_out else None
        reused = graph is not None
        if graph is None:
            graph, usage = build_graph(chunks, scheduler, doc_hash, similarity_threshold)
            if graph_out:
                graph.save(graph_out)
        if not graph.nodes:
            raise LocalevalError("the judge extracted nothing from any chunk (" + "; ".join(graph.failed[:3]) + ")")
        kept, rejected, waves = _waves(graph, scheduler, targets, config.seed, styles, min_support, top_k,
                                       oversample, max_waves, usage)
    finally:
        if store is not cache:
            store.close()
    rows = [{"id": f"q{i + 1:03d}", **row} for i, row in enumerate(r for k in targets for r in kept[k])]
    result = TestsetResult(rows, targets, dict(Counter(r["reason"] for r in rejected)), rejected, graph, reused,
                           total_usage(usage), scheduler.engine_calls, waves, time.perf_counter() - started)
    if len(chunks) > len(graph.nodes) and not reused:
        result.warnings.append(f"{len(chunks) - len(graph.nodes)} chunks were left out (extraction failed)")
    return result


def _waves(graph: KnowledgeGraph, scheduler: Scheduler, targets: dict[str, int], seed: int,
           styles: Sequence[str], min_support: float, top_k: int, oversample: float, max_waves: int,
           usage: dict[str, Usage]) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]], int]:
    """Write and check candidates in waves until every type has its rows or its candidates run out."""
    pools = {k: candidates(graph, k, seed, styles) for k in targets}
    taken = dict.fromkeys(targets, 0)
    kept: dict[str, list[dict[str, Any]]] = {k: [] for k in targets}
    rejected: list[dict[str, Any]] = []
    questions: set[str] = set()
    waves = 0
    while waves < max_waves:
        batch: list[Candidate] = []
        for k, n in targets.items():
            need = n - len(kept[k])
            if need > 0:
                more = pools[k][taken[k] : taken[k] + math.ceil(need * oversample)]
                taken[k] += len(more)
                batch.extend(more)
        if not batch:
            break
        waves += 1
        outcomes, spent = scheduler.run_tasks([(c.synthesizer, row_steps(c, graph, min_support, top_k))
                                               for c in batch])
        for name, u in spent.items():
            usage.setdefault(name, Usage()).add(u)
        for cand, outcome in zip(batch, outcomes, strict=True):
            if isinstance(outcome, Nan):
                outcome = Rejected(f"judge_{outcome.reason}")
            elif isinstance(outcome, dict) and normalise_entity(outcome["user_input"]) in questions:
                outcome = Rejected("duplicate_question", outcome["user_input"], outcome["reference"])
            if isinstance(outcome, Rejected):
                rejected.append({"reason": outcome.reason, "synthesizer": cand.synthesizer,
                                 "source_ids": list(cand.node_ids), "focus": cand.focus or list(cand.topics),
                                 "user_input": outcome.question, "reference": outcome.reference,
                                 "detail": outcome.detail})
            elif len(kept[cand.synthesizer]) < targets[cand.synthesizer]:
                questions.add(normalise_entity(outcome["user_input"]))
                kept[cand.synthesizer].append(outcome)
    return kept, rejected, waves


__all__ = ["DEFAULT_STYLES", "generate_testset", "plan_targets", "row_steps"]
