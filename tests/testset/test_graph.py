"""The knowledge graph: links by summary similarity and shared entities, failed chunks, save and reuse."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from localeval.embed import HashEmbedder
from localeval.engine.base import Choice
from localeval.engine.scripted import ScriptedEngine
from localeval.scheduler import Scheduler
from localeval.testset.documents import Chunk
from localeval.testset.graph import (
    KnowledgeGraph,
    Node,
    build_graph,
    link,
    load_matching,
    normalise_entity,
    unique_names,
)

from .fakes import handbook_script, override


def _node(node_id: str, vector: list[float], entities: list[str]) -> Node:
    v = np.asarray(vector, dtype=np.float32)
    return Node(node_id, "f.md", f"text {node_id}", f"summary {node_id}", entities, ["theme"], v / np.linalg.norm(v))


def test_entities_compare_without_case_accents_punctuation_or_article() -> None:
    assert normalise_entity("The Finance Team!") == normalise_entity("finance  team") == "finance team"
    assert normalise_entity("Zürich office") == "zurich office"
    assert unique_names(["Ledger", "ledger.", " ", "The Ledger", "Keyward"]) == ["Ledger", "Keyward"]


def test_similar_summaries_and_shared_entities_make_edges() -> None:
    a = _node("a", [1, 0, 0], ["Ledger", "Alpha City"])
    b = _node("b", [0.9, 0.1, 0], ["Harbor Express"])  # cosine 0.99 with a
    c = _node("c", [0, 0, 1], ["the ledger", "alpha city", "Badge"])  # orthogonal to a, two shared entities
    d = _node("d", [0, 1, 0], ["Nothing"])
    edges = link([a, b, c, d], threshold=0.7)
    assert {(e.a, e.b, e.kind) for e in edges} == {("a", "b", "similar"), ("a", "c", "entity")}
    shared = next(e for e in edges if e.kind == "entity")
    assert shared.shared == ("alpha city", "ledger") and shared.weight == 2.0
    graph = KnowledgeGraph([a, b, c, d], edges, "h", "e")
    assert graph.neighbours("a") == ["c", "b"]  # strongest first: 2 shared entities > cosine 0.99
    assert graph.neighbours("a", "similar") == ["b"]
    assert graph.neighbours("d") == []
    assert [n.id for n in graph.most_similar(np.array([0.1, 0, 1.0]), 2)] == ["c", "a"]


def test_a_higher_threshold_drops_similarity_edges() -> None:
    a, b = _node("a", [1, 0.3, 0], []), _node("b", [1, -0.3, 0], [])
    assert [e.kind for e in link([a, b], 0.8)] == ["similar"]
    assert link([a, b], 0.95) == []


def _chunks() -> list[Chunk]:
    return [
        Chunk("a.md#1", "a.md", "Trains", "Trains\nStaff take the Harbor Express to Alpha City."),
        Chunk("a.md#2", "a.md", "Hotels", "Hotels\nStaff sleep at the Alpha Hotel near Alpha City."),
        Chunk("b.md#1", "b.md", "Leave", "Leave\nLeave is booked in Ledger."),
    ]


def test_build_graph_extracts_in_one_engine_call_and_embeds_in_one_embed_call() -> None:
    engine, embedder = ScriptedEngine(handbook_script), HashEmbedder()
    graph, usage = build_graph(_chunks(), Scheduler(engine, embedder, progress=False), "hash")
    assert len(engine.calls) == 1 and len(engine.calls[0]) == 3
    assert len(embedder.calls) == 1 and len(embedder.calls[0]) == 3
    assert [n.entities for n in graph.nodes] == [["Harbor Express", "Alpha City"], ["Alpha Hotel", "Alpha City"],
                                                 ["Ledger"]]
    assert [(e.a, e.b, e.shared) for e in graph.edges if e.kind == "entity"] == [("a.md#1", "a.md#2", ("alpha city",))]
    assert all(abs(float(np.linalg.norm(n.vector)) - 1) < 1e-5 for n in graph.nodes)
    assert usage["extract"].judge_calls == 3 and graph.embedder == embedder.fingerprint == "hash:64"


def test_a_chunk_whose_extraction_fails_is_left_out_and_listed() -> None:
    def cut(data: dict) -> Choice:
        return Choice('{"summary": "Leave', 40, "length") if "Ledger" in data["text"] else handbook_script(
            "testset_extract", data, None)  # type: ignore[arg-type]

    script = override(testset_extract=lambda d: cut(d))
    graph, _ = build_graph(_chunks(), Scheduler(ScriptedEngine(script), HashEmbedder(), progress=False), "h")
    assert [n.id for n in graph.nodes] == ["a.md#1", "a.md#2"]
    assert graph.failed == ["b.md#1: truncated"]


def test_save_load_round_trip_and_reuse_only_when_documents_and_embedder_match(tmp_path: Path) -> None:
    graph, _ = build_graph(_chunks(), Scheduler(ScriptedEngine(handbook_script), HashEmbedder(), progress=False), "h1")
    path = graph.save(tmp_path / "g" / "graph.json")
    data = json.loads(path.read_text())
    assert data["documents_hash"] == "h1" and len(data["nodes"]) == 3
    again = KnowledgeGraph.load(path)
    assert [n.id for n in again.nodes] == [n.id for n in graph.nodes]
    assert again.edges == graph.edges
    assert np.allclose(again.nodes[0].vector, graph.nodes[0].vector)
    assert load_matching(path, "h1", "hash:64", graph.threshold) is not None
    assert load_matching(path, "h2", "hash:64", graph.threshold) is None  # documents changed
    assert load_matching(path, "h1", "other-embedder", graph.threshold) is None
    assert load_matching(tmp_path / "missing.json", "h1", "hash:64", 0.7) is None
    relinked = load_matching(path, "h1", "hash:64", 1.01)  # another threshold: same nodes, links recomputed
    assert relinked is not None and not [e for e in relinked.edges if e.kind == "similar"]
    (tmp_path / "bad.json").write_text("{not json")
    assert load_matching(tmp_path / "bad.json", "h1", "hash:64", 0.7) is None
