"""How a case of ``ragas-0.4.3-more.jsonl`` becomes a sample, a metric spec, a judge script and an embedder.

Imported by ``test_conformance.py`` (pytest puts this folder on the path); not a test module itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from localeval.data.sample import Sample
from localeval.embed import HashEmbedder

MORE = Path(__file__).parent / "vectors" / "ragas-0.4.3-more.jsonl"
CASES = [json.loads(line) for line in MORE.read_text().splitlines() if line.strip()]
Q, RESP, REF = "the user input", "the response", "the reference"


def _names(prefix: str, n: int) -> list[str]:
    return [f"{prefix} {i}" for i in range(n)]


def criteria_file(folder: Path) -> Path:
    """A criteria file with the two criteria the vectors score: a binary one and a 1-to-5 one."""
    path = folder / "vector_criteria.toml"
    path.write_text('[critic]\ndefinition = "scripted"\nfields = ["user_input", "response"]\n\n'
                    '[rubric]\ndefinition = "scripted"\nfields = ["user_input", "response"]\nscale = 5\n')
    return path


def _criterion(case: dict[str, Any], folder: Path) -> tuple[str, Any]:
    params, votes = case["params"], case["inputs"]["votes"]
    path = criteria_file(folder)
    if params["scale"] == "binary":
        name = f"{path}:critic:strictness={params['strictness']}"

        def script(label: str, data: dict, request: Any) -> Any:
            answers = [{"reason": "", "verdict": v} for v in votes]
            return answers if request.n > 1 else answers[0]
    else:
        name = f"{path}:rubric"

        def script(label: str, data: dict, request: Any) -> Any:
            return {"reason": "", "rating": votes[0]}
    return name, script


def setup(case: dict[str, Any], folder: Path) -> tuple[str, Sample, Any, HashEmbedder | None]:
    """The metric spec to parse, the sample, the judge script and the embedder (None: no embedder)."""
    metric, params, x = case["metric"], case["params"], case["inputs"]
    name = ":".join([metric, *(f"{k}={v}" for k, v in params.items())])
    sample = dict(user_input=Q, response=RESP, reference=REF, retrieved_contexts=("ctx 0", "ctx 1"))
    embedder = None
    ratings = x.get("ratings", [])

    def two_judges(label: str, data: dict, request: Any) -> Any:
        return {"reason": "", "rating": ratings[int(label.endswith("_2"))]}

    script: Any = two_judges
    if metric == "context_entity_recall":

        def script(label: str, data: dict, request: Any) -> Any:
            assert label == "entities"
            return {"entities": x["reference_entities"] if data["text"] == REF else x["context_entities"]}

    elif metric == "answer_accuracy":
        assert ratings
    elif metric in ("context_relevance", "response_groundedness"):
        sample["retrieved_contexts"] = tuple(x["retrieved_contexts"])
        sample["response"] = x.get("response", RESP)
    elif metric in ("answer_correctness", "semantic_similarity"):
        table = {RESP: x["response_vector"], REF: x["reference_vector"]}
        embedder = HashEmbedder(dim=len(x["response_vector"]), fixed=table)
        resp_v, ref_v = x.get("response_verdicts", []), x.get("reference_verdicts", [])

        def script(label: str, data: dict, request: Any) -> Any:
            if label == "statements":
                mine = data["answer"] == RESP
                return {"statements": _names("response st" if mine else "reference st",
                                             len(resp_v if mine else ref_v))}
            verdicts = resp_v if data["context"] == REF else ref_v
            return {"verdicts": [{"reason": "", "verdict": v} for v in verdicts]}

    elif metric == "criterion":
        name, script = _criterion(case, folder)
    else:  # pragma: no cover - a new metric in the file
        raise AssertionError(metric)
    return name, Sample(id="case", **sample), script, embedder
