"""Synthetic test sets from a folder of documents: knowledge graph, question writers, judge-checked rows."""

from localeval.testset.candidates import DEFAULT_MIX, SYNTHESIZERS, UNANSWERABLE, parse_mix, plan_counts
from localeval.testset.documents import Chunk, Document, chunk_documents, read_documents
from localeval.testset.generate import DEFAULT_STYLES, generate_testset
from localeval.testset.graph import KnowledgeGraph, build_graph
from localeval.testset.result import NOTE, TestsetResult

__all__ = [
    "DEFAULT_MIX",
    "DEFAULT_STYLES",
    "NOTE",
    "SYNTHESIZERS",
    "UNANSWERABLE",
    "Chunk",
    "Document",
    "KnowledgeGraph",
    "TestsetResult",
    "build_graph",
    "chunk_documents",
    "generate_testset",
    "parse_mix",
    "plan_counts",
    "read_documents",
]
