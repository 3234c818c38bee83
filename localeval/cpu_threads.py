"""How many CPU threads torch gets, and how its OpenMP threads wait (docs/cpu.md: Threads).

OpenMP's default lets an idle thread spin for a while before it sleeps. On a CPU that other work
shares, threads that spin while they wait for each other take the cores the others need, and a run on
two threads can be many times slower than on one (benchmarks/speed/threads.py compares them); with
``OMP_WAIT_POLICY=PASSIVE`` a waiting thread sleeps, so adding a thread does not slow a run down.
OpenMP reads the policy once, when torch loads, so it is set when localeval is imported, if torch
is not loaded yet and the user has not chosen a policy.
"""

from __future__ import annotations

import os
import sys


def prefer_passive_wait() -> bool:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` unless torch is already loaded or a policy is set; True if set now."""
    if "torch" in sys.modules or "OMP_WAIT_POLICY" in os.environ:
        return False
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    return True


def default_threads() -> int | None:
    """None (torch's own default: one thread per core) when waiting threads sleep, else 1."""
    return None if os.environ.get("OMP_WAIT_POLICY", "").strip().upper() == "PASSIVE" else 1


__all__ = ["default_threads", "prefer_passive_wait"]
