"""A gate for CI: floors on means, ceilings on NaN shares, no detectable regression against a baseline.

``gate(run, min={"faithfulness": 0.8}, max_nan=0.05)`` returns a GateResult; ``assert result.passed,
result.message`` reads well inside a pytest test. A floor applies to the mean on valid samples; the
NaN share has its own ceiling, so a run cannot pass a floor by failing on its hard samples.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from localeval.errors import LocalevalError
from localeval.metrics.registry import base_name, column_of, definition_of, spelling
from localeval.report.comparable import comparison_warnings
from localeval.report.compare import MIN_PAIRS, TOO_FEW, WORSE, compare_metric, format_ci, no_shared_ids
from localeval.report.runs import Run, RunLike, as_run


class GateRuleError(LocalevalError):
    """A rule that cannot be checked as written: a value out of range, a metric name that is not one, no rule at
    all (the CLI exits 2, apart from the 1 of a gate that failed)."""

    exit_code = 2


NO_RULE = ("gate: no rule given, so nothing to check; give at least one: min={'faithfulness': 0.8} (a floor on "
           "a metric's mean), max_nan=0.05 or max_nan={'faithfulness': 0.05} (a ceiling on the NaN share), "
           "baseline=RUN with no_worse=['faithfulness'] (no detectable regression)")


@dataclass(frozen=True)
class GateResult:
    """Failures: one line per failed rule; checks: one line per rule, passed or not; warnings: why the run and its
    baseline may differ by more than the change (they fail nothing)."""

    failures: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def message(self) -> str:
        return "gate passed" if self.passed else "\n".join(self.failures)

    def __bool__(self) -> bool:
        return self.passed


def _absent(metric: str, run: Run, which: str = "the run") -> str:
    """The failure of a rule on a metric ``run`` did not compute; GateRuleError when the name is the problem: no
    metric localeval knows, or the run's column of that metric is written otherwise (with its options)."""
    names = [spelling(n) for n in run.metric_names]
    has = f"it has: {', '.join(names) or 'no metric'}"
    same = [n for n in names if base_name(n) == base_name(metric)]
    if definition_of(metric) is not None and not same:
        return f"{metric}: not in {which} ({has})"
    similar = same or difflib.get_close_matches(metric, names, 2)
    hint = f"did you mean {' or '.join(similar)}?" if similar else has
    raise GateRuleError(f"gate: {metric!r} is not a metric of {which}; {hint} (name each metric as "
                        "evaluate --metrics does)")


def _columns(names: Iterable[str], *runs: Run) -> dict[str, str]:
    """Each name a rule gives -> the run's column it means (a name no run has is kept, for ``_absent``)."""
    return {name: next((c for r in runs if (c := column_of(name, r.metric_names)) is not None), name)
            for name in names}


def _share(value: float) -> str:
    return f"{value:.1%}"


def _check_number(kind: str, metric: str, value: float, low: float, high: float) -> None:
    if not isinstance(value, int | float) or math.isnan(value) or not low <= value <= high:
        raise GateRuleError(f"{kind} for {metric}: {value!r} must be a number from {low} to {high}")


def _floors(run: Run, floors: Mapping[str, float], failures: list[str], checks: list[str]) -> None:
    for metric, floor in floors.items():
        _check_number("--min", metric, floor, -1.0, 1.0)
        if metric not in run.metric_names:
            failures.append(_absent(metric, run))
            continue
        s = run.metric_summary(metric)
        if s.mean is None:
            failures.append(f"{spelling(metric)}: no valid score ({s.nan_count} of {s.n} NaN), so it cannot "
                            f"meet the floor {floor:.2f}")
        elif s.mean < floor:
            failures.append(f"{spelling(metric)}: mean {s.mean:.2f} is under the floor {floor:.2f}")
        else:
            checks.append(f"{spelling(metric)}: mean {s.mean:.2f} meets the floor {floor:.2f}")


def _ceilings(run: Run, max_nan: float | Mapping[str, float], failures: list[str],
              checks: list[str]) -> None:
    ceilings = dict(max_nan) if isinstance(max_nan, Mapping) else dict.fromkeys(run.metric_names, max_nan)
    for metric, ceiling in ceilings.items():
        _check_number("--max-nan", metric, ceiling, 0.0, 1.0)
        if metric not in run.metric_names:
            failures.append(_absent(metric, run))
            continue
        s = run.metric_summary(metric)
        if s.nan_share > ceiling:
            reasons = ", ".join(f"{r} {c}" for r, c in s.nan_reasons.items())
            failures.append(f"{spelling(metric)}: NaN share {_share(s.nan_share)} ({s.nan_count}/{s.n}: {reasons}) "
                            f"is over the ceiling {_share(ceiling)}")
        else:
            checks.append(f"{spelling(metric)}: NaN share {_share(s.nan_share)} is within {_share(ceiling)}")


def _regressions(run: Run, baseline: Run, metrics: Sequence[str], failures: list[str],
                 checks: list[str], resamples: int, seed: int) -> None:
    unpaired = no_shared_ids(baseline, run)
    if unpaired is not None:
        failures.append(f"{', '.join(metrics)}: cannot check against the baseline: {unpaired}")
        return
    for metric in metrics:
        if metric not in run.metric_names:
            failures.append(_absent(metric, run))
            continue
        if metric not in baseline.metric_names:
            failures.append(_absent(metric, baseline, "the baseline run"))
            continue
        m = compare_metric(baseline, run, metric, resamples=resamples, seed=seed)
        if m.paired == 0:
            failures.append(f"{spelling(metric)}: no sample has a valid score in both the run and the baseline "
                            f"({m.missing} missing on one side, {m.nan} NaN), so no comparison")
            continue
        detail = (f"{m.mean_a:.3f} -> {m.mean_b:.3f} (difference {m.diff:+.3f}, 95% CI "
                  f"{format_ci(m.ci)}, {m.paired} pairs, {m.excluded} left out)")
        if m.verdict == WORSE:
            failures.append(f"{spelling(metric)}: detectably worse than the baseline: {detail}")
        else:
            why = f"{TOO_FEW}: a verdict needs {MIN_PAIRS}" if m.verdict == TOO_FEW else m.verdict
            checks.append(f"{spelling(metric)}: not detectably worse than the baseline ({why}): {detail}")


def gate(
    run: RunLike,
    *,
    baseline: RunLike | None = None,
    min: Mapping[str, float] | None = None,  # shadows the builtin: named as the CLI's --min
    max_nan: float | Mapping[str, float] | None = None,
    no_worse: Sequence[str] = (),
    resamples: int = 2000,
    seed: int = 0,
) -> GateResult:
    """Check a run against its rules; a metric a rule names but the run lacks is a failure, a name that is no
    metric (or not as the run writes it) a GateRuleError, as is a rule that cannot be checked.

    A metric is named as ``--metrics`` writes it (``factual_correctness:mode=precision``) or as the run's column
    (``factual_correctness(mode=precision)``). ``min``: metric -> floor for its mean on valid samples.
    ``max_nan``: one ceiling for every metric of the run, or metric -> ceiling. ``no_worse``: metrics that must
    not be detectably worse than in ``baseline`` (paired by sample id; worse when the 95% bootstrap interval
    excludes 0); the result's ``warnings`` then say where the two runs' judges, settings or batch invariance differ.
    """
    if isinstance(no_worse, str):
        no_worse = [no_worse]
    if not min and (max_nan is None or (isinstance(max_nan, Mapping) and not max_nan)) and not no_worse:
        raise GateRuleError(NO_RULE + (" (a baseline alone is no rule: name the metrics in no_worse)"
                                        if baseline is not None else ""))
    if no_worse and baseline is None:
        raise GateRuleError("no_worse needs a baseline run to compare with (--baseline RUN)")
    current = as_run(run)
    failures: list[str] = []
    checks: list[str] = []
    warnings: list[str] = []
    floors = _columns(min or {}, current)
    _floors(current, {floors[name]: floor for name, floor in (min or {}).items()}, failures, checks)
    if isinstance(max_nan, Mapping):
        ceilings = _columns(max_nan, current)
        max_nan = {ceilings[name]: ceiling for name, ceiling in max_nan.items()}
    if max_nan is not None:
        _ceilings(current, max_nan, failures, checks)
    if no_worse:
        assert baseline is not None
        base = as_run(baseline)
        metrics = _columns(no_worse, current, base)
        _regressions(current, base, [metrics[name] for name in no_worse], failures, checks, resamples, seed)
        warnings = comparison_warnings(base, current, ("the baseline", "the run"))
    return GateResult(failures, checks, warnings)
