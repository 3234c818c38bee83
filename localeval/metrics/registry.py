"""Metric names parsed into the specs a run scores (options, criteria files, did-you-mean) against the one table of
definitions (``table.py``)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

from localeval.errors import LocalevalError
from localeval.metrics.criteria import criteria_specs
from localeval.metrics.definition import MetricDef, MetricSpec, Role, TraceKind  # noqa: F401 (re-exported)
from localeval.metrics.options import apply_options, did_you_mean, option_words  # noqa: F401 (re-exported)
from localeval.metrics.table import ALIASES, DEFAULT_METRICS, METRICS

CRITERIA_SUFFIXES = (".toml", ".py")  # a metric spec starting with such a path names a criteria file


def _unknown_metric(base: str) -> LocalevalError:
    if "(" in base and base.endswith(")"):  # a run's column name, e.g. factual_correctness(mode=precision)
        name, _, inside = base[:-1].partition("(")
        written = ":".join([name, *inside.split(",")])
        return LocalevalError(f"unknown metric {base!r}: write options after colons, e.g. {written!r}")
    if base.endswith((".yaml", ".yml", ".json")):
        return LocalevalError(f"{base}: criteria files are TOML (.toml) or Python (.py); write the criteria as "
                              "TOML tables, as in examples/criteria.toml")
    names = [*METRICS, *ALIASES]
    close = closest(base, names)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    return LocalevalError(f"unknown metric {base!r}{hint} (`localeval metrics` lists all {len(names)} names, what "
                          "each needs and its options)")


def closest(given: str, names: Sequence[str], most: int = 4) -> list[str]:
    """The few names ``given`` is likeliest to mean: close in spelling, or containing it (``bleu``: bleu_score).

    >>> closest("faithfullness", ["faithfulness", "context_recall"])
    ['faithfulness']
    >>> closest("bleu", ["bleu_score", "chrf_score"])
    ['bleu_score']
    """
    spelled = difflib.get_close_matches(given, list(names), n=most, cutoff=0.6)
    within = [n for n in names if len(given) >= 3 and given.lower() in n] if not spelled else []
    return list(dict.fromkeys([*spelled, *within]))[:most]


def parse_metric_items(text: str) -> list[MetricSpec]:
    """One spec, or one per criterion of a criteria file named without a criterion (``criteria.toml``)."""
    parts = [p.strip() for p in text.strip().split(":")]
    if parts[0].endswith(CRITERIA_SUFFIXES):
        return criteria_specs(parts, reserved=[*METRICS, *ALIASES])
    return [parse_metric(text)]


def parse_metric(text: str) -> MetricSpec:
    """``"factual_correctness:mode=precision:beta=0.5"``, ``"ndcg:k=5"`` or ``"criteria.toml:polite"`` -> a spec."""
    base, *parts = [p.strip() for p in text.strip().split(":")]
    if base.endswith(CRITERIA_SUFFIXES):
        specs = criteria_specs([base, *parts], reserved=[*METRICS, *ALIASES])
        if len(specs) > 1:
            raise LocalevalError(f"{base} defines {len(specs)} criteria; name one, e.g. {base}:{specs[0].name}")
        return specs[0]
    preset: dict[str, Any] = {}
    if base in ALIASES:
        base, preset = ALIASES[base]
    if base not in METRICS:
        raise _unknown_metric(base)
    definition = METRICS[base]
    options = apply_options(base, definition, preset, parts)
    changed = {k: v for k, v in options.items() if v != definition.options[k]}
    name = base
    if base == "noise_sensitivity" and changed.get("mode") == "irrelevant":
        name, changed = "noise_sensitivity_irrelevant", {k: v for k, v in changed.items() if k != "mode"}
    if changed:
        name += "(" + ",".join(f"{k}={v}" for k, v in changed.items()) + ")"
    return MetricSpec(name, base, definition, options)


def parse_metrics(items: str | Sequence[str] | None) -> list[MetricSpec]:
    """A comma-separated string or a list of metric names with options; duplicates removed."""
    if items is None:
        items = DEFAULT_METRICS
    if isinstance(items, str):
        items = [i for i in items.split(",") if i.strip()]
    specs: dict[str, MetricSpec] = {}
    for item in items:
        for spec in parse_metric_items(item):
            first = specs.setdefault(spec.name, spec)
            if first.base != spec.base:
                raise LocalevalError(f"two metrics would share the column {spec.name!r}: {first.base} and "
                                     f"{spec.base}; rename one criterion")
    if not specs:
        raise LocalevalError("no metric chosen")
    return list(specs.values())


def base_name(metric: str) -> str:
    """A metric's name without its options, written either way: ``factual_correctness(mode=precision)`` or
    ``factual_correctness:mode=precision`` -> ``factual_correctness``."""
    return metric.split("(", 1)[0].split(":", 1)[0]


def spelling(column: str) -> str:
    """A run's column as ``--metrics`` writes it, a word a shell takes as it is (Ragas' column names hold
    parentheses, which a shell does not).

    >>> spelling("factual_correctness(mode=precision,beta=0.5)")
    'factual_correctness:mode=precision:beta=0.5'
    >>> spelling("faithfulness")
    'faithfulness'
    """
    base, paren, inside = column.partition("(")
    if not paren or not inside.endswith(")"):
        return column
    return ":".join([base, *inside[:-1].split(",")])


def column_of(name: str, columns: Sequence[str]) -> str | None:
    """The column of ``columns`` (a run's) that a metric name means: the column itself, or the metric as
    ``--metrics`` writes it (``factual_correctness:mode=precision``, options in any order, an alias); None when
    none is."""
    if name in columns:
        return name
    spelled = {spelling(c): c for c in columns}
    if name.strip() in spelled:
        return spelled[name.strip()]
    try:
        column = parse_metric(name).name
    except LocalevalError:
        return None
    return column if column in columns else None


# The names a run's columns start with: the metrics, and the aliases that parse_metric keeps as a column name.
COLUMN_BASES: dict[str, MetricDef] = {
    **METRICS,
    **{alias: METRICS[base] for alias, (base, _) in ALIASES.items() if parse_metric(alias).name == alias},
}


def definition_of(metric: str) -> MetricDef | None:
    """The definition behind a run's column name (``ndcg(k=5)``, ``noise_sensitivity_irrelevant``), None if unknown."""
    return COLUMN_BASES.get(base_name(metric))


def metrics_in_role(role: Role) -> tuple[str, ...]:
    """The column base names the diagnosis reads as ``role``, in registry order."""
    return tuple(name for name, d in COLUMN_BASES.items() if d.role == role)
