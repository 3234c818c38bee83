"""Whether two runs' scores differ by the change alone: their judges, the settings that decide answers, and
batch invariance, read from each run's record (summary.json's ``run``). Warnings only: they change no verdict."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from localeval.prompts.base import LATER
from localeval.report.invariance import SHARE_CACHE, run_invariance
from localeval.report.runs import Run

# Settings that decide answers, under summary.json's run.config: judge settings, seed, long-context policy.
DECIDING = ("seed", "long_context")
# Engine options that cannot change an answer: where a Ray cluster is, whether vLLM shows its bars, how a judge
# server is reached (which URLs, its key's source, TLS, asks in flight, timeouts; its judge is the fingerprint).
INERT_ENGINE = {"ray_address", "extra.progress", "extra.urls", "extra.api_key_env", "extra.api_key_file",
                "extra.ca_file", "extra.concurrency", "extra.timeout", "extra.retries"}


def comparison_warnings(run_a: Run, run_b: Run, names: tuple[str, str] = ("A", "B")) -> list[str]:
    """One line per reason the two runs' numbers may differ by more than the change: another judge or embedder,
    other settings (each named with both values), a judge that is not batch-invariant, or a record that lacks them.
    ``names``: what the runs are called in the lines (compare: A and B; gate: the baseline and the run)."""
    a, b = run_a.info, run_b.info
    warnings = []
    for key in ("judge", "embedder"):
        if a.get(key) and b.get(key) and a[key] != b[key]:
            warnings.append(f"the {key}s differ, so part of a difference may come from the {key}: "
                            f"{a[key]} in {names[0]}, {b[key]} in {names[1]}")
    missing = [name for name, info in zip(names, (a, b), strict=True) if not isinstance(info.get("config"), Mapping)]
    if missing:
        warnings.append(f"the settings that decide answers are not recorded for {' and '.join(missing)} (a run "
                        "not written by evaluate), so they were not compared")
    else:
        warnings += [f"{setting} differs: {va!r} in {names[0]}, {vb!r} in {names[1]}"
                     for setting, (va, vb) in _differences(a["config"], b["config"]).items()]
    return warnings + _invariance_warnings(a, b, names)


def _differences(config_a: Mapping[str, Any], config_b: Mapping[str, Any]) -> dict[str, tuple[Any, Any]]:
    """The deciding settings whose values differ, by name: ``votes``, ``seed``, ``engine option dtype``, ..."""
    flat_a, flat_b = _deciding(config_a), _deciding(config_b)
    return {name: (flat_a.get(name), flat_b.get(name)) for name in {**flat_a, **flat_b}
            if flat_a.get(name) != flat_b.get(name)}


def _deciding(config: Mapping[str, Any]) -> dict[str, Any]:
    settings = {**LATER, **dict(config.get("settings") or {})}  # a run records a later setting only off its default
    flat = {f"judge setting {k}": v for k, v in settings.items()}
    flat.update({k: config[k] for k in DECIDING if k in config})
    engine = dict(config.get("engine") or {})
    options = {**{k: v for k, v in engine.items() if k != "extra"},
               **{f"extra.{k}": v for k, v in dict(engine.get("extra") or {}).items()}}
    flat.update({f"engine option {k.removeprefix('extra.')}": v for k, v in options.items() if k not in INERT_ENGINE})
    return flat


def _invariance_warnings(a: Mapping[str, Any], b: Mapping[str, Any], names: tuple[str, str]) -> list[str]:
    """A run whose judge is not batch-invariant, unless both runs shared one judge cache."""
    if a.get("cache") and b.get("cache") and _same_file(a["cache"], b["cache"]):
        return []  # an ask both runs made was answered once, and served from the cache to the other
    warnings = []
    for name, info in zip(names, (a, b), strict=True):
        if "invariance" not in info:
            continue  # a run not written by evaluate: said above
        said = run_invariance(info)
        if said.batch_invariant is False:
            warnings.append(f"{name}'s judge is not batch-invariant ({said.note}): an ask both runs made may have "
                            f"been answered differently in each, so part of a difference may come from what shared "
                            f"its batch; {SHARE_CACHE}")
    return warnings


def _same_file(path_a: str, path_b: str) -> bool:
    return Path(path_a).expanduser().resolve() == Path(path_b).expanduser().resolve()
