"""The judge on transformers: length-sorted batches decoded under each request's JSON-schema grammar.

The decode loop is our own (KV cache with preallocated room, left padding, per-row grammar, per-row
seeded sampling), so a row leaves the batch the moment its JSON is complete and the rest go on
without it. Asks of one prompt share its instruction and examples: that prefix is computed once.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from localeval.cpu_threads import default_threads
from localeval.engine.base import Choice, FinishReason, Request, Result
from localeval.engine.grammar import BatchGrammar, make_backend, schema_text
from localeval.errors import LocalevalError
from localeval.model_folders import check_model_folder, model_fingerprint, set_offline

if TYPE_CHECKING:
    import torch


MIN_SHARED_PREFIX = 32  # tokens; a shorter common prefix is not worth its own pass
PREFIX_CACHE_SIZE = 4  # shared prefixes whose states are kept between batches and calls


def _common_prefix(sequences: list[list[int]]) -> int:
    """The length of the common prefix, leaving every sequence at least one token of its own."""
    low, high = min(sequences), max(sequences)  # lexicographic extremes bound every common prefix
    n = 0
    limit = min(len(s) for s in sequences) - 1
    while n < limit and low[n] == high[n]:
        n += 1
    return n


@dataclass
class _Row:
    """One sequence to decode: a request, or one of its ``n`` samples."""

    request: int  # index in the caller's list
    ids: list[int]
    schema: str
    max_tokens: int
    temperature: float
    seed: int
    tokens: list[int] = field(default_factory=list)
    finish: FinishReason = "stop"
    cached: int = 0  # prompt tokens served from a shared prefix


class TransformersEngine:
    """A local causal LM behind :class:`~localeval.engine.base.JudgeEngine`, constrained by a grammar.

    Batches hold at most ``batch_size`` rows and, when ``batch_tokens`` is set, at most that many
    tokens counted as rows x (longest prompt tail + longest answer budget): short asks travel
    together in large batches, long ones in small batches that waste little on padding.
    ``prefix_reuse=False`` prefills every prompt in full (for comparison; same answers).
    ``max_new_tokens`` replaces every request's ``max_tokens`` when set. ``threads`` sets torch's
    (process-wide) thread count; unset, torch keeps one per core when OpenMP threads wait passively
    (localeval sets that on import, before torch loads), else 1: threads that spin for each other
    on a shared CPU lose badly (``localeval.cpu_threads``, benchmarks/threads.py).

    ``profile`` adds up, over the engine's life, the seconds spent in each part of the work (prefill
    of shared prefixes and of each ask's own tokens, decode steps, grammar masking) and the token
    counts; with ``record=True`` every decoded batch is kept in ``batches`` (prompt and answer
    tokens), so a benchmark can time the model's bare forward passes over the same tokens.
    """

    def __init__(
        self,
        model_dir: Path | str,
        *,
        grammar: str = "xgrammar",
        batch_size: int = 16,
        batch_tokens: int | None = 16384,
        prefix_reuse: bool = True,
        max_new_tokens: int | None = None,
        threads: int | None = None,
        device: str = "cpu",
        trust_remote_code: bool = False,
        dtype: Any = None,
        record: bool = False,
    ) -> None:
        check_model_folder(Path(model_dir), "judge")  # a clear error before transformers sees the folder
        set_offline()
        if threads is None and str(device).startswith("cpu"):
            threads = default_threads()
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer, DynamicCache
        from transformers.cache_utils import DynamicLayer

        if threads:
            torch.set_num_threads(threads)
        self.model_dir = Path(model_dir)
        self.batch_size = max(1, batch_size)
        self.batch_tokens = batch_tokens
        self.prefix_reuse = prefix_reuse
        self.max_new_tokens = max_new_tokens
        self.device = torch.device(device)
        if dtype is None:  # CPUs without bf16 units are fastest in float32
            dtype = torch.float32 if self.device.type == "cpu" else "auto"
        elif isinstance(dtype, str) and dtype != "auto":
            dtype = getattr(torch, dtype)
        self.tokenizer = AutoTokenizer.from_pretrained(
            self.model_dir, local_files_only=True, trust_remote_code=trust_remote_code
        )
        if not self.tokenizer.chat_template:
            raise LocalevalError(
                f"The tokenizer in {self.model_dir} has no chat template; use an instruct model folder "
                "(its tokenizer_config.json or chat_template.jinja must define one)."
            )
        self.model = AutoModelForCausalLM.from_pretrained(
            self.model_dir,
            local_files_only=True,
            trust_remote_code=trust_remote_code,
            dtype=dtype,
            device_map=str(self.device),
        )
        self.model.eval()
        self.dtype = str(self.model.dtype).removeprefix("torch.")
        config = self.model.config
        self.vocab_size = int(self.model.get_output_embeddings().weight.shape[0])
        self.context_window = int(getattr(config, "max_position_embeddings", 0) or 2048)
        stop = _stop_token_ids(self.model, self.tokenizer)
        self.pad_token_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else stop[0]
        self.grammar = make_backend(grammar, self.tokenizer, self.vocab_size, stop)
        forward_parameters = inspect.signature(self.model.forward).parameters
        self._cache_kwarg = "cache" if "cache" in forward_parameters else "past_key_values"  # transformers < 5.x
        self._encode = functools.lru_cache(maxsize=4096)(self._encode_uncached)
        # Preallocated layers and prefix reuse need plain layers (no sliding window, no linear attention).
        self._plain_layers = all(type(layer) is DynamicLayer for layer in DynamicCache(config=config).layers)
        self._prefixes: OrderedDict[tuple[int, ...], list[tuple[torch.Tensor, torch.Tensor]]] = OrderedDict()
        self.profile: defaultdict[str, float] = defaultdict(float)
        self.record = record
        self.batches: list[list[tuple[tuple[int, ...], tuple[int, ...]]]] = []

    @functools.cached_property
    def fingerprint(self) -> str:
        """Model files and dtype; the grammar backend is left out (same constrained answers)."""
        return f"transformers:{model_fingerprint(self.model_dir)}:{self.dtype}"

    def _encode_uncached(self, messages: tuple[tuple[str, str], ...]) -> tuple[int, ...]:
        chat = [{"role": role, "content": content} for role, content in messages]
        text = self.tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
        return tuple(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def count_prompt_tokens(self, request: Request) -> int:
        """The prompt's length in tokens once the chat template is applied."""
        return len(self._encode(request.messages))

    def generate(self, requests: list[Request], on_result: Callable[[int, Result], None] | None = None) -> list[Result]:
        """Answer every request, in the same order; asks that do not fit the context never run.

        ``on_result(i, result)`` is called as soon as request ``i`` is answered: the moment the last
        of its rows leaves the decode loop, while the rest of its batch goes on.
        """
        started = time.perf_counter()
        results: list[Result | None] = [None] * len(requests)

        def done(i: int, result: Result) -> None:
            results[i] = result
            if on_result is not None:
                on_result(i, result)

        rows: list[_Row] = []
        for i, req in enumerate(requests):
            ids = list(self._encode(req.messages))
            budget = self.max_new_tokens or req.max_tokens
            if len(ids) + budget > self.context_window:
                done(i, Result([Choice("", 0, "context_too_long")], prompt_tokens=len(ids)))
                continue
            schema = schema_text(req.schema)
            for k in range(req.n if req.temperature > 0 else 1):
                rows.append(_Row(i, ids, schema, budget, req.temperature, req.seed + k))
        by_request: dict[int, list[_Row]] = {}
        for row in rows:
            by_request.setdefault(row.request, []).append(row)
        waiting = Counter(r.request for r in rows)

        def finished(row: _Row) -> None:
            waiting[row.request] -= 1
            if waiting[row.request] == 0:
                done(row.request, self._result(requests[row.request], by_request[row.request]))

        for batch, shared in self._batches(rows):
            self._decode(batch, shared, finished)
            if self.record:
                self.batches.append([(tuple(r.ids), tuple(r.tokens)) for r in batch])
        self.profile["generate_seconds"] += time.perf_counter() - started
        return [r for r in results if r is not None]

    def _batches(self, rows: list[_Row]) -> list[tuple[list[_Row], int]]:
        """Batches of similar length, each with the prompt prefix its rows share (0: none).

        Asks of one prompt share its instruction and examples: their key/value states are computed
        once and reused, so only each ask's own tail is prefilled. Other rows are batched by length.
        """
        groups: dict[tuple[int, ...], list[_Row]] = {}
        for row in rows:
            groups.setdefault(tuple(row.ids[:MIN_SHARED_PREFIX]), []).append(row)
        rest: list[_Row] = []
        batches: list[tuple[list[_Row], int]] = []
        reuse = self.prefix_reuse and self._plain_layers
        for group in groups.values():
            shared = _common_prefix([r.ids for r in group]) if reuse and len(group) > 1 else 0
            if shared < MIN_SHARED_PREFIX:
                rest += group
                continue
            batches += [(batch, shared) for batch in self._split(group, shared)]
        batches += [(batch, 0) for batch in self._split(rest, 0)]
        return batches

    def _split(self, rows: list[_Row], shared: int) -> list[list[_Row]]:
        """Rows sorted longest first, cut into batches by row count and token budget."""
        rows = sorted(rows, key=lambda r: len(r.ids), reverse=True)  # similar lengths: little padding
        batches: list[list[_Row]] = []
        batch: list[_Row] = []
        width = answer = 0
        for row in rows:
            w, a = max(width, len(row.ids) - shared), max(answer, row.max_tokens)
            over = self.batch_tokens is not None and (len(batch) + 1) * (w + a) > self.batch_tokens
            if batch and (len(batch) >= self.batch_size or over):
                batches.append(batch)
                batch, w, a = [], len(row.ids) - shared, row.max_tokens
            batch.append(row)
            width, answer = w, a
        if batch:
            batches.append(batch)
        return batches

    def _prefix_states(self, prefix: tuple[int, ...]) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Key/value states of a shared prompt prefix (one row), kept for a few reuses."""
        import torch
        from transformers import DynamicCache

        if prefix in self._prefixes:
            self._prefixes.move_to_end(prefix)
            return self._prefixes[prefix]
        started = time.perf_counter()
        cache = DynamicCache(config=self.model.config)
        ids = torch.tensor([prefix], device=self.device)
        with torch.inference_mode():
            self._forward(ids, torch.ones_like(ids), torch.arange(len(prefix), device=self.device)[None], cache)
        self.profile["prefix_seconds"] += time.perf_counter() - started
        self.profile["prefix_tokens"] += len(prefix)
        states = self._prefixes[prefix] = [(keys, values) for keys, values, *_ in cache]
        if len(self._prefixes) > PREFIX_CACHE_SIZE:
            self._prefixes.popitem(last=False)
        return states

    def _result(self, request: Request, rows: list[_Row]) -> Result:
        own = sorted(rows, key=lambda r: r.seed)
        choices = [self._choice(r) for r in own]
        if request.temperature <= 0:
            choices = choices * request.n  # greedy: the n answers are one answer
        return Result(choices, prompt_tokens=len(own[0].ids), cached_prompt_tokens=own[0].cached)

    def _choice(self, row: _Row) -> Choice:
        text = self.tokenizer.decode(row.tokens, skip_special_tokens=True)
        return Choice(str(text), len(row.tokens), row.finish)

    def _forward(self, ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor, cache: Any) -> torch.Tensor:
        """Logits of the last position of every row, float32."""
        out = self.model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=positions,
            use_cache=True,
            logits_to_keep=1,
            **{self._cache_kwarg: cache},
        )
        return out.logits[:, -1, :].float()

    def _decode(self, rows: list[_Row], shared: int = 0, finished: Callable[[_Row], None] | None = None) -> None:
        """Decode one batch in place (each row's tokens and finish reason); ``shared``: prefix length.

        ``finished(row)`` is called for each row as it completes (its JSON closed or its budget spent).
        """
        report = finished or (lambda row: None)
        import torch
        from transformers import DynamicCache

        profile = self.profile
        clock = time.perf_counter()
        grammar = BatchGrammar(self.grammar, [r.schema for r in rows], self.vocab_size)
        ready = grammar.fill(range(len(rows)))  # True: the grammar allows nothing but the end
        active = [b for b in range(len(rows)) if not ready[b]]
        profile["grammar_seconds"] += time.perf_counter() - clock
        for b in range(len(rows)):
            if ready[b]:
                report(rows[b])
        if not active:
            return
        width = max(len(rows[b].ids) - shared for b in active)
        ids = torch.full((len(active), width), self.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(active), shared + width), dtype=torch.long)
        mask[:, :shared] = 1
        for k, b in enumerate(active):  # left padding: every prompt ends at the last column
            tail = rows[b].ids[shared:]
            ids[k, width - len(tail) :] = torch.tensor(tail)
            mask[k, shared + width - len(tail) :] = 1
            rows[b].cached = shared
        positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, shared:]
        generators = {b: torch.Generator().manual_seed(rows[b].seed) for b in active if rows[b].temperature > 0}
        cache = DynamicCache(config=self.model.config)
        if self._plain_layers:  # room for the longest answer: no concatenation at every step
            room = shared + width + max(rows[b].max_tokens for b in active)
            cache.layers = [_growing_layer()(room) for _ in cache.layers]
        if shared:
            n = len(active)
            for i, (keys, values) in enumerate(self._prefix_states(tuple(rows[active[0]].ids[:shared]))):
                cache.update(keys.expand(n, -1, -1, -1), values.expand(n, -1, -1, -1), i)
        with torch.inference_mode():
            clock = time.perf_counter()
            logits = self._forward(ids.to(self.device), mask.to(self.device), positions.to(self.device), cache)
            profile["prefill_seconds"] += time.perf_counter() - clock
            profile["prefill_tokens"] += int(mask[:, shared:].sum())
            profile["prefill_padded_tokens"] += ids.numel()
            while True:
                clock = time.perf_counter()
                grammar.apply(logits, active)
                profile["grammar_seconds"] += time.perf_counter() - clock
                tokens = self._pick(logits, [rows[b] for b in active], [generators.get(b) for b in active])
                going: list[int] = []
                clock = time.perf_counter()
                for b, token in zip(active, tokens, strict=True):
                    if grammar.is_stop(token):
                        rows[b].finish = "stop"
                        report(rows[b])
                        continue
                    grammar.accept(b, token)
                    rows[b].tokens.append(token)
                    going.append(b)
                filled = grammar.fill(going)
                profile["grammar_seconds"] += time.perf_counter() - clock
                still: list[int] = []
                for b, done in zip(going, filled, strict=True):
                    if done:
                        rows[b].finish = "stop"
                    elif len(rows[b].tokens) >= rows[b].max_tokens:
                        rows[b].finish = "length"
                    else:
                        still.append(b)
                        continue
                    report(rows[b])
                if not still:
                    return
                if len(still) < len(active):
                    keep = torch.tensor([active.index(b) for b in still])
                    cache.batch_select_indices(keep.to(self.device))
                    mask, positions = mask[keep], positions[keep]
                active = still
                step = torch.tensor([[rows[b].tokens[-1]] for b in active])
                mask = torch.cat([mask, torch.ones((len(active), 1), dtype=mask.dtype)], dim=1)
                positions = positions[:, -1:] + 1
                clock = time.perf_counter()
                logits = self._forward(step.to(self.device), mask.to(self.device), positions.to(self.device), cache)
                profile["decode_seconds"] += time.perf_counter() - clock
                profile["decode_steps"] += 1
                profile["decode_tokens"] += len(active)

    @staticmethod
    def _pick(logits: torch.Tensor, rows: list[_Row], generators: list[torch.Generator | None]) -> list[int]:
        """Greedy for temperature 0, else a draw from each row's own seeded generator."""
        import torch

        chosen = logits.argmax(dim=-1).tolist()
        for k, (row, gen) in enumerate(zip(rows, generators, strict=True)):
            if gen is not None:
                probs = torch.softmax(logits[k].cpu() / row.temperature, dim=-1)
                chosen[k] = int(torch.multinomial(probs, 1, generator=gen).item())
        return [int(t) for t in chosen]


@functools.cache
def _growing_layer() -> type:
    """A cache layer that writes into preallocated room instead of concatenating at every step."""
    from transformers.cache_utils import DynamicLayer

    class GrowingLayer(DynamicLayer):
        def __init__(self, room: int) -> None:
            super().__init__()
            self.room = room
            self.length = 0
            self.key_room: Any = None
            self.value_room: Any = None

        def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
            end = self.length + key_states.shape[-2]
            if not self.is_initialized or end > self.key_room.shape[-2]:
                self.is_initialized, self.device = True, key_states.device
                size = max(end, self.room) if self.length == 0 else max(end, 2 * self.key_room.shape[-2])
                shape = (*key_states.shape[:2], size, key_states.shape[-1])
                keys, values = key_states.new_empty(shape), value_states.new_empty(shape)
                if self.length:
                    keys[:, :, : self.length] = self.keys
                    values[:, :, : self.length] = self.values
                self.key_room, self.value_room = keys, values
            self.key_room[:, :, self.length : end] = key_states
            self.value_room[:, :, self.length : end] = value_states
            self.length = end
            self.keys, self.values = self.key_room[:, :, :end], self.value_room[:, :, :end]
            return self.keys, self.values

        def batch_select_indices(self, indices: Any) -> None:
            if self.is_initialized:
                self.key_room, self.value_room = self.key_room[indices], self.value_room[indices]
                self.keys, self.values = self.key_room[:, :, : self.length], self.value_room[:, :, : self.length]

        def crop(self, tokens_to_remove: int) -> None:
            super().crop(tokens_to_remove)
            self.length = self.get_seq_length()

    return GrowingLayer


def _stop_token_ids(model: Any, tokenizer: Any) -> list[int]:
    """End-of-turn tokens: the generation config's eos ids, then the tokenizer's."""
    ids: list[int] = []
    eos = getattr(model.generation_config, "eos_token_id", None)
    for value in [*(eos if isinstance(eos, list) else [eos]), tokenizer.eos_token_id]:
        if value is not None and int(value) not in ids:
            ids.append(int(value))
    if not ids:
        raise LocalevalError("the model defines no end-of-sequence token; cannot end a constrained answer")
    return ids
