"""vLLM's batch-invariant mode (``--deterministic``): where the installed vLLM and this machine have it,
switching it on before the engine is built, and what a vLLM engine says of its batch invariance.

vLLM's greedy answer to an ask can change with what shares its batch: how a kernel splits a reduction
depends on the batch's size. Its batch-invariant mode (beta; the environment variable
``VLLM_BATCH_INVARIANT=1``, read as the engine is built) uses kernels whose order of reduction does not.
vLLM documents it for NVIDIA GPUs of compute capability 8.0 or higher, AMD Instinct and Intel XPU GPUs;
versions that keep it in ``model_executor/layers`` (its first home) document NVIDIA 9.0 or higher only.
The CPU build has no such mode.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

from localeval.engine.base import Invariance
from localeval.errors import LocalevalError

BATCH_INVARIANT = "VLLM_BATCH_INVARIANT"
# Where the mode's kernels live, by vLLM version, and the NVIDIA compute capability each documents.
MODE_HOMES = {("model_executor", "determinism", "batch_invariant.py"): (8, 0),
              ("model_executor", "layers", "batch_invariant.py"): (9, 0)}
INSTEAD = ("What you can have instead: the transformers engine (`--engine transformers`), whose answers do not "
           "depend on what shares their batch; or vLLM without --deterministic, with one `--cache FILE` shared by "
           "the runs you compare, so that an ask they share is answered once and reused")
ON = Invariance(True, "vLLM's batch-invariant mode is on (--deterministic): an answer does not depend on the other "
                      "asks that share its batch")
OFF = Invariance(False, "vLLM's answer to an ask can change with the other asks that share its batch; --deterministic "
                        "turns on its batch-invariant mode where the GPU has one, and runs that share one --cache FILE "
                        "reuse each other's answers")


def unsupported(on_cpu: bool) -> str | None:
    """Why vLLM's batch-invariant mode cannot run here; None where it can."""
    if on_cpu:
        return "the installed vLLM is its CPU build, which has no batch-invariant mode"
    needs = _documented_capability()
    if needs is None:
        return f"the installed vLLM ({_version()}) has no batch-invariant mode; newer versions have it (beta)"
    platform = importlib.import_module("vllm.platforms").current_platform
    if needs == (8, 0) and (platform.is_rocm() or platform.is_xpu()):
        return None  # vLLM checks the GPU model itself
    if not platform.is_cuda():
        return (f"vLLM runs on {getattr(platform, 'device_name', 'a device')} here; its batch-invariant mode "
                "needs an NVIDIA GPU")
    capability = platform.get_device_capability()
    have = (capability.major, capability.minor) if capability is not None else None
    if have is None or have < needs:
        shown = f"{have[0]}.{have[1]}" if have is not None else "unknown"
        return (f"this GPU ({platform.get_device_name()}) has compute capability {shown}; the batch-invariant mode "
                f"of vLLM {_version()} needs {needs[0]}.{needs[1]} or higher")
    return None


def switch_on(on_cpu: bool) -> None:
    """Switch vLLM's batch-invariant mode on for the engine about to be built, or say why it cannot be."""
    why = unsupported(on_cpu)
    if why is not None:
        raise LocalevalError(f"--deterministic: {why}. {INSTEAD}.")
    os.environ[BATCH_INVARIANT] = "1"
    if not importlib.import_module("vllm.envs").VLLM_BATCH_INVARIANT:  # read once an engine was built here
        raise LocalevalError(f"--deterministic: vLLM read its settings before the mode could be switched on; set "
                             f"{BATCH_INVARIANT}=1 in the environment before Python starts")


def switched_on(on_cpu: bool) -> bool:
    """Whether the environment asks vLLM for its batch-invariant mode and this machine has it."""
    return os.environ.get(BATCH_INVARIANT, "0").strip() not in ("", "0") and unsupported(on_cpu) is None


def _documented_capability() -> tuple[int, int] | None:
    """The NVIDIA compute capability the installed vLLM's batch-invariant mode needs; None: it has no such mode."""
    # looked for on disk: importing the kernels would have vLLM read the setting before it is made
    for folder in getattr(importlib.import_module("vllm"), "__path__", None) or ():
        for home, capability in MODE_HOMES.items():
            if Path(folder, *home).is_file():
                return capability
    return None


def _version() -> Any:
    return getattr(importlib.import_module("vllm"), "__version__", "of unknown version")


__all__ = ["BATCH_INVARIANT", "INSTEAD", "OFF", "ON", "switch_on", "switched_on", "unsupported"]
