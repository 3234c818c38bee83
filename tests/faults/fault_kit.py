"""What the fault-injection tests share: samples, the evaluate command's arguments, a command's outcome, the
scores a run folder holds."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


def rows(count: int) -> list[dict[str, object]]:
    """``count`` samples the word-overlap script answers, each asking a few statements."""
    return [{"id": f"r{i}", "user_input": f"Where does river {i} flow?",
             "response": f"River {i} flows into lake {i}. It is long. Owls live by it.",
             "retrieved_contexts": [f"River {i} flows into lake {i}.", "Owls hunt at night."]}
            for i in range(count)]


@dataclass
class Ran:
    code: int
    out: str
    err: str

    def one_line(self) -> str:
        """The one ``localeval: ...`` line the command stopped with (there is no other, and no traceback)."""
        assert "Traceback" not in self.err, self.err
        (line,) = self.err.strip().splitlines()
        assert line.startswith("localeval: "), line
        return line


def evaluate_args(data: Path, out: Path, *more: object) -> list[object]:
    return ["evaluate", data, "--metrics", "faithfulness", "--out", out, "--no-report", "--no-progress", *more]


def scores(out: Path) -> list[dict[str, object]]:
    """scores.jsonl's id and value per row."""
    lines = (out / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    return [{"id": r["id"], "value": r["metrics"]["faithfulness"]["value"]} for r in map(json.loads, lines)]
