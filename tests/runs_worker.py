"""Run an evaluation with a slow scripted judge (a subprocess the resume tests can kill)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from localeval import evaluate
from localeval.engine.scripted import ScriptedEngine, rule_script


def slow_script(label, data, request):
    time.sleep(float(sys.argv[3]))
    return rule_script(label, data, request)


def main() -> None:
    data, out = Path(sys.argv[1]), Path(sys.argv[2])
    calls_log = out.parent / (out.name + ".requests.jsonl")
    engine = ScriptedEngine(slow_script)
    original = engine.generate

    def logged(requests, on_result=None):
        with calls_log.open("a") as log:
            for r in requests:
                log.write(json.dumps({"label": r.label, "messages": r.messages}) + "\n")
        return original(requests, on_result)

    engine.generate = logged  # type: ignore[method-assign]
    evaluate(data, metrics="faithfulness,context_precision", judge=engine, out=out, progress=False)


if __name__ == "__main__":
    main()
