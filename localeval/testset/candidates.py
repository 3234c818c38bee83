"""What to write questions from: seeded choices of chunks, entities and themes from the graph.

Pure: no judge. Each question type has a pool of candidates, shuffled with a generator seeded by the
run's seed and the type's name, so a type's choices do not move when another type's share changes.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from localeval.errors import LocalevalError
from localeval.testset.graph import KnowledgeGraph, Node, normalise_entity, unique_names

SYNTHESIZERS = ("single_hop_specific", "multi_hop_abstract", "multi_hop_specific")
UNANSWERABLE = "unanswerable"
DEFAULT_MIX: dict[str, float] = {"single_hop_specific": 0.5, "multi_hop_abstract": 0.25, "multi_hop_specific": 0.25}
CLUSTER = 3  # chunks in a multi-hop abstract cluster (the chunk and its two closest neighbours), at most
MAX_TOPICS = 4


@dataclass(frozen=True)
class Candidate:
    """One question to write: its type, source chunks, focus (entity or theme) and query style."""

    synthesizer: str
    node_ids: tuple[str, ...]
    focus: str  # the entity (single hop, multi-hop specific) or the theme (multi-hop abstract)
    style: str
    topics: tuple[str, ...] = ()  # unanswerable: the themes the question is about


def parse_mix(text: str | Mapping[str, float] | None) -> dict[str, float]:
    """``single_hop_specific=0.5,multi_hop_abstract=0.25`` (or a dict) -> shares over the three types, summing
    to 1; types left out get 0; None gives the default mix."""
    if text is None:
        return dict(DEFAULT_MIX)
    if isinstance(text, str):
        pairs: dict[str, float] = {}
        for item in filter(None, (p.strip() for p in text.split(","))):
            name, sep, value = item.partition("=")
            try:
                pairs[name.strip()] = float(value) if sep else math.nan
            except ValueError:
                pairs[name.strip()] = math.nan
        raw: Mapping[str, float] = pairs
    else:
        raw = text
    unknown = [k for k in raw if k not in SYNTHESIZERS]
    if unknown:
        raise LocalevalError(f"unknown question type(s) in --mix: {', '.join(unknown)}; "
                             f"known: {', '.join(SYNTHESIZERS)}")
    bad = [k for k, v in raw.items() if not (v >= 0 and math.isfinite(v))]
    if bad or not sum(raw.values()) > 0:
        raise LocalevalError("--mix needs non-negative numbers that are not all 0, e.g. "
                             "single_hop_specific=0.5,multi_hop_abstract=0.25,multi_hop_specific=0.25")
    total = sum(raw.values())
    return {k: raw.get(k, 0.0) / total for k in SYNTHESIZERS}


def plan_counts(size: int, mix: Mapping[str, float], unanswerable: float) -> dict[str, int]:
    """Rows per type for ``size`` rows: the unanswerable share first (at least one row when the share is
    above 0 and size is 2 or more), the rest split by the mix with largest remainders (ties: mix order)."""
    if size < 0 or not 0 <= unanswerable <= 1:
        raise LocalevalError("size must be 0 or more and the unanswerable share between 0 and 1")
    n_un = math.floor(size * unanswerable + 0.5)
    if unanswerable > 0 and size >= 2:
        n_un = max(1, n_un)
    n_un = min(size, n_un)
    rest = size - n_un
    exact = {k: rest * mix.get(k, 0.0) for k in SYNTHESIZERS}
    counts = {k: math.floor(v) for k, v in exact.items()}
    by_remainder = sorted(SYNTHESIZERS, key=lambda k: -(exact[k] - counts[k]))
    for k in by_remainder[: rest - sum(counts.values())]:
        counts[k] += 1
    return {**counts, UNANSWERABLE: n_un}


def cluster(graph: KnowledgeGraph, node: Node) -> list[str]:
    """The node and its closest neighbours: by summary similarity, else by shared entities, else the next
    chunk of the same document, so abstract questions are possible even in a sparse graph."""
    near = graph.neighbours(node.id, "similar") or graph.neighbours(node.id)
    if not near:
        same = [n.id for n in graph.nodes if n.source == node.source]
        at = same.index(node.id)
        near = same[at + 1 : at + 2] or same[max(0, at - 1) : at]
    return [node.id, *near[: CLUSTER - 1]]


def candidates(graph: KnowledgeGraph, synthesizer: str, seed: int, styles: Sequence[str]) -> list[Candidate]:
    """Every distinct candidate of one type, in a seeded order, each with a seeded query style."""
    rng = random.Random(f"{seed}:{synthesizer}")
    pool = _pool(graph, synthesizer)
    rng.shuffle(pool)
    return [Candidate(synthesizer, ids, focus, rng.choice(list(styles)), topics) for ids, focus, topics in pool]


def _pool(graph: KnowledgeGraph, synthesizer: str) -> list[tuple[tuple[str, ...], str, tuple[str, ...]]]:
    pool: list[tuple[tuple[str, ...], str, tuple[str, ...]]] = []
    seen: set[tuple[frozenset[str], str]] = set()

    def add(ids: Sequence[str], focus: str, topics: Sequence[str] = ()) -> None:
        key = (frozenset(ids), normalise_entity(focus))
        if key not in seen:
            seen.add(key)
            pool.append((tuple(ids), focus, tuple(topics)))

    if synthesizer == "single_hop_specific":
        for node in graph.nodes:
            for entity in node.entities:
                add([node.id], entity)
    elif synthesizer == "multi_hop_abstract":
        for node in graph.nodes:
            ids = cluster(graph, node)
            if len(ids) > 1:
                for theme in node.themes:
                    add(ids, theme)
    elif synthesizer == "multi_hop_specific":
        for edge in graph.edges:
            if edge.kind == "entity":
                spelled = {normalise_entity(e): e for e in graph.node(edge.a).entities}
                for key in edge.shared:
                    add([edge.a, edge.b], spelled.get(key, key))
    elif synthesizer == UNANSWERABLE:
        for node in graph.nodes:
            ids = cluster(graph, node)
            topics = unique_names([t for i in ids for t in graph.node(i).themes])[:MAX_TOPICS]
            if topics:
                add(ids, "", topics)
    else:
        raise LocalevalError(f"unknown question type {synthesizer!r}")
    return pool
