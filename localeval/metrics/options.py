"""A metric's options: in words for ``localeval metrics`` and errors, and parsed from ``name:key=value``."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from localeval.errors import LocalevalError

if TYPE_CHECKING:
    from localeval.metrics.definition import MetricDef


def did_you_mean(given: str, valid: Sequence[str]) -> str:
    """``; did you mean 'x'?`` for a close valid name, else nothing."""
    close = difflib.get_close_matches(given, list(valid), n=2, cutoff=0.6)
    return f"; did you mean {' or '.join(map(repr, close))}?" if close else ""


def option_words(definition: MetricDef, key: str) -> str:
    """An option in words: what it takes and its default, e.g. ``mode: f1 | precision | recall (default f1)``."""
    default = definition.options[key]
    if key in definition.choices:
        return f"{key}: {' | '.join(map(str, definition.choices[key]))} (default {default})"
    if key == "k":
        return f"k: 1 or more, or all (default {'all ranks' if default is None else default})"
    if key == "strictness":
        return f"strictness: 1 or more (default {default})"
    if key == "weight":
        return f"weight: the similarity's weight, 0 to 1 (default {default})"
    if key == "threshold" and _similarity_threshold(definition):
        return f"threshold: the string similarity a match needs, 0 to 1 (default {default})"
    if key == "threshold":
        return f"threshold: a cosine for a 0/1 score, or none (default {'none' if default is None else default})"
    if key in WHOLE:
        return f"{key}: a whole number, {WHOLE[key]} or more (default {default})"
    return f"{key}: a number (default {default})"


def _similarity_threshold(definition: MetricDef) -> bool:
    """Whether ``threshold`` is a string similarity that must be a number (the string-based context metrics),
    not a cosine that may be none."""
    return "distance_measure" in definition.options


def _options_list(base: str, definition: MetricDef) -> str:
    if not definition.options:
        return f"{base} takes no options"
    return "its options: " + "; ".join(option_words(definition, key) for key in definition.options)


FLOATS = {"beta": (None, None), "weight": (0.0, 1.0), "threshold": (None, None), "coeff": (0.0, 1.0)}
WHOLE = {"k": 1, "strictness": 1, "min_span_words": 0}  # whole-number options and their least value


def _float(metric: str, key: str, raw: str, definition: MetricDef) -> float | None:
    if key == "threshold" and raw.lower() == "none":
        if _similarity_threshold(definition):
            raise LocalevalError(f"metric {metric}: option threshold must be a number, the string similarity "
                                 f"(0 to 1) a match needs, e.g. {metric}:threshold=0.7")
        return None
    low, high = FLOATS[key]
    try:
        value = float(raw)
        if (low is not None and value < low) or (high is not None and value > high):
            raise ValueError
    except ValueError:
        bounds = f" from {low} to {high}" if low is not None else ""
        raise LocalevalError(f"metric {metric}: option {key}={raw!r} must be a number{bounds}, e.g. "
                             f"{metric}:{key}=0.5") from None
    return value


def _convert(metric: str, key: str, raw: str, definition: MetricDef) -> Any:
    if raw.lower() in ("none", "all") and key == "k":
        return None
    if key in FLOATS and key != "beta":
        return _float(metric, key, raw, definition)
    try:
        if key in WHOLE:
            value: Any = int(raw)
            if value < WHOLE[key]:
                raise ValueError
            return value
        if key == "beta":
            return float(raw)
    except ValueError:
        kind = (f"a whole number, {WHOLE[key]} or more" + (", or all" if key == "k" else "")
                if key != "beta" else "a number")
        raise LocalevalError(f"metric {metric}: option {key}={raw!r} must be {kind}, e.g. {metric}:{key}="
                             f"{2 if key != 'beta' else 0.5}") from None
    if key in definition.choices and raw not in map(str, definition.choices[key]):
        choices = [str(c) for c in definition.choices[key]]
        raise LocalevalError(f"metric {metric}: option {key}={raw!r} must be one of {' | '.join(choices)}"
                             f"{did_you_mean(raw, choices)}")
    return raw


def apply_options(base: str, definition: MetricDef, preset: dict[str, Any], parts: Sequence[str]) -> dict[str, Any]:
    """The definition's defaults, then ``preset``, then each ``key=value`` of ``parts``, checked."""
    options = {**definition.options, **preset}
    for part in parts:
        key, sep, raw = (p.strip() for p in part.partition("="))
        if key not in definition.options:
            hint = did_you_mean(key, list(definition.options))
            raise LocalevalError(f"metric {base}: unknown option {key!r}{hint} ({_options_list(base, definition)})")
        if not sep or not raw:
            raise LocalevalError(f"metric {base}: option {key!r} needs a value, e.g. {base}:{key}="
                                 f"{definition.choices.get(key, (2,))[-1]} ({option_words(definition, key)})")
        options[key] = _convert(base, key, raw, definition)
    return options
