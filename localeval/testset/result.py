"""A generated test set: the kept rows, the rejected ones and why, what was asked for, and the printed report."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.errors import writing
from localeval.scheduler import Usage
from localeval.store.run_folder import KEPT, RERUN, write_atomic
from localeval.testset.graph import KnowledgeGraph

NOTE = ("These rows have no response or retrieved_contexts: run your RAG system on each user_input and add "
        "them (response, retrieved_contexts) before `localeval evaluate`.")


@dataclass(frozen=True)
class Rejected:
    """A candidate row that failed its check (or could not be written)."""

    # unsupported_reference, no_statements, answered_by_documents, copied_example, duplicate_question,
    # empty_question, or judge_<nan reason> when an ask failed
    reason: str
    question: str = ""
    reference: str = ""
    detail: str = ""


@dataclass
class TestsetResult:
    """The kept rows, what was asked for, what was rejected and why, and what it cost."""

    __test__ = False  # not a pytest test class, despite its name

    rows: list[dict[str, Any]]
    targets: dict[str, int]
    rejected: dict[str, int]
    rejected_rows: list[dict[str, Any]]
    graph: KnowledgeGraph
    graph_reused: bool
    usage: Usage
    engine_calls: int
    waves: int
    seconds: float
    warnings: list[str] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        """Kept rows per type."""
        found = Counter(r["synthesizer"] for r in self.rows)
        return {k: found.get(k, 0) for k in self.targets}

    @property
    def short(self) -> dict[str, int]:
        """Rows missing per type (asked for but not kept)."""
        return {k: n - self.counts[k] for k, n in self.targets.items() if n > self.counts[k]}

    def write(self, path: str | Path) -> Path:
        """The rows as JSON lines (what ``localeval.data.load_samples`` reads)."""
        out = Path(path)
        with writing(out.parent, KEPT, RERUN):
            out.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(out, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self.rows))
        return out

    def summary(self) -> str:
        """The printed report: rows per type against the target, rejections by reason, the graph, the cost."""
        lines = [f"{'type':<22} {'kept':>5} {'asked':>6}"]
        for k, n in self.targets.items():
            lines.append(f"{k:<22} {self.counts[k]:>5} {n:>6}")
        lines.append(f"{'total':<22} {len(self.rows):>5} {sum(self.targets.values()):>6}")
        if self.rejected:
            lines.append("rejected: " + ", ".join(f"{r} {n}" for r, n in sorted(self.rejected.items())))
        else:
            lines.append("rejected: none")
        if self.short:
            lines.append("short of the target after " + f"{self.waves} waves: "
                         + ", ".join(f"{k} {n}" for k, n in self.short.items()))
        g = self.graph
        kinds = Counter(e.kind for e in g.edges)
        lines.append(f"graph: {len(g.nodes)} chunks, {kinds['similar']} similarity and {kinds['entity']} "
                     f"shared-entity links" + (" (reused)" if self.graph_reused else "")
                     + (f"; extraction failed for {len(g.failed)} chunks" if g.failed else ""))
        u = self.usage
        lines.append(f"judge: {u.judge_calls} generations, {u.cache_hits} from the cache, {self.engine_calls} engine "
                     f"calls, {u.prompt_tokens} prompt + {u.completion_tokens} completion tokens; {self.seconds:.1f} s")
        lines.extend(self.warnings)
        return "\n".join(lines)
