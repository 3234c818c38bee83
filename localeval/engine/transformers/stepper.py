"""One decode step's picks for some rows, under their grammar: mask, pick, advance, verify drafts, cut repeats."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from localeval.engine.grammar import BatchGrammar
from localeval.engine.repeats import RepeatGuard
from localeval.engine.soft import LeadTable, note_p1
from localeval.engine.transformers.decode import Row, pick

if TYPE_CHECKING:
    import torch


class Stepper:
    """One token for some rows: mask by grammar, pick, advance; report the rows that finish."""

    def __init__(self, grammar: BatchGrammar, rows: list[Row], generators: dict[int, Any],
                 report: Callable[[Row], None], leads: LeadTable | None = None,
                 guard: RepeatGuard | None = None) -> None:
        self.grammar, self.rows, self.generators = grammar, rows, generators
        self.report, self.leads, self.guard = report, leads, guard
        self.refused: dict[int, str] = {}  # per row, the last cut its schema did not allow

    def step(self, logits: torch.Tensor, ks: list[int]) -> list[int]:
        """Advance rows ``ks`` (logits row ``i`` is row ``ks[i]``); the rows that go on."""
        self.grammar.apply(logits, ks)
        if self.leads is not None:  # soft asks: p(1) at each binary decision
            note_p1(self.leads, logits, self.grammar.bitmask[ks], [self.rows[k] for k in ks])
        tokens = pick(logits, [self.rows[k] for k in ks], [self.generators.get(k) for k in ks])
        going: list[int] = []
        for k, token in zip(ks, tokens, strict=True):
            if self.grammar.is_stop(token):
                self._finish(k, "stop")
                continue
            self.grammar.accept(k, token)
            self.rows[k].tokens.append(token)
            if self.guard is not None and not self.rows[k].soft and self.guard.ends_item(token) and self._cut_repeat(k):
                continue
            going.append(k)
        still: list[int] = []
        for k, done in zip(going, self.grammar.fill(going), strict=True):
            if done:
                self._finish(k, "stop")
            elif len(self.rows[k].tokens) >= self.rows[k].max_tokens:
                self._finish(k, "length")
            else:
                still.append(k)
        return still

    def verify(self, k: int, logits: torch.Tensor, drafted: list[int]) -> tuple[int, bool]:
        """Row ``k`` has taken its pick after its last token; ``logits[j]`` follow its draft token
        ``drafted[j]``. Keep going while its pick is the draft token the model saw next: (draft tokens
        accepted, whether the row goes on)."""
        accepted = 0
        while accepted < len(drafted) and self.rows[k].tokens[-1] == drafted[accepted]:
            going = self.step(logits[accepted : accepted + 1], [k])
            accepted += 1
            if not going:
                return accepted, False
        return accepted, True

    def forced(self, k: int) -> str:
        """The text row ``k``'s grammar allows alone from here ("" where the backend cannot tell)."""
        return self.grammar.forced(k)

    def _cut_repeat(self, k: int) -> bool:
        """End row ``k`` before its first repeated list item, where its schema allows (the guard).

        A cut the schema refused (a list of fixed length) is not tried again for the same row."""
        assert self.guard is not None
        cut = self.guard.cut(self.rows[k].tokens)
        if cut is None or self.refused.get(k) == cut:
            return False
        shorter = self.guard.tokens_for(self.rows[k].tokens, cut)
        if not self.grammar.complete_with(k, shorter):
            self.refused[k] = cut
            return False
        self.rows[k].tokens = shorter
        self._finish(k, "stop")
        return True

    def _finish(self, k: int, reason: Any) -> None:
        self.rows[k].finish = reason
        self.report(self.rows[k])
