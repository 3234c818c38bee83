"""The knowledge graph of a document folder: chunks with what the judge extracted, linked by similarity
of their summaries and by the entities they share. Saved as JSON so a second run reuses it."""

from __future__ import annotations

import itertools
import json
import re
import unicodedata
from collections.abc import Generator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from localeval.errors import writing
from localeval.nan import Nan
from localeval.scheduler import Scheduler, Usage
from localeval.steps import Ask, Embed, Yielded
from localeval.store.run_folder import KEPT, RERUN, write_atomic
from localeval.testset.answer_shapes import join_sentences
from localeval.testset.documents import Chunk
from localeval.testset.prompts import EXTRACT, ExtractInput, ExtractOutput

SIMILARITY_THRESHOLD = 0.7  # cosine of two summaries' embeddings above which chunks are linked
FORMAT = 1
EdgeKind = Literal["similar", "entity"]


@dataclass
class Node:
    """A chunk, its extraction and the embedding of its summary (unit length)."""

    id: str
    source: str
    text: str
    summary: str
    entities: list[str]
    themes: list[str]
    vector: np.ndarray = field(repr=False)


@dataclass(frozen=True)
class Edge:
    """A link between two chunks: similar summaries (weight: cosine) or shared entities (weight: count)."""

    a: str
    b: str
    kind: EdgeKind
    weight: float
    shared: tuple[str, ...] = ()  # the shared entities, normalised


def normalise_entity(name: str) -> str:
    """The form entities are compared in: case, accents, punctuation and a leading article ignored."""
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    words = re.sub(r"[^a-z0-9]+", " ", folded).split()
    if words and words[0] in ("the", "a", "an"):
        words = words[1:]
    return " ".join(words)


def unique_names(names: Sequence[str]) -> list[str]:
    """Names without repeats (compared normalised) or empties, first spelling kept, in order."""
    seen: set[str] = set()
    out = []
    for name in names:
        key = normalise_entity(name)
        if key and key not in seen:
            seen.add(key)
            out.append(name.strip())
    return out


def link(nodes: Sequence[Node], threshold: float = SIMILARITY_THRESHOLD) -> list[Edge]:
    """Edges between every pair of nodes whose summaries are similar enough or that share an entity."""
    edges: list[Edge] = []
    keys = [{normalise_entity(e) for e in n.entities} - {""} for n in nodes]
    for (i, a), (j, b) in itertools.combinations(enumerate(nodes), 2):
        cosine = float(np.dot(a.vector, b.vector))
        if cosine >= threshold:
            edges.append(Edge(a.id, b.id, "similar", round(cosine, 6)))
        shared = tuple(sorted(keys[i] & keys[j]))
        if shared:
            edges.append(Edge(a.id, b.id, "entity", float(len(shared)), shared))
    return edges


@dataclass
class KnowledgeGraph:
    """Nodes and edges, with what they were built from (the documents' hash, the embedder)."""

    nodes: list[Node]
    edges: list[Edge]
    documents_hash: str
    embedder: str
    threshold: float = SIMILARITY_THRESHOLD
    failed: list[str] = field(default_factory=list)  # chunk ids whose extraction failed, with the reason

    def node(self, node_id: str) -> Node:
        return self._index()[node_id]

    def _index(self) -> dict[str, Node]:
        return {n.id: n for n in self.nodes}

    def neighbours(self, node_id: str, kind: EdgeKind | None = None) -> list[str]:
        """Ids linked to ``node_id`` (by edges of ``kind``, or any), strongest link first."""
        found: dict[str, float] = {}
        for e in self.edges:
            if (kind is None or e.kind == kind) and node_id in (e.a, e.b):
                other = e.b if e.a == node_id else e.a
                found[other] = max(found.get(other, 0.0), e.weight)
        return sorted(found, key=lambda k: (-found[k], k))

    def most_similar(self, vector: np.ndarray, k: int) -> list[Node]:
        """The ``k`` nodes whose summary embeddings are closest to ``vector``."""
        if not self.nodes:
            return []
        matrix = np.stack([n.vector for n in self.nodes])
        scores = matrix @ _unit(np.asarray(vector, dtype=np.float32))
        order = sorted(range(len(self.nodes)), key=lambda i: (-float(scores[i]), i))
        return [self.nodes[i] for i in order[:k]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "documents_hash": self.documents_hash,
            "embedder": self.embedder,
            "threshold": self.threshold,
            "failed": self.failed,
            "nodes": [{**{k: v for k, v in asdict(n).items() if k != "vector"},
                       "vector": [round(float(x), 7) for x in n.vector]} for n in self.nodes],
            "edges": [{**asdict(e), "shared": list(e.shared)} for e in self.edges],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> KnowledgeGraph:
        nodes = [Node(**{**n, "vector": np.asarray(n["vector"], dtype=np.float32)}) for n in data["nodes"]]
        edges = [Edge(e["a"], e["b"], e["kind"], float(e["weight"]), tuple(e["shared"])) for e in data["edges"]]
        return cls(nodes, edges, data["documents_hash"], data["embedder"], float(data["threshold"]),
                   list(data.get("failed", [])))

    def save(self, path: str | Path) -> Path:
        out = Path(path)
        with writing(out.parent, KEPT, RERUN):
            out.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(out, json.dumps(self.to_dict(), ensure_ascii=False, indent=1))  # never half a graph
        return out

    @classmethod
    def load(cls, path: str | Path) -> KnowledgeGraph:
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))


def load_matching(path: str | Path, documents_hash: str, embedder: str, threshold: float) -> KnowledgeGraph | None:
    """The graph saved at ``path`` if it was built from these documents with this embedder, else None."""
    file = Path(path)
    if not file.is_file():
        return None
    try:
        graph = KnowledgeGraph.load(file)
    except (ValueError, KeyError, TypeError):
        return None  # unreadable or an older format: rebuild
    if (graph.documents_hash, graph.embedder) != (documents_hash, embedder):
        return None
    if graph.threshold != threshold:
        graph.threshold, graph.edges = threshold, link(graph.nodes, threshold)
    return graph


def extraction_steps(chunk: Chunk) -> Generator[Yielded, Any, Any]:
    """Ask the judge for the chunk's summary, entities and themes, embed the summary; returns a Node."""
    out: ExtractOutput = yield Ask(EXTRACT, ExtractInput(text=chunk.text))
    summary = join_sentences(out.summary) or chunk.text
    vectors = yield Embed((summary,))
    return Node(chunk.id, chunk.source, chunk.text, summary, unique_names(out.entities), unique_names(out.themes),
                _unit(np.asarray(vectors[0], dtype=np.float32)))


def _unit(v: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else v


def build_graph(
    chunks: Sequence[Chunk], scheduler: Scheduler, documents_hash: str, threshold: float = SIMILARITY_THRESHOLD
) -> tuple[KnowledgeGraph, dict[str, Usage]]:
    """Extract from every chunk in one batched pass, embed the summaries, link the nodes.

    A chunk whose extraction fails (truncated, engine error) is left out and listed in ``failed``.
    """
    outcomes, usage = scheduler.run_tasks([("extract", extraction_steps(c)) for c in chunks])
    nodes = [o for o in outcomes if isinstance(o, Node)]
    failed = [f"{c.id}: {o.reason}" for c, o in zip(chunks, outcomes, strict=True) if isinstance(o, Nan)]
    embedder = str(getattr(scheduler.embedder, "fingerprint", "none"))
    return KnowledgeGraph(nodes, link(nodes, threshold), documents_hash, embedder, threshold, failed), usage
