"""The judge on transformers: continuously batched rows decoded under each request's JSON-schema grammar.

The decode loop is our own (key/value states in decode slots, flat steps over every row's new tokens,
per-row grammar, per-row seeded sampling, draft tokens checked in the same pass): a row leaves the
batch the moment its JSON is complete and the next waiting ask takes its slot, so steps run full until
the queue is empty. Asks of one prompt share its instruction and examples, and asks of one sample its
question and passages: each shared prefix is computed once.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from localeval.engine.base import Abilities, Choice, Engine, Invariance, Request, Result
from localeval.engine.grammar import make_backend, schema_text
from localeval.engine.repeats import RepeatGuard
from localeval.engine.soft import LeadTable
from localeval.engine.transformers.batching import plan_batches
from localeval.engine.transformers.continuous import decode_continuous
from localeval.engine.transformers.decode import Row, decode_batch
from localeval.engine.transformers.drafts import MAX_DRAFT
from localeval.engine.transformers.invariant import check_attention
from localeval.engine.transformers.kv_cache import PrefixCache
from localeval.engine.transformers.loading import load_model
from localeval.model_folders import model_fingerprint


class TransformersEngine(Engine):
    """A local causal LM behind :class:`~localeval.engine.base.JudgeEngine`, constrained by a grammar.

    At most ``batch_size`` rows decode at once, batched continuously in flat steps: as one finishes,
    the next waiting row takes its slot (``continuous.py``; nothing is padded, so rows are the only
    limit). Models whose cache layers are not plain (e.g. sliding windows), or that take no attention
    function of ours, decode padded batches one after another instead, planned to hold at most
    ``batch_tokens`` tokens counted as rows x (longest prompt tail + longest answer budget): short asks
    travel together in large batches, long ones in small batches that waste little on padding.
    ``stop_repeats=True`` ends a list the moment the judge repeats an earlier item of it, where
    the schema allows the shorter list (``localeval.engine.repeats``; a speed knob: it changes
    the answers of a judge that loops, and only those). ``max_new_tokens`` replaces every request's
    ``max_tokens`` when set. ``drafts`` is the most draft tokens a greedy row feeds per step
    (``localeval.engine.transformers.drafts``: the grammar's forced text and prompt lookup, checked by
    the model in the same pass; the answers are those of one token at a time; 0 turns drafts off).
    ``threads`` sets torch's
    (process-wide) thread count; unset, torch keeps one per core when OpenMP threads wait passively
    (localeval sets that on import, before torch loads), else 1: threads that spin for each other
    on a shared CPU lose badly (``localeval.cpu_threads``, benchmarks/speed/threads.py).
    """

    # A row past its planned length decodes on in its slot (no restart, no retry); 512 samples a chunk fill
    # its batches of 16 rows.
    abilities = Abilities(chunk_samples=512, grows_in_place=True)

    def __init__(
        self,
        model_dir: Path | str,
        *,
        grammar: str = "xgrammar",
        batch_size: int = 16,
        batch_tokens: int | None = 16384,
        max_new_tokens: int | None = None,
        threads: int | None = None,
        device: str = "cpu",
        trust_remote_code: bool = False,
        dtype: Any = None,
        stop_repeats: bool = False,
        drafts: int = MAX_DRAFT,
    ) -> None:
        self.loaded = load_model(Path(model_dir), threads=threads, device=device,
                                 trust_remote_code=trust_remote_code, dtype=dtype)
        self.model_dir = Path(model_dir)
        self.batch_size = max(1, batch_size)
        self.batch_tokens = batch_tokens
        self.max_new_tokens = max_new_tokens
        self.model, self.tokenizer, self.device = self.loaded.model, self.loaded.tokenizer, self.loaded.device
        self.dtype = self.loaded.dtype
        self.vocab_size = self.loaded.vocab_size
        self.context_window = self.loaded.context_window
        self.pad_token_id = self.loaded.pad_token_id
        self.grammar = make_backend(grammar, self.tokenizer, self.vocab_size, self.loaded.stop_ids)
        self._encode = functools.lru_cache(maxsize=4096)(self._encode_uncached)
        self.prefixes = PrefixCache(self.loaded)
        # The repeat guard (localeval.engine.repeats) runs in the continuous decode loop, so only on
        # models whose cache layers are plain; it changes answers, so it is part of the fingerprint.
        self.stop_repeats = stop_repeats and self.loaded.plain_layers
        self.guard = RepeatGuard(self.tokenizer) if self.stop_repeats else None
        self.drafts = max(0, drafts)

    @functools.cached_property
    def fingerprint(self) -> str:
        """Model files, dtype and kernels (``invariant`` only where :attr:`invariance` holds); the grammar
        backend and drafts are left out (same answers)."""
        guard = ":stop-repeats" if self.stop_repeats else ""
        kernels = ":invariant" if self.invariance.batch_invariant else ""
        return f"transformers:{model_fingerprint(self.model_dir)}:{self.dtype}{kernels}{guard}"

    @functools.cached_property
    def invariance(self) -> Invariance:
        """Batch-invariant where the model runs the flat steps on a CPU, every linear layer's row blocks were
        measured sound when it loaded (``row_blocks.plan_rows``) and attention passes
        ``invariant.check_attention`` in the model's own shape (checked once)."""
        if not (self.loaded.flat and self.loaded.plain_layers):
            return Invariance(False, "this model decodes in padded fixed batches (its attention or cache layers "
                                     "are not plain), where an answer can change with what shares its batch")
        if self.device.type != "cpu":
            return Invariance(False, f"batch invariance is built and checked for CPUs; on {self.device.type} an "
                                     "answer can change with what shares its batch (share one --cache between "
                                     "runs you compare)")
        config = self.model.config
        heads = int(config.num_attention_heads)
        kv_heads = int(getattr(config, "num_key_value_heads", None) or heads)
        dim = int(getattr(config, "head_dim", None) or config.hidden_size // heads)
        failed = self.loaded.linear_failure or check_attention(kv_heads, heads // kv_heads, dim)
        if failed is not None:
            return Invariance(False, f"this machine's kernels failed localeval's invariance check ({failed}); "
                                     "share one --cache between runs you compare")
        return Invariance(True, f"transformers on the CPU in {self.dtype}: linear layers in row blocks "
                                "measured for each weight shape and tiled attention, checked on this machine "
                                "when the judge loaded")

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
        results: list[Result | None] = [None] * len(requests)

        def done(i: int, result: Result) -> None:
            results[i] = result
            if on_result is not None:
                on_result(i, result)

        rows: list[Row] = []
        for i, req in enumerate(requests):
            ids = list(self._encode(req.messages))
            budget = self.max_new_tokens or req.max_tokens
            if len(ids) + budget > self.context_window:
                done(i, Result([Choice("", 0, "context_too_long")], prompt_tokens=len(ids)))
                continue
            schema = schema_text(req.schema)
            plan = self.max_new_tokens or req.planned_tokens
            for k in range(req.n if req.temperature > 0 else 1):
                rows.append(Row(i, ids, schema, budget, req.temperature, req.seed + k, soft=req.soft, planned=plan))
        by_request: dict[int, list[Row]] = {}
        for row in rows:
            by_request.setdefault(row.request, []).append(row)
        waiting = Counter(r.request for r in rows)

        def finished(row: Row) -> None:
            waiting[row.request] -= 1
            if waiting[row.request] == 0:
                done(row.request, self._result(requests[row.request], by_request[row.request]))

        self._decode(rows, finished)
        return [r for r in results if r is not None]

    def _batches(self, rows: list[Row]) -> list[tuple[list[Row], int]]:
        """Batches of similar length under this engine's limits, each with the prefix its rows share."""
        plan = plan_batches([r.ids for r in rows], [r.plan for r in rows], self.batch_size,
                            self.batch_tokens, self.loaded.plain_layers)
        return [([rows[k] for k in batch], shared) for batch, shared in plan]

    def _decode(self, rows: list[Row], finished: Callable[[Row], None] | None = None) -> None:
        """Decode ``rows`` in place under this engine's grammar; ``finished(row)`` as each row completes."""
        plan = self._batches(rows)
        leads = self.leads if any(r.soft for r in rows) else None
        if not (self.loaded.plain_layers and self.loaded.flat):
            for batch, shared in plan:
                decode_batch(self.loaded, self.grammar, batch, shared, self.prefixes, finished, leads)
            return
        for batch, shared in plan:
            for row in batch:
                row.shared = shared
        # Prompts in token order: the asks of one prompt and one sample, which share the longest prefixes,
        # come one after another (an ask's n samples stay together, in seed order)
        queue = sorted(rows, key=lambda r: r.ids)
        decode_continuous(self.loaded, self.grammar, queue, self.batch_size, self.prefixes, finished, leads,
                          self.guard, self.drafts)

    @functools.cached_property
    def leads(self) -> LeadTable:
        """Which tokens of the vocabulary start with "0" or "1" (built on the first soft ask)."""
        texts = self.tokenizer.batch_decode([[i] for i in range(self.vocab_size)], skip_special_tokens=False)
        return LeadTable.from_texts([str(t) for t in texts], (self.vocab_size + 31) // 32)

    def _result(self, request: Request, rows: list[Row]) -> Result:
        own = sorted(rows, key=lambda r: r.seed)
        choices = [self._choice(r) for r in own]
        if request.temperature <= 0:
            choices = choices * request.n  # greedy: the n answers are one answer
        return Result(choices, prompt_tokens=len(own[0].ids), cached_prompt_tokens=own[0].cached)

    def _choice(self, row: Row) -> Choice:
        text = self.tokenizer.decode(row.tokens, skip_special_tokens=True)
        return Choice(str(text), len(row.tokens), row.finish, tuple(row.probs) if row.soft else None)
