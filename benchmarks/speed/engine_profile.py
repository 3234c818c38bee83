"""Where the transformers engine's time goes, measured from outside: its parts wrapped while a benchmark runs.

    with engine_profile() as profile:
        localeval.evaluate(...)
    profile["decode_seconds"], profile["decode_tokens"] / profile["decode_steps"], ...

Seconds (``generate``, ``prefix`` (shared prefixes computed once), ``prefill`` (each ask's own tokens),
``decode`` (decode steps), ``grammar`` (masking, picking, advancing)) and counts (``flat_steps``,
``flat_tokens``, ``decode_steps``, ``decode_tokens`` (rows decoding, summed over steps), ``prefill_tokens``,
``prefix_reused_tokens``, ``prefix_tokens``, ``draft_tokens``, ``draft_accepted``). A flat step's seconds are
split between prefill and decode by its tokens; a padded batch's first forward pass is prefill, the rest
decode. Nothing of this is in the product: the engine is the same with or without it.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


def _timed(profile: defaultdict[str, float], key: str, function: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        clock = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            profile[key] += time.perf_counter() - clock
    return wrapper


@contextmanager
def engine_profile() -> Iterator[defaultdict[str, float]]:
    """The engine's parts wrapped while the block runs; the figures they add up."""
    from localeval.engine.transformers import continuous, decode, engine, kv_cache, loading, slots, stepper

    profile: defaultdict[str, float] = defaultdict(float)
    saved: list[tuple[Any, str, Any]] = []

    def patch(owner: Any, name: str, value: Any) -> None:
        saved.append((owner, name, getattr(owner, name)))
        setattr(owner, name, value)
    forward_flat, fill, verify = continuous._Decoder._forward, slots.Slots.fill, stepper.Stepper.verify
    prefix_get, padded = kv_cache.PrefixCache.get, loading.LoadedModel.forward

    def flat(self: Any, chunks: dict[int, list[int]], keep: list[int]) -> Any:
        entering = [s for s in chunks if s not in self.slots.prefilled]
        tokens = sum(len(c) for c in chunks.values())
        share = sum(len(chunks[s]) for s in entering) / tokens
        clock = time.perf_counter()
        logits = forward_flat(self, chunks, keep)
        seconds = time.perf_counter() - clock
        decoding = len(chunks) - len(entering)
        profile["flat_steps"] += 1
        profile["flat_tokens"] += tokens
        profile["prefill_seconds"] += seconds * share
        profile["decode_seconds"] += seconds * (1 - share)
        profile["decode_steps"] += bool(decoding)
        profile["decode_tokens"] += decoding
        return logits

    def filled(self: Any, k: int, slot: int) -> int:
        start = fill(self, k, slot)
        profile["prefill_tokens"] += len(self.rows[k].ids) - start
        profile["prefix_reused_tokens"] += start
        return start

    def verified(self: Any, k: int, logits: Any, drafted: list[int]) -> tuple[int, bool]:
        accepted, alive = verify(self, k, logits, drafted)
        profile["draft_tokens"] += len(drafted)
        profile["draft_accepted"] += accepted
        return accepted, alive

    def prefix(self: Any, ids: tuple[int, ...]) -> Any:
        if ids in self.states:
            return prefix_get(self, ids)
        profile["prefix_tokens"] += len(ids)
        return _timed(profile, "prefix_seconds", prefix_get)(self, ids)

    def batch_forward(self: Any, ids: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("one_row"):  # a shared prefix, timed as one
            return padded(self, ids, *args, **kwargs)
        first = ids.shape[-1] > 1
        profile["prefill_tokens" if first else "decode_tokens"] += ids.numel()
        profile["decode_steps"] += not first
        return _timed(profile, "prefill_seconds" if first else "decode_seconds", padded)(self, ids, *args, **kwargs)

    patch(continuous._Decoder, "_forward", flat)
    patch(slots.Slots, "fill", filled)
    patch(stepper.Stepper, "verify", verified)
    patch(stepper.Stepper, "step", _timed(profile, "grammar_seconds", stepper.Stepper.step))
    patch(kv_cache.PrefixCache, "get", prefix)
    patch(loading.LoadedModel, "forward", batch_forward)
    for module in (continuous, decode):
        patch(module, "start_grammar", _timed(profile, "grammar_seconds", decode.start_grammar))
    patch(engine.TransformersEngine, "generate",
                  _timed(profile, "generate_seconds", engine.TransformersEngine.generate))
    try:
        yield profile
    finally:
        for owner, name, value in reversed(saved):
            setattr(owner, name, value)


@contextmanager
def without_prefix_reuse() -> Iterator[None]:
    """The engine with every prompt prefilled in full while the block runs (batches planned without shared
    prefixes, no slot copying a sibling's states): what prefix reuse saves, to the same answers."""
    import functools

    from localeval.engine.transformers import continuous, engine

    plan, table = engine.plan_batches, continuous.Slots
    engine.plan_batches = lambda ids, plans, size, tokens, reuse: plan(ids, plans, size, tokens, False)  # type: ignore[assignment]
    continuous.Slots = functools.partial(table, share=False)  # type: ignore[misc]
    try:
        yield
    finally:
        engine.plan_batches, continuous.Slots = plan, table  # type: ignore[misc]
