"""What the benchmark scripts share: the machine's description, and the judge and embedder they name."""

from __future__ import annotations

import argparse
import json
import os
import platform
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DEFAULT_JUDGE = "models/smollm2-135m-instruct"
DEFAULT_EMBEDDER = "models/all-minilm-l6-v2"


def describe_machine() -> dict[str, Any]:
    """CPU, cores, memory, load and GPU: what a reader needs to compare figures."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem_kb = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                      if line.startswith("MemTotal"))
        memory = f"{mem_kb / 2**20:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        memory = "unknown"
    gpu = None
    try:
        import torch

        if torch.cuda.is_available():
            gpu = torch.cuda.get_device_name(0)
        torch_version = torch.__version__
    except ImportError:
        torch_version = None
    return {
        "cpu": cpu, "cores": os.cpu_count(), "memory": memory, "gpu": gpu,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "system": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(), "torch": torch_version,
    }


def machine_line(machine: dict[str, Any]) -> str:
    gpu = f", GPU {machine['gpu']}" if machine.get("gpu") else ", no GPU"
    return (f"{machine['cpu']}, {machine['cores']} cores, {machine['memory']}{gpu}; "
            f"load average at start {machine['load_average'][0]}")


def model_path(name: str) -> str:
    """A model folder as given, or relative to the repository when it is not there."""
    path = Path(name)
    return str(path if path.exists() or path.is_absolute() else REPO / path)


def add_judge_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--judge", default=DEFAULT_JUDGE, help="local judge model folder")
    parser.add_argument("--embedder", default=DEFAULT_EMBEDDER, help="local sentence-transformers folder")
    parser.add_argument("--engine", default="transformers", choices=("transformers", "vllm", "scripted"),
                        help="localeval's judge engine; scripted: a rule-based stand-in, no model (dry run)")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: localeval's)")
    parser.add_argument("--batch-size", type=int, default=16, help="transformers engine: most rows in a batch")
    parser.add_argument("--batch-tokens", type=int, default=16384,
                        help="transformers engine, padded batches only: token budget of a batch (0: rows only)")
    parser.add_argument("--dtype", default="auto",
                        help="weights dtype (auto: the engine's default: transformers on a CPU bfloat16 with "
                             "AVX512_BF16/AMX, else float32; vllm the model's); transformers bfloat16: bf16 "
                             "weights, attention in float32")
    parser.add_argument("--compile", action="store_true", help="vllm engine: compile (default on a CPU: eager)")
    parser.add_argument("--stop-repeats", action="store_true",
                        help="transformers engine: end a list the moment the judge repeats an earlier item")
    parser.add_argument("--judge-every-copy", action="store_true",
                        help="NLI asks: judge every copy of a repeated statement, as Ragas (default: each once)")


def localeval_models(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    """(judge, embedder, judge options) for ``localeval.evaluate`` from the command line."""
    from localeval.config import JudgeOptions

    if args.engine == "scripted":
        from localeval.embed import HashEmbedder
        from localeval.engine.scripted import ScriptedEngine, rule_script

        return ScriptedEngine(rule_script), HashEmbedder(), None
    extra: dict[str, Any] = ({"dtype": args.dtype, "enforce_eager": False if args.compile else None,
                              "progress": bool(getattr(args, "progress", False))} if args.engine == "vllm" else
                             {"dtype": args.dtype} if args.dtype != "auto" else {})
    if getattr(args, "stop_repeats", False):
        extra["stop_repeats"] = True
    batching = ({"batch_size": args.batch_size, "batch_tokens": args.batch_tokens or None, "threads": args.threads}
                if args.engine == "transformers" else {})  # the options only the transformers engine takes
    options = JudgeOptions(engine=args.engine, **batching, extra=extra)
    return model_path(args.judge), model_path(args.embedder), options


def write_json(path: str | Path, data: dict[str, Any]) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return out
