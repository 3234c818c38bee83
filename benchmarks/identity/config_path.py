"""How far a run's configuration travels: every function it passes through, followed from the CLI to the engine.

    python -m benchmarks.identity.config_path [--metrics faithfulness]    # loads the bundled judge

Runs ``localeval evaluate`` on the demo's first sample (the path does not depend on the data) in this process
under ``sys.settrace`` and notes every call of a ``localeval`` function that receives the run's configuration
as an argument (``self`` included): a ``Shared`` (the CLI's options), ``RunConfig``, ``JudgeOptions`` or
``TransformersOptions``. Each function is placed in its layer, the top-level part of its module as the layer
contract in pyproject.toml lists it (top = 0). It prints the functions in the order they are first entered,
then two counts of how often the configuration climbs back up the layers:

* ``calls``: calls whose callee sits in a higher layer than its caller (a lower part calling back up, which
  only a method or callback handed down can do);
* ``walk``: steps of the list above where the next function sits in a higher layer than the one before it
  (what a reader following the configuration through the code climbs back up).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import tomllib
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CONFIG_TYPES = {"Shared", "RunConfig", "JudgeOptions", "TransformersOptions"}


def layers() -> dict[str, int]:
    """Each top-level part of the package and its layer (0: the top), from pyproject.toml's contract."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    (listed,) = [c["layers"] for c in contracts if c["type"] == "layers"]
    return {part.strip(): i for i, line in enumerate(listed) for part in line.split("|")}


def _part(frame: FrameType) -> str | None:
    name = frame.f_globals.get("__name__", "")
    return name.split(".")[1] if name.startswith("localeval.") else None


def _carries(frame: FrameType) -> bool:
    code = frame.f_code
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    return any(type(frame.f_locals.get(n)).__name__ in CONFIG_TYPES for n in names)


def trace(argv: list[str]) -> tuple[list[tuple[str, str]], int]:
    """(part, function) in first-entered order, and the calls that went up a layer, of one CLI run."""
    from localeval.cli.app import main

    layer = layers()
    seen: dict[str, str] = {}
    calls_up = 0

    def on_call(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal calls_up
        if event != "call" or (part := _part(frame)) is None or not _carries(frame):
            return None
        qualname = f"{frame.f_globals['__name__']}.{frame.f_code.co_qualname}"
        if "__create_fn__" in qualname and "self" in frame.f_locals:  # a dataclass's generated method
            qualname = f"{frame.f_globals['__name__']}.{type(frame.f_locals['self']).__name__}.{frame.f_code.co_name}"
        seen.setdefault(qualname, part)
        caller = frame.f_back
        above = _part(caller) if caller is not None else None
        if above is not None and part in layer and above in layer and layer[part] < layer[above]:
            calls_up += 1
        return None

    sys.settrace(on_call)
    try:
        main(argv)
    finally:
        sys.settrace(None)
    return [(part, name) for name, part in seen.items()], calls_up


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metrics", default="faithfulness")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "one.jsonl"
        data.write_text((ROOT / "examples/rag_demo.jsonl").read_text().splitlines()[0] + "\n")
        path, calls_up = trace(["evaluate", str(data), "--metrics", args.metrics, "--out", str(Path(tmp) / "run"),
                                "--no-progress", "--no-report", "--dtype", "float32", "--threads", "1"])
    layer = layers()
    walk, last = 0, None
    for i, (part, name) in enumerate(path):  # a part outside the contract (none, now) is left out of the climbs
        up = part in layer and last is not None and layer[part] < last
        walk += up
        last = layer.get(part, last)
        print(f"{i + 1:3} {layer.get(part, '?'):>2} {'^' if up else ' '} {name}")
    print(f"functions: {len(path)}  parts: {len({p for p, _ in path})}  climbs (calls): {calls_up}  "
          f"climbs (walk): {walk}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
