"""Grammar-constrained decoding for a batch whose rows each follow their own JSON schema.

A backend turns a schema into a row matcher; :class:`BatchGrammar` keeps one matcher per row and
a packed token bitmask (bit ``t % 32`` of word ``t // 32`` set: token ``t`` allowed), the layout
both xgrammar and outlines_core write. Answers are compact JSON, no blank between tokens (``{"a":1,"b":2}``):
the model cannot spend its budget on blanks, and the vLLM engine writes the same text (its xgrammar
backend with ``disable_any_whitespace``), so both engines see the same token sequences.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import torch

from localeval.errors import LocalevalError

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

GRAMMARS = ("xgrammar", "outlines")
OUTLINES_WHITESPACE = ""  # no blank between JSON tokens
SEPARATORS = (",", ":")  # item and key separators, as vLLM's xgrammar backend sets them
_CACHE_SIZE = 512  # compiled grammars kept per backend


class RowMatcher(Protocol):
    """The grammar state of one row."""

    def fill(self, bitmask: torch.Tensor, index: int) -> None:
        """Write the tokens allowed next into row ``index`` of ``bitmask``."""
        ...

    def accept(self, token: int) -> bool:
        """Advance by one token; False if the grammar rejects it."""
        ...

    def forced(self) -> str:
        """The text the grammar allows alone from here ("" where none, or the backend cannot tell)."""
        ...


class GrammarBackend(Protocol):
    """Compiles JSON schemas (cached by schema text) into fresh row matchers."""

    name: str
    stop_token_ids: tuple[int, ...]
    banned_token_ids: tuple[int, ...]  # control tokens never allowed inside an answer

    def matcher(self, schema: str) -> RowMatcher:
        """A matcher at the start of ``schema`` (a JSON text)."""
        ...


def schema_text(schema: dict[str, Any]) -> str:
    """The schema's text, the cache key of its compiled grammar. Keys keep their order: the order of
    ``properties`` is the order the judge writes its fields in (a reason before its verdict)."""
    return json.dumps(schema, separators=(",", ":"))


def make_backend(
    name: str, tokenizer: PreTrainedTokenizerBase, vocab_size: int, stop_token_ids: Sequence[int]
) -> GrammarBackend:
    """The grammar backend called ``name`` for this tokenizer."""
    if name == "xgrammar":
        return XGrammarBackend(tokenizer, vocab_size, stop_token_ids)
    if name == "outlines":
        return OutlinesBackend(tokenizer, vocab_size, stop_token_ids)
    raise LocalevalError(f"unknown grammar backend {name!r}; available: {', '.join(GRAMMARS)}")


def _control_tokens(tokenizer: PreTrainedTokenizerBase, stop_token_ids: Sequence[int]) -> tuple[int, ...]:
    """Special and added control tokens (``<|im_start|>``, ...) other than the stop tokens."""
    special = set(tokenizer.all_special_ids) | {
        i for i, t in tokenizer.added_tokens_decoder.items() if getattr(t, "special", False)
    }
    return tuple(sorted(special - set(stop_token_ids)))


def _cached(cache: OrderedDict[str, Any], key: str, build: Any) -> Any:
    if key in cache:
        cache.move_to_end(key)
        return cache[key]
    value = cache[key] = build()
    if len(cache) > _CACHE_SIZE:
        cache.popitem(last=False)
    return value


class _XGrammarRow:
    def __init__(self, matcher: Any) -> None:
        self._matcher = matcher

    def fill(self, bitmask: torch.Tensor, index: int) -> None:
        self._matcher.fill_next_token_bitmask(bitmask, index)

    def accept(self, token: int) -> bool:
        return bool(self._matcher.accept_token(token))

    def forced(self) -> str:
        return str(self._matcher.find_jump_forward_string())


class XGrammarBackend:
    """xgrammar: JSON schema to a grammar with compact separators and no free whitespace."""

    name = "xgrammar"

    def __init__(self, tokenizer: PreTrainedTokenizerBase, vocab_size: int, stop_token_ids: Sequence[int]):
        import xgrammar as xgr

        self._xgr = xgr
        self.stop_token_ids = tuple(stop_token_ids)
        self.banned_token_ids = _control_tokens(tokenizer, stop_token_ids)  # xgrammar lets them into strings
        info = xgr.TokenizerInfo.from_huggingface(
            tokenizer, vocab_size=vocab_size, stop_token_ids=list(self.stop_token_ids)
        )
        self._compiler = xgr.GrammarCompiler(info, max_threads=2)
        self._compiled: OrderedDict[str, Any] = OrderedDict()

    def matcher(self, schema: str) -> RowMatcher:
        compiled = _cached(
            self._compiled,
            schema,
            lambda: self._compiler.compile_json_schema(
                schema, any_whitespace=False, separators=SEPARATORS, strict_mode=True
            ),
        )
        return _XGrammarRow(self._xgr.GrammarMatcher(compiled))


class _OutlinesRow:
    def __init__(self, guide: Any, words: int) -> None:
        self._guide = guide
        self._words = words

    def fill(self, bitmask: torch.Tensor, index: int) -> None:
        row = bitmask[index]
        self._guide.write_mask_into(row.data_ptr(), self._words, 4)

    def accept(self, token: int) -> bool:
        if not self._guide.accepts_tokens([token]):
            return False
        self._guide.advance(token, return_tokens=False)
        return True

    def forced(self) -> str:
        return ""  # outlines_core's guide has no jump-forward string


class OutlinesBackend:
    """outlines_core: JSON schema to a regex to a token index (building one takes seconds)."""

    name = "outlines"

    def __init__(self, tokenizer: PreTrainedTokenizerBase, vocab_size: int, stop_token_ids: Sequence[int]):
        from outlines_core import Vocabulary

        eos = int(stop_token_ids[0])
        self.stop_token_ids: tuple[int, ...] = (eos,)  # outlines_core knows a single end token
        self._words = (vocab_size + 31) // 32
        self.banned_token_ids = _control_tokens(tokenizer, self.stop_token_ids)
        strings: dict[str, list[int]] = {}
        for token, token_id in tokenizer.get_vocab().items():
            if token_id in self.banned_token_ids or token_id in stop_token_ids or token_id >= vocab_size:
                continue  # no control token inside an answer; the end token is added by Vocabulary
            strings.setdefault(tokenizer.convert_tokens_to_string([token]), []).append(token_id)
        self._vocabulary = Vocabulary(eos, strings)
        self._indexes: OrderedDict[str, Any] = OrderedDict()

    def matcher(self, schema: str) -> RowMatcher:
        from outlines_core import Guide, Index
        from outlines_core.json_schema import build_regex_from_schema

        index = _cached(
            self._indexes,
            schema,
            lambda: Index(build_regex_from_schema(schema, OUTLINES_WHITESPACE), self._vocabulary),
        )
        return _OutlinesRow(Guide(index), self._words)


def _pack(token_ids: Sequence[int], words: int) -> torch.Tensor:
    """A one-row bitmask with the bits of ``token_ids`` set."""
    bits = torch.zeros(words * 32, dtype=torch.bool)
    bits[[t for t in token_ids if 0 <= t < words * 32]] = True
    weights = torch.tensor([1 << i for i in range(31)] + [-(1 << 31)], dtype=torch.int64)
    return (bits.view(words, 32).long() * weights).sum(dim=1).to(torch.int32)


_xgrammar_apply: Any
try:  # xgrammar's C++ kernel masks a CPU batch in a few ms; the same bitmask layout as outlines_core
    from xgrammar import apply_token_bitmask_inplace as _xgrammar_apply
except ImportError:  # pragma: no cover
    _xgrammar_apply = None

# _BITS[b, k]: bit k of byte b; a packed mask is read byte by byte (little-endian int32 words).
_BITS = ((torch.arange(256).unsqueeze(1) >> torch.arange(8)) & 1).bool()


def _unpack(bitmask: torch.Tensor, vocab_size: int) -> torch.Tensor:
    """The boolean (rows, vocab_size) form of a packed bitmask."""
    as_bytes = bitmask.contiguous().view(torch.uint8).long()
    return _BITS[as_bytes].view(bitmask.shape[0], -1)[:, :vocab_size]


class BatchGrammar:
    """One matcher per batch row; masks logits and tells which rows have finished their JSON."""

    def __init__(self, backend: GrammarBackend, schemas: Sequence[str], vocab_size: int) -> None:
        self._backend, self._schemas = backend, list(schemas)
        self._matchers = [backend.matcher(s) for s in schemas]
        self._vocab_size = vocab_size
        words = (vocab_size + 31) // 32
        self.bitmask = torch.zeros(len(schemas), words, dtype=torch.int32)
        self._stop_ids = frozenset(backend.stop_token_ids)
        self._not_stop = ~_pack(backend.stop_token_ids, words)
        self._not_banned = ~_pack(backend.banned_token_ids, words)

    def fill(self, rows: Sequence[int]) -> list[bool]:
        """Compute the allowed next tokens of ``rows``; True for a row that can only stop now."""
        if not rows:
            return []
        for row in rows:
            self._matchers[row].fill(self.bitmask, row)
        allowed = self.bitmask[list(rows)] & self._not_banned
        self.bitmask[list(rows)] = allowed
        other = (allowed & self._not_stop).ne(0).any(dim=1)
        return (~other).tolist()

    def apply(self, logits: torch.Tensor, rows: Sequence[int]) -> None:
        """Set disallowed logits to -inf in place; logits row ``i`` belongs to batch row ``rows[i]``."""
        bitmask = self.bitmask[list(rows)]
        if _xgrammar_apply is not None and logits.device.type == "cpu" and logits.dtype == torch.float32:
            _xgrammar_apply(logits, bitmask, vocab_size=min(logits.shape[1], self._vocab_size))
        else:
            allowed = _unpack(bitmask, self._vocab_size).to(logits.device)
            width = min(logits.shape[1], allowed.shape[1])
            logits[:, :width].masked_fill_(~allowed[:, :width], float("-inf"))
        logits[:, self._vocab_size :] = float("-inf")

    def is_stop(self, token: int) -> bool:
        """Whether ``token`` ends a row (the grammar allowed it only where the JSON is complete)."""
        return token in self._stop_ids

    def complete_with(self, row: int, tokens: Sequence[int]) -> bool:
        """Whether ``tokens`` form a whole answer ``row``'s schema allows; if so the row's grammar is
        moved to its end (nothing is left but to stop), else the row's grammar is left as it was."""
        matcher = self._backend.matcher(self._schemas[row])
        if not all(matcher.accept(t) for t in tokens):
            return False
        probe = torch.zeros(1, self.bitmask.shape[1], dtype=torch.int32)
        matcher.fill(probe, 0)
        if ((probe & self._not_banned & self._not_stop) != 0).any():
            return False  # the answer could still go on: not a complete JSON value
        self._matchers[row] = matcher
        return True

    def forced(self, row: int) -> str:
        """The text ``row``'s grammar allows alone from here: draft tokens that cannot be wrong about the
        text, though maybe about how the model splits it into tokens."""
        return self._matchers[row].forced()

    def accept(self, row: int, token: int) -> None:
        """Advance ``row`` by ``token``; a rejected token is a bug in masking, so it raises."""
        if not self._matchers[row].accept(token):
            raise RuntimeError(f"grammar rejected token {token} on row {row} after masking")
