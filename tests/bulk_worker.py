"""Run a chunked evaluation with a scripted judge that logs every ask and can SIGKILL its own process.

    python tests/bulk_worker.py DATA OUT CHUNK_SIZE LOG [KILL_AT]

Each ask's sample number (the ``#N`` every field of a test sample carries) is appended to LOG, flushed,
before it is answered; with KILL_AT, the process kills itself (SIGKILL: no clean-up runs) on that ask.
"""

from __future__ import annotations

import os
import re
import signal
import sys
from typing import Any

from localeval import evaluate
from localeval.engine.base import Request
from localeval.engine.scripted import ScriptedEngine, rule_script

NUMBER = re.compile(r"#(\d+)")


def main() -> None:
    data, out, size, log_path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    kill_at = int(sys.argv[5]) if len(sys.argv) > 5 else None
    asked = 0
    log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 - held for the process's life

    def script(label: str, payload: dict[str, Any], request: Request) -> Any:
        nonlocal asked
        asked += 1
        if asked == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        log.write(f"{label} {NUMBER.search(request.messages[-1][1]).group(1)}\n")  # type: ignore[union-attr]
        log.flush()
        return rule_script(label, payload, request)

    evaluate(data, metrics="faithfulness,context_precision", judge=ScriptedEngine(script), out=out,
             progress=False, report=False, chunk_size=size)


if __name__ == "__main__":
    main()
