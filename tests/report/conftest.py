"""Run folders built by hand (scores.jsonl and summary.json) or by the scripted judge, and the CLI."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from localeval.config import RunConfig
from localeval.nan import Nan
from localeval.report.aggregate import summarize
from localeval.store.run_folder import write_scores, write_summary

# A value per sample: a float, or a string naming the NaN reason.
Value = float | str


def write_run(folder: Path, metrics: Mapping[str, Sequence[Value]], *, ids: Sequence[str] | None = None,
              answerable: Sequence[bool | None] | None = None,
              traces: Mapping[str, Sequence[dict[str, Any]]] | None = None,
              usage: Mapping[str, dict[str, Any]] | None = None, info: Mapping[str, Any] | None = None) -> Path:
    """Write a run folder with these per-sample values; summary.json from localeval's own summarize, its run
    record ``info`` (default: one judge, the default settings, batch-invariant)."""
    n = len(next(iter(metrics.values())))
    ids = list(ids) if ids is not None else [f"q{i + 1}" for i in range(n)]
    rows = []
    for i, sample_id in enumerate(ids):
        row: dict[str, Any] = {"id": sample_id, "metrics": {}}
        for name, values in metrics.items():
            if i >= len(values):
                continue  # this sample lacks the metric
            v = values[i]
            trace = (traces or {}).get(name, [{}] * n)[i]
            row["metrics"][name] = {"value": None if isinstance(v, str) else v,
                                    "nan_reason": v if isinstance(v, str) else None, "trace": trace}
        if answerable is not None and answerable[i] is not None:
            row["answerable"] = answerable[i]
        rows.append(row)
    summaries = {name: summarize(name, [Nan(v) if isinstance(v, str) else v for v in values]).to_dict()  # type: ignore[arg-type]
                 for name, values in metrics.items()}
    folder.mkdir(parents=True, exist_ok=True)
    write_scores(folder, rows)
    record = {"judge": "hand-made", "invariance": {"batch_invariant": True, "note": "hand-made"},
              "config": RunConfig(judge_fingerprint="hand-made").to_dict()} if info is None else dict(info)
    write_summary(folder, {"metrics": summaries, "usage": dict(usage or {}), "total": {"samples": n},
                           "run": record})
    return folder


@pytest.fixture
def make_run(tmp_path: Path) -> Callable[..., Path]:
    """make_run("a", {"faithfulness": [0.5, "no_statements"]}, ...) -> the run folder."""

    def make(name: str, metrics: Mapping[str, Sequence[Value]], **kwargs: Any) -> Path:
        return write_run(tmp_path / name, metrics, **kwargs)

    return make


def run_cli(argv: Sequence[str]) -> int:
    """The ``localeval`` command (LocalevalError -> exit 1 with the message on stderr)."""
    from localeval import cli

    return cli.main(list(argv))


@pytest.fixture
def cli() -> Callable[[Sequence[str]], int]:
    """Run a ``localeval`` command line; returns its exit code."""
    return run_cli


SCRIPTED_ROWS = [
    {"id": "a", "question": "Where does the river Alpha flow?",
     "answer": "The river Alpha flows into the northern sea. It is very long.",
     "contexts": ["The river Alpha flows into the northern sea.", "Cats sleep a lot."],
     "ground_truth": "The river Alpha flows into the northern sea."},
    {"id": "b", "question": "What colour are bananas?", "answer": "Bananas are yellow when ripe.",
     "contexts": ["Monkeys climb trees.", "Bananas are yellow when ripe."],
     "ground_truth": "Bananas are yellow when ripe."},
    {"id": "c", "question": "How tall is the Beta tower?", "answer": "The Beta tower is purple.",
     "contexts": ["The Beta tower is 300 metres tall."],
     "ground_truth": "The Beta tower is 300 metres tall."},
    {"id": "<b>d&amp;</b>", "question": "Who wrote the Zeta manual?",
     "answer": "I don't know, the context does not say.",
     "contexts": ["The Zeta manual has ten pages."], "ground_truth": "The corpus does not say.",
     "answerable": False},
]
SCRIPTED_METRICS = ("faithfulness,context_precision,precision_at_k,context_recall,answer_relevancy,"
                    "factual_correctness,noise_sensitivity,noise_sensitivity_irrelevant")


@pytest.fixture
def scripted_run(tmp_path: Path) -> Path:
    """A run folder written by localeval.evaluate with the word-overlap scripted judge."""
    import localeval
    from localeval.embed import HashEmbedder
    from localeval.engine.scripted import ScriptedEngine, rule_script

    out = tmp_path / "scripted"
    localeval.evaluate(SCRIPTED_ROWS, metrics=SCRIPTED_METRICS, judge=ScriptedEngine(rule_script),
                       embedder=HashEmbedder(), out=out, progress=False)
    return out


LONG_CONTEXT = ("The Beta tower is 300 metres tall. " + "It was built of grey stone over many years, " * 8
                + "and its last stone was laid by the mason Quillon Varda.")
HOSTILE = "<script>document.title='pwned'</script>"
TEXT_ROWS = [
    {"id": "alpha", "user_input": "Where does the river Alpha flow?",
     "response": "The river Alpha flows into the northern sea.",
     "retrieved_contexts": ["The river Alpha flows into the northern sea.", "Cats sleep a lot."],
     "retrieved_context_ids": ["alpha-1", "cats-1"], "reference_context_ids": ["alpha-1"],
     "reference": "The river Alpha flows into the northern sea."},
    {"id": "beta", "user_input": "How tall is the Beta tower?",
     "response": f"The Beta tower is purple. {HOSTILE}",
     "retrieved_contexts": ["Monkeys climb trees.", "Owls hunt at night.", LONG_CONTEXT],
     "retrieved_context_ids": ["monkeys-1", "owls-1", "beta-1"], "reference_context_ids": ["beta-1", "beta-2"],
     "reference": "The Beta tower is 300 metres tall."},
    {"id": "gamma", "user_input": "What colour are bananas?", "response": "Bananas are yellow when ripe.",
     "retrieved_contexts": ["Bananas are yellow when ripe."], "retrieved_context_ids": ["banana-1"],
     "reference_context_ids": ["banana-1"], "reference": "Bananas are yellow when ripe."},
]
TEXT_METRICS = "faithfulness,context_precision,mrr,ndcg,hit_rate,id_context_precision,id_context_recall"


@pytest.fixture
def texts_run(tmp_path: Path) -> Path:
    """A scripted-judge run whose worst sample ("beta") has a hostile response and a long context."""
    import localeval
    from localeval.engine.scripted import ScriptedEngine, rule_script

    out = tmp_path / "texts"
    localeval.evaluate(TEXT_ROWS, metrics=TEXT_METRICS, judge=ScriptedEngine(rule_script), out=out,
                       progress=False, report=False)
    return out
