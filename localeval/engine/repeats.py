"""Ending a JSON list that has started to repeat itself: the guard against a small judge's loops.

A small judge that writes a list item it has written before ("A", "B", "A", "B", ...) nearly always
goes on repeating until the schema's item limit or its token budget. Every item after the first
repeat is decoded for nothing (the NLI step then asks about each distinct statement once and gives
the copies its verdict, ``prompts.base.Repeats``, but they still count in the score), and a looping
answer cut off by its budget is decoded a second time on the retry.

With the guard on, the moment an item of a list is complete (the judge has written the comma after
it) and equal, character for character, to an earlier item of the same list, the answer ends before
that item: the list and whatever holds it are closed there. The engine checks the shortened answer
against the schema's grammar and keeps the long one where the schema does not allow the short one
(a list whose length is fixed, such as NLI verdicts, one per statement, or a list that must go on).
Lists with no repeated item are decoded exactly as without the guard.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_CLOSERS = {"[": "]", "{": "}"}


@dataclass
class _Open:
    """A container open at this point of the text; for a list, the spans of its complete items."""

    kind: str  # "[" or "{"
    item_start: int | None = None  # where the item being written began (lists only)
    items: list[tuple[int, int]] = field(default_factory=list)  # [start, end) of each complete item


def repeat_cut(text: str) -> str | None:
    """``text`` (a JSON answer being written) ended before the first repeated item of a list, closed.

    None when no list has an item equal to an earlier item of the same list. Only items followed
    by their comma count: the judge has finished them. A list inside a string is text, not a list.

    >>> repeat_cut('{"statements":["A","B","A","')
    '{"statements":["A","B"]}'
    >>> repeat_cut('{"statements":["A","B","C"') is None
    True
    >>> repeat_cut('{"v":[{"r":"x","v":1},{"r":"x","v":1},{"r')
    '{"v":[{"r":"x","v":1}]}'
    """
    stack: list[_Open] = []
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        top = stack[-1] if stack else None
        if top is not None and top.kind == "[" and top.item_start is None and ch not in "],":
            top.item_start = i  # a list's item begins with its first character
        if ch == '"':
            in_string = True
        elif ch in _CLOSERS:
            stack.append(_Open(ch))
        elif ch in "]}":
            if stack:
                stack.pop()
        elif ch == "," and top is not None and top.kind == "[" and top.item_start is not None:
            start = top.item_start
            item = text[start:i]
            if any(text[a:b] == item for a, b in top.items):
                cut = top.items[-1][1]  # right after the item before the repeat
                return text[:cut] + "".join(_CLOSERS[o.kind] for o in reversed(stack))
            top.items.append((start, i))
            top.item_start = None
    return None


class RepeatGuard:
    """Finds, in a row's tokens, the answer cut before its first repeated list item, as tokens.

    ``tokenizer`` decodes and encodes the judge's tokens; a row is looked at only after a token
    holding a comma (where an item can have just ended).
    """

    def __init__(self, tokenizer: Any) -> None:
        self._tokenizer = tokenizer
        self._commas: dict[int, bool] = {}

    def _text(self, tokens: list[int]) -> str:
        return str(self._tokenizer.decode(tokens, skip_special_tokens=True))

    def ends_item(self, token: int) -> bool:
        """Whether ``token`` holds a comma."""
        if token not in self._commas:
            self._commas[token] = "," in self._text([token])
        return self._commas[token]

    def cut(self, tokens: list[int]) -> str | None:
        """The row's answer text ended before its first repeated list item (:func:`repeat_cut`)."""
        return repeat_cut(self._text(tokens))

    def tokens_for(self, tokens: list[int], cut: str) -> list[int]:
        """Tokens that spell ``cut``: the longest run of the row's own tokens it begins with, then the
        rest (the closing brackets, maybe the end of the item before the repeat) encoded afresh."""
        keep = len(tokens)
        while keep and not cut.startswith(self._text(tokens[:keep])):
            keep -= 1
        rest = cut[len(self._text(tokens[:keep])):]
        return tokens[:keep] + list(self._tokenizer(rest, add_special_tokens=False)["input_ids"])
