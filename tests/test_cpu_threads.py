"""Thread defaults: passive waiting set only before torch loads, one thread when threads would spin."""

from __future__ import annotations

import sys

from localeval.cpu_threads import default_threads, prefer_passive_wait


def test_passive_wait_is_set_before_torch_loads(monkeypatch) -> None:
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    assert prefer_passive_wait() is True
    assert default_threads() is None  # torch's own count: threads that sleep while they wait


def test_a_loaded_torch_or_a_chosen_policy_is_left_alone(monkeypatch) -> None:
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.setitem(sys.modules, "torch", object())
    assert prefer_passive_wait() is False
    assert default_threads() == 1  # its threads may spin: one thread
    monkeypatch.delitem(sys.modules, "torch")
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    assert prefer_passive_wait() is False
    assert default_threads() == 1
    monkeypatch.setenv("OMP_WAIT_POLICY", "passive")
    assert default_threads() is None
