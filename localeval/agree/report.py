"""Does the judge agree with the humans, and what is the metric's mean once its bias is corrected?

Per labelled metric of a run:

* sample labels: accuracy and Cohen's kappa on pass/fail, where a score (human or judge) of at least
  0.5 is a pass, so binary labels are compared as they are; Spearman and Pearson on the scores
  themselves, unless both sides are all 0/1; and the prediction-powered mean (``ppi.py``) from the
  judge's valid scores on the whole run and the labelled pairs;
* verdict labels: accuracy, kappa and the confusion matrix of the judge's verdicts in the trace
  against the human's, each verdict resampled on its own for the intervals.

A label whose sample is missing from the run, or NaN there, is counted as unmatched and left out.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from localeval.agree.labels import Labels, SampleLabel, VerdictLabel, read_labels
from localeval.agree.ppi import PPIResult, ppi_mean
from localeval.agree.stats import bootstrap_ci, compute, confusion_matrix, is_binary, threshold
from localeval.data.errors import DataError, Problem
from localeval.errors import LocalevalError
from localeval.metrics.registry import base_name, definition_of
from localeval.report.compare import check_unique_ids
from localeval.report.runs import Run, RunLike, as_run

PASS = 0.5  # a score at least this is a pass, for accuracy and kappa on sample labels


@dataclass(frozen=True)
class Estimate:
    """A statistic and its bootstrap interval; None where undefined (too few pairs, a constant side)."""

    value: float | None
    ci: tuple[float, float] | None


@dataclass(frozen=True)
class MetricAgreement:
    """One metric at one level ("sample" or "verdict")."""

    metric: str
    level: str
    labels: int  # labels given
    n: int  # labels compared with a judge value
    binary: bool  # every human label is 0 or 1
    accuracy: Estimate
    kappa: Estimate
    spearman: Estimate | None  # sample level with non-binary scores only
    pearson: Estimate | None
    confusion: list[list[int]] | None  # verdict level: rows human 0/1, columns judge 0/1
    ppi: PPIResult | None
    ppi_note: str | None  # why there is no corrected mean

    @property
    def unmatched(self) -> int:
        return self.labels - self.n


@dataclass(frozen=True)
class AgreementReport:
    """Every labelled metric, with the settings of the intervals."""

    labels: str
    run: str
    metrics: list[MetricAgreement]
    level: float
    resamples: int
    seed: int

    def get(self, metric: str, level: str = "sample") -> MetricAgreement | None:
        return next((m for m in self.metrics if m.metric == metric and m.level == level), None)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        data = asdict(self)
        for m, raw in zip(self.metrics, data["metrics"], strict=True):
            raw["unmatched"] = m.unmatched
            raw["ppi"] = m.ppi.to_dict() if m.ppi is not None else None
        return _lists(data)


def _lists(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_lists(v) for v in value]
    return value


def to_dict(report: AgreementReport) -> dict[str, Any]:
    """``report.to_dict()``."""
    return report.to_dict()


def _estimate(statistic: str, a: list[float], b: list[float], options: dict[str, Any]) -> Estimate:
    if not a:
        return Estimate(None, None)
    value = compute(statistic, a, b)
    if math.isnan(value):
        return Estimate(None, None)
    return Estimate(value, bootstrap_ci(statistic, a, b, **options))


def _run_metric(name: str, run: Run) -> str:
    """The run's metric a label names: the exact name, or the one metric with that base name."""
    names = run.metric_names
    if name in names:
        return name
    matches = [m for m in names if base_name(m) == name]
    if len(matches) == 1:
        return matches[0]
    have = ", ".join(names) or "none"
    raise LocalevalError(f"labels for metric {name!r}, which the run {run.label} does not have "
                         f"{'unambiguously ' if matches else ''}(its metrics: {have})")


def _sample_level(metric: str, rows: list[SampleLabel], run: Run, options: dict[str, Any]) -> MetricAgreement:
    values = run.values(metric)
    pairs = [(x.label, v) for x in rows if (v := values.get(x.id)) is not None]
    human = [h for h, _ in pairs]
    judge = [j for _, j in pairs]
    continuous = not (is_binary(human) and is_binary(judge))
    hb, jb = (list(map(float, threshold(v, PASS))) for v in (human, judge))
    ppi, note = None, None
    valid = [v for v in values.values() if v is not None]
    if len(pairs) < 2:
        note = "needs at least 2 labelled samples with a valid judge score"
    else:
        ppi = ppi_mean(valid, judge, human, level=options["level"])
    return MetricAgreement(
        metric=metric, level="sample", labels=len(rows), n=len(pairs), binary=is_binary(human),
        accuracy=_estimate("accuracy", hb, jb, options), kappa=_estimate("kappa", hb, jb, options),
        spearman=_estimate("spearman", human, judge, options) if continuous else None,
        pearson=_estimate("pearson", human, judge, options) if continuous else None,
        confusion=None, ppi=ppi, ppi_note=note,
    )


def _verdict_level(metric: str, rows: list[VerdictLabel], run: Run, options: dict[str, Any],
                   problems: list[Problem]) -> MetricAgreement:
    definition = definition_of(metric)
    key = definition.verdicts_key if definition is not None else "verdicts"
    scores = dict(run.scores(metric))
    human: list[float] = []
    judge: list[float] = []
    for x in rows:
        score = scores.get(x.id)
        verdicts = score.trace.get(key) if score is not None and score.value is not None else None
        if not isinstance(verdicts, list):
            continue  # sample missing or NaN: unmatched
        if x.index >= len(verdicts):
            problems.append(Problem(x.row, "index", f"{x.index} is past the end: the judge's trace of sample "
                                    f"{x.id!r} has {len(verdicts)} {key} (positions 0 to {len(verdicts) - 1})"))
            continue
        human.append(float(x.label))
        judge.append(float(threshold([float(verdicts[x.index])], PASS)[0]))
    return MetricAgreement(
        metric=metric, level="verdict", labels=len(rows), n=len(human), binary=True,
        accuracy=_estimate("accuracy", human, judge, options), kappa=_estimate("kappa", human, judge, options),
        spearman=None, pearson=None, confusion=confusion_matrix(human, judge), ppi=None,
        ppi_note="verdict labels: give sample labels for a corrected mean",
    )


def agree(labels: str | Path | Labels, run: RunLike, *, level: float = 0.95, resamples: int = 2000,
          seed: int = 0) -> AgreementReport:
    """Agreement of a run's judge with human labels, per metric, and the bias-corrected means."""
    found = labels if isinstance(labels, Labels) else read_labels(labels)
    scored = as_run(run)
    check_unique_ids(scored)
    options = {"level": level, "resamples": resamples, "seed": seed}
    problems: list[Problem] = []
    results = []
    for name in found.metrics:
        metric = _run_metric(name, scored)
        rows = [x for x in found.samples if x.metric == name]
        if rows:
            results.append(_sample_level(metric, rows, scored, options))
        verdicts = [x for x in found.verdicts if x.metric == name]
        if verdicts:
            results.append(_verdict_level(metric, verdicts, scored, options, problems))
    if problems:
        raise DataError(problems, found.source)
    if not any(m.n for m in results):
        ids = [s.id for s in scored.samples[:5]]
        raise LocalevalError(f"no label in {found.source} matches a valid score of {scored.label}: check that "
                             f"the ids are the run's (it has {', '.join(map(repr, ids))}, ...)")
    return AgreementReport(found.source, scored.label, results, level, resamples, seed)


def _cell(e: Estimate | None) -> str:
    if e is None or e.value is None:
        return "-"
    return f"{e.value:.2f}" + (f" [{e.ci[0]:.2f}, {e.ci[1]:.2f}]" if e.ci is not None else "")


def _mean_cell(value: float, ci: tuple[float, float]) -> str:
    return f"{value:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def _table(rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return [line(rows[0]), line(["-" * w for w in widths])] + [line(r) for r in rows[1:]]


def format_agreement(report: AgreementReport) -> str:
    """The agreement table, the confusion matrices and the corrected means, as text."""
    pct = f"{report.level:.0%}"
    out = [f"labels: {report.labels}", f"run:    {report.run}", ""]
    rows = [["metric", "level", "labels", "n", "accuracy", "kappa", "spearman", "pearson"]]
    rows += [[m.metric, m.level, str(m.labels), str(m.n), _cell(m.accuracy), _cell(m.kappa), _cell(m.spearman),
              _cell(m.pearson)] for m in report.metrics]
    out += _table(rows, {2, 3})
    out.append(f"[{pct} paired bootstrap, {report.resamples} resamples, seed {report.seed}]  n: labels with a "
               "valid judge value. accuracy, kappa: pass/fail, a score >= 0.5 passes.")
    for m in report.metrics:
        if m.confusion is not None and m.n:
            (tn, fp), (fn, tp) = m.confusion
            out += ["", f"{m.metric}: the judge's verdicts (columns) against the human's (rows)"]
            out += _table([["", "judge 0", "judge 1"], ["human 0", str(tn), str(fp)], ["human 1", str(fn), str(tp)]],
                          {1, 2})
    ppis = [m for m in report.metrics if m.level == "sample"]
    if ppis:
        out += ["", f"Mean over the run, with {pct} intervals (normal approximation)"]
        rows = [["metric", "N", "n", "judge mean", "corrected mean (PPI)", "labels only", "to halve the interval"]]
        for m in ppis:
            p = m.ppi
            rows.append([m.metric, "-", str(m.n), "-", "-", "-", m.ppi_note or "-"] if p is None else
                        [m.metric, str(p.n_total), str(p.n_labelled), _mean_cell(p.judge_mean, p.judge_ci),
                         _mean_cell(p.estimate, p.ci), _mean_cell(p.labels_mean, p.labels_ci), p.halving_note])
        out += _table(rows, {1, 2})
        out.append("judge mean: the judge's scores alone, its bias ignored. corrected: judge mean + mean(human - "
                   "judge) on the labelled samples, which must be a random sample of the run.")
    unmatched = [f"{m.metric} ({m.level}) {m.unmatched}" for m in report.metrics if m.unmatched]
    if unmatched:
        out.append(f"labels left out (sample not in the run, or NaN there): {', '.join(unmatched)}")
    return "\n".join(out)
