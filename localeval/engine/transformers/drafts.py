"""Draft tokens for a greedy row: guesses of what it will write next, checked by the model in one pass.

A judge's answer is full of text it can be expected to write: the JSON keys and punctuation its schema
forces (``","verdict":`` after a reason), words copied from its prompt (a statement quoted in a reason,
a passage's phrase), and a small judge's loops (the same statement again and again). The decode loop
feeds a row's guessed tokens after its last one, the model scores every position in that one forward
pass, and the row keeps the guesses the model would have picked itself, plus the model's own pick at the
first position where they part. Greedy answers are therefore the ones decoding a token at a time gives
(up to the rounding of a wider matrix product); only the number of forward passes changes.

Two sources, both free to compute:

* what the row's grammar forces from here (xgrammar's jump-forward string), encoded as the tokenizer
  would encode it;
* prompt lookup: the last ``n`` tokens of the row's context (prompt, then answer) looked up where they
  last occurred before, and the tokens that followed them there proposed. Where that earlier
  occurrence runs into the present (a loop), the loop's period is repeated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

NGRAM = 3  # tokens matched to find where the context last said the same thing
MAX_DRAFT = 8  # draft tokens fed after a row's last token in one step


class PromptLookup:
    """Where each ``n``-gram of a row's context last occurred; proposes what followed it there.

    >>> look = PromptLookup([5, 6, 7, 8, 9], n=2)
    >>> look.propose(3)  # the context ends with 8, 9, which occurred nowhere before
    []
    >>> look.extend([5, 6])
    >>> look.propose(3)  # 5, 6 was followed by 7, 8, 9
    [7, 8, 9]
    >>> loop = PromptLookup([1, 2, 3, 1, 2, 3, 1, 2], n=2)
    >>> loop.propose(5)  # a loop of period 3, repeated past the present
    [3, 1, 2, 3, 1]
    """

    def __init__(self, context: Sequence[int], n: int = NGRAM) -> None:
        self.n = n
        self.context: list[int] = []
        self.last: dict[tuple[int, ...], int] = {}  # n-gram -> where the token after its last occurrence is
        self.extend(context)

    def extend(self, tokens: Sequence[int]) -> None:
        """Append tokens to the context. An n-gram is indexed once a token follows it, so the
        context's own ending is never found as its own earlier occurrence."""
        context, n = self.context, self.n
        for token in tokens:
            end = len(context)
            if end >= n:
                self.last[tuple(context[end - n : end])] = end
            context.append(token)

    def propose(self, k: int, after: Sequence[int] = ()) -> list[int]:
        """Up to ``k`` tokens that followed the last earlier occurrence of the context's ending
        (the context extended by ``after``, which is not indexed)."""
        context = self.context
        tail = (context[-self.n :] + list(after))[-self.n :] if after else context[-self.n :]
        if k <= 0 or len(tail) < self.n:
            return []
        start = self.last.get(tuple(tail))
        if start is None:
            return []
        end = len(context) + len(after)
        out: list[int] = []
        for i in range(k):
            at = start + i
            if at < len(context):
                out.append(context[at])
            elif at < end:  # the earlier occurrence runs into ``after``
                out.append(after[at - len(context)])
            else:  # into the present: the pattern from ``start`` repeats with its period
                out.append(out[i - (end - start)])
        return out


def draft(lookup: PromptLookup, forced: str, encode: Callable[[str], Sequence[int]],
          k: int = MAX_DRAFT) -> list[int]:
    """At most ``k`` draft tokens: ``forced`` (the text the grammar allows alone from here) encoded,
    then prompt lookup from the context extended by it.

    >>> look = PromptLookup([10, 11, 12, 20, 21, 10, 11], n=2)
    >>> draft(look, "", lambda s: [], 4)
    [12, 20, 21, 10]
    >>> draft(look, '",', lambda s: [99], 3)  # the forced text first
    [99]
    """
    head = list(encode(forced))[:k] if forced else []
    return head + lookup.propose(k - len(head), head)
