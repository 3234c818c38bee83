"""Draft tokens, model-free: prompt lookup over a row's context and the grammar's forced text."""

from __future__ import annotations

from localeval.engine.transformers.drafts import PromptLookup, draft


def test_the_latest_earlier_occurrence_is_followed() -> None:
    look = PromptLookup([1, 2, 3, 9, 1, 2, 4, 8, 1, 2], n=2)
    assert look.propose(3) == [4, 8, 1]  # 1, 2 occurred twice before: the later one is followed
    look.extend([4])
    assert look.propose(2) == [8, 1]  # 2, 4 is now the ending


def test_a_loop_is_proposed_past_the_present_with_its_period() -> None:
    loop = PromptLookup([7, 5, 6, 5, 6, 5], n=2)
    assert loop.propose(6) == [6, 5, 6, 5, 6, 5]


def test_nothing_is_proposed_without_an_earlier_occurrence_or_room() -> None:
    assert PromptLookup([1, 2, 3], n=2).propose(4) == []
    assert PromptLookup([1], n=2).propose(4) == []  # shorter than n
    assert PromptLookup([1, 2, 1, 2], n=2).propose(0) == []


def test_forced_text_comes_first_and_the_lookup_continues_after_it() -> None:
    look = PromptLookup([10, 11, 12, 13, 14, 20], n=2)
    encode = {"ab": [11, 12]}.__getitem__
    assert draft(look, "ab", encode, 5) == [11, 12, 13, 14, 20]  # 11, 12 was followed by 13, 14, 20
    assert draft(look, "ab", encode, 1) == [11]  # the budget bounds the forced tokens too
    assert draft(look, "", encode, 3) == []  # 14, 20 never occurred before
