"""User-defined criteria as metrics: ``--metrics examples/criteria.toml:polite`` (or the whole file).

The arithmetic is Ragas 0.4.3's: a binary criterion is its aspect critic (the verdict; with strictness
above 1, made odd as Ragas does, the most common of that many sampled verdicts), a 1-to-N criterion its
rubric score (the rating itself, not rescaled). The column is the criterion's name; the trace keeps the
criterion, so the report shows it without the file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from localeval.data.sample import LIST_FIELDS, Sample
from localeval.errors import LocalevalError
from localeval.metrics.criteria_file import Criterion, load_criteria
from localeval.metrics.definition import MetricDef, MetricSpec
from localeval.metrics.options import apply_options, did_you_mean
from localeval.metrics.soft import note_soft
from localeval.prompts.base import Prompt
from localeval.prompts.criteria import criterion_prompt
from localeval.steps import Ask, Steps


def odd_strictness(strictness: int) -> int:
    """Ragas' aspect critic makes an even strictness odd by adding one, so a majority always exists."""
    return strictness if strictness % 2 else strictness + 1


def most_common(answers: Sequence[int]) -> int:
    """The answer given most often (the first one seen on a tie), as Ragas' aspect critic scores its votes."""
    return Counter(answers).most_common(1)[0][0]


def judge_criterion(sample: Sample, trace: dict, *, criterion: Criterion, prompt: Prompt,
                    strictness: int = 1) -> Steps:
    """Ask the judge about the criterion's fields of one sample; the score is the (most common) answer."""
    data = {f: list(sample.get(f) or ()) if f in LIST_FIELDS else sample.get(f) or "" for f in criterion.fields}
    inp = prompt.input_model(**data)
    n = odd_strictness(strictness)
    answers = [(yield Ask(prompt, inp))] if n == 1 else list((yield Ask(prompt, inp, n=n)))
    votes = [a.verdict if criterion.binary else a.rating for a in answers]
    trace["criterion"] = {"name": criterion.name, "definition": criterion.definition,
                          "scale": criterion.scale_words, "fields": list(criterion.fields)}
    trace["votes"] = votes
    trace["reasons"] = [a.reason for a in answers]
    if criterion.binary:  # soft: p(1) itself, or its mean over several votes
        note_soft(trace, lambda p1: sum(p1) / len(p1), votes)
    return float(most_common(votes))


def criterion_definition(criterion: Criterion) -> MetricDef:
    """The registry's view of a criterion: its steps, fields and strictness option."""
    kind = "0/1 verdict" if criterion.binary else f"rating 1-{criterion.points}"
    return MetricDef(partial(judge_criterion, criterion=criterion, prompt=criterion_prompt(criterion)),
                     criterion.fields, (), {"strictness": criterion.strictness},
                     summary=f"criterion ({kind}): {criterion.definition}", trace="criterion")


# What the report knows of any criterion column (the criterion itself is in each score's trace).
CRITERION_VIEW = MetricDef(judge_criterion, (), summary="a user-defined criterion", trace="criterion")


def _spec(path: Path, criterion: Criterion, parts: Sequence[str], reserved: Collection[str]) -> MetricSpec:
    if criterion.name in reserved:
        raise LocalevalError(f"{path}, criterion {criterion.name!r}: the name is a built-in metric's; "
                             "rename the criterion (its name is its column)")
    definition = criterion_definition(criterion)
    base = f"{path}:{criterion.name}"
    options = apply_options(criterion.name, definition, {}, parts)
    changed = {k: v for k, v in options.items() if v != definition.options[k]}
    name = criterion.name + ("(" + ",".join(f"{k}={v}" for k, v in changed.items()) + ")" if changed else "")
    return MetricSpec(name, base, definition, options)


def criteria_specs(parts: Sequence[str], reserved: Collection[str] = ()) -> list[MetricSpec]:
    """``FILE``, ``FILE:NAME`` or ``FILE:NAME:strictness=3`` -> one spec per criterion chosen.

    ``reserved``: the built-in metrics' names, which no criterion may take (a criterion's name is its column).
    """
    path = Path(parts[0]).resolve()
    criteria = load_criteria(path)
    rest = list(parts[1:])
    if rest and "=" not in rest[0]:
        wanted = rest.pop(0)
        by_name = {c.name: c for c in criteria}
        if wanted not in by_name:
            raise LocalevalError(f"{path}: no criterion {wanted!r}{did_you_mean(wanted, list(by_name))} "
                                 f"(it defines: {', '.join(by_name)})")
        criteria = [by_name[wanted]]
    return [_spec(path, c, rest, reserved) for c in criteria]


def criterion_view(trace: dict[str, Any]) -> MetricDef | None:
    """The definition the report uses for a score whose trace holds a criterion, else None."""
    return CRITERION_VIEW if isinstance(trace.get("criterion"), dict) else None
