"""report.html: one self-contained page (inline CSS, SVG plots, no script, nothing fetched).

Every string from the run (ids, metric names, judge output, paths) is escaped before it is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from localeval.report.aggregate import MetricSummary
from localeval.report.compare import BETTER, WORSE, Comparison, comparison_rows, verdict_rule
from localeval.report.conversation_view import CSS as CONVERSATION_CSS
from localeval.report.diagnosis import DIGITS, HIGH, LOW, NOISE_HIGH, NOISE_LOW, RULES, diagnose, unchecked_rules
from localeval.report.invariance import invariance_html
from localeval.report.judge_note import toy_judge_html
from localeval.report.moved import moved_html
from localeval.report.runs import Run, RunLike, Score, as_run, higher_is_better, read_texts
from localeval.report.sample_view import ids_view, sample_texts, trace_kind
from localeval.report.strata import strata
from localeval.report.svg import histogram, interval_plot
from localeval.report.trace_view import trace_html
from localeval.store.run_folder import write_atomic

REPORT = "report.html"
CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1180px;
color:#222;background:#fff;padding:0 16px;line-height:1.4}
h1{font-size:24px;margin-bottom:2px}h2{font-size:19px;border-bottom:2px solid #345;padding-bottom:3px;
margin-top:32px}h3{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse;margin:6px 0 12px;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#eef2f7}td.num{text-align:right;font-variant-numeric:tabular-nums}
caption{text-align:left;font-weight:600;padding:3px 0}
tr.bad td,.bad{background:#fbe3e4}tr.good td{background:#e6f4ea}.muted{color:#777}
.plots{display:flex;flex-wrap:wrap;gap:10px}.plots figure{margin:0;border:1px solid #ddd;padding:4px}
.finding{border-left:5px solid #c44e52;background:#fdf6f6;padding:6px 12px;margin:10px 0}
.finding.samples{border-left-color:#e0a030;background:#fdf9f0}
.sample{border:1px solid #ddd;padding:4px 10px;margin:8px 0;font-size:13px}
.sample p.head{font-size:15px;margin:6px 0}
.cols{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:16px}
@media (max-width:800px){.cols{grid-template-columns:minmax(0,1fr)}}
dl.texts{margin:4px 0;font-size:13px}dl.texts dt{font-weight:600;color:#345;margin-top:6px}
dl.texts dd{margin:0 0 0 10px}ol.contexts{margin:2px 0;padding-left:22px}ol.contexts li{margin:3px 0}
details.text summary{cursor:pointer}details[open]>summary .head{display:none}
details:not([open])>summary .less{display:none}
.verdict{font-size:12px;padding:0 5px;border-radius:3px}.verdict.good{background:#e6f4ea}
code{font-size:12px;background:#f1f1f1;padding:0 3px}
pre{background:#f6f6f6;padding:6px;font-size:12px;white-space:pre-wrap;word-break:break-word}
"""


def _f(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _pair(pair: Sequence[float] | None) -> str:
    return "-" if pair is None else f"[{pair[0]:.3f}, {pair[1]:.3f}]"


def table(head: Sequence[str], rows: Sequence[Sequence[Any]], numeric: set[int] | None = None) -> str:
    """An HTML table; every cell is escaped."""
    numeric = numeric or set()
    out = ["<table><tr>", *(f"<th>{escape(h)}</th>" for h in head), "</tr>"]
    for row in rows:
        cells = (f"<td{' class=num' if i in numeric else ''}>{escape(str(c))}</td>"
                 for i, c in enumerate(row))
        out += ["<tr>", *cells, "</tr>"]
    out.append("</table>")
    return "".join(out)


def page(title: str, body: Sequence[str]) -> str:
    return ("<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
            "<meta name=viewport content='width=device-width,initial-scale=1'>"
            f"<title>{escape(title)}</title><style>{CSS}{CONVERSATION_CSS}</style></head><body>"
            + "\n".join(body) + "</body></html>\n")


def _reason(code: Any) -> str:
    """A NaN reason as words: ``no_statements`` -> ``no statements``."""
    return str(code).replace("_", " ")


def _nan_cell(s: MetricSummary) -> str:
    reasons = ", ".join(f"{_reason(r)} {c}" for r, c in s.nan_reasons.items())
    return f"{s.nan_share:.1%}" + (f" ({reasons})" if reasons else "")


def summary_section(run: Run, summaries: dict[str, MetricSummary]) -> str:
    soft = any(s.soft_mean is not None for s in summaries.values())  # a run with soft verdicts
    rows = [(m, _f(s.mean) + (f" (soft {_f(s.soft_mean)})" if soft else ""), f"{s.valid}/{s.n}", _nan_cell(s),
             _pair(s.interval), _pair(s.ci95), _f(s.std)) for m, s in summaries.items()]
    head = ("metric", "mean (soft)" if soft else "mean", "valid/n", "NaN share (reasons)",
            "NaN interval [NaN as 0, on valid]", "95% bootstrap CI", "std")
    lower = [m for m in summaries if not higher_is_better(m)]
    note = (f"<p class=muted>Lower is better for {escape(', '.join(lower))}.</p>" if lower else "")
    return ("<h2 id=summary>Summary</h2>" + table(head, rows, {1, 2, 6}) +
            "<p class=muted>The true mean lies in the NaN interval: NaN counted as 0 at one end, left out "
            "at the other.</p>" + note + (_SOFT_NOTE if soft else ""))


_SOFT_NOTE = ("<p class=muted>soft: the mean soft score, each 0/1 verdict replaced by the judge's p(1) "
              "in the same formula (- for a metric without verdicts).</p>")


# summary.json's keys, in the words the page shows them in.
USAGE = {"asks": "asks", "judge_calls": "judge calls", "cache_hits": "cache hits",
         "prompt_tokens": "prompt tokens", "completion_tokens": "completion tokens",
         "engine_seconds": "judge seconds", "embed_texts": "texts embedded", "embed_seconds": "embedding seconds"}
FACTS = {"samples": "samples", "wall_seconds": "wall-clock seconds", "samples_per_second": "samples per second",
         "rounds": "rounds", "engine_calls": "judge engine calls", "embed_calls": "embedder calls",
         "judge": "judge", "embedder": "embedder", "on_missing": "on a missing field",
         "long_context": "on a context too long", "cache": "judge cache", "started": "started",
         "machine": "machine"}


def words(key: str) -> str:
    """A summary.json key as words: the name in FACTS or USAGE, else underscores as spaces."""
    return FACTS.get(key) or USAGE.get(key) or key.replace("_", " ")


def usage_section(run: Run) -> str:
    rows = [(name, *(u.get(k, "-") for k in USAGE)) for name, u in run.usage.items()]
    total = run.total
    if rows and total:
        rows.append(("total", *(total.get(k, "-") for k in USAGE)))
    wanted = ("samples", "wall_seconds", "samples_per_second", "rounds", "engine_calls", "embed_calls")
    facts = [(words(k), total[k]) for k in wanted if k in total]
    facts += [(words(k), v) for k, v in run.info.items() if isinstance(v, str | int | float)]
    if not rows and not facts:
        return ""
    return ("<h2 id=usage>Cost and usage</h2>"
            + (table(("metric", *USAGE.values()), rows, set(range(1, len(USAGE) + 1))) if rows else "")
            + (table(("run", "value"), facts) if facts else ""))


def plots_section(run: Run, summaries: dict[str, MetricSummary]) -> str:
    figures = []
    for m, s in summaries.items():
        values = [v for v in run.values(m).values() if v is not None]
        figures.append(f"<figure>{histogram(values, nan=s.nan_count, label=m)}</figure>")
    return "<h2 id=plots>Score distributions</h2><div class=plots>" + "".join(figures) + "</div>"


def sample_card(run: Run, metric: str, sample_id: str, score: Score, texts: dict[str, dict[str, Any]]) -> str:
    """One worst sample: its score, its texts (when samples.jsonl has them) beside the verdicts."""
    flag = " (unanswerable)" if _answerable(run, sample_id) is False else ""
    if score.value is None:
        head = f"<b>{escape(sample_id)}</b>{flag}: no score ({escape(_reason(score.nan_reason))})"
    else:
        head = f"<b>{escape(sample_id)}</b>{flag}: {escape(metric)} = {score.value:.3f}"
    row = texts.get(sample_id) if texts else None
    if trace_kind(metric) == "ids":
        verdicts = ids_view(metric, row) if texts else (
            "<p class=muted>The ids are not shown: the run folder has no samples.jsonl.</p>")
        if score.trace:
            verdicts += trace_html(metric, score.trace)
    else:
        verdicts = trace_html(metric, score.trace, contexts_shown=row is not None)
    left = sample_texts(metric, score.trace, row) if texts else ""
    body = f"<div class=cols><div>{left}</div><div>{verdicts}</div></div>" if left and verdicts else left + verdicts
    return f"<div class='sample{' bad' if score.value is None else ''}'><p class=head>{head}</p>{body}</div>"


def worst_section(run: Run, worst: int, texts: dict[str, dict[str, Any]]) -> str:
    parts = ["<h2 id=worst>Worst samples</h2>",
             f"<p class=muted>Per metric, the {worst} lowest scores (highest where lower is better), "
             "then samples without a score: the question, response, reference and retrieved contexts "
             "beside the judge's verdicts. Long texts are folded: click one to read it whole.</p>"]
    if not texts:
        parts.append("<p class=muted>The samples' texts are not shown: the run folder has no "
                     "samples.jsonl (localeval evaluate writes it).</p>")
    for m in run.metric_names:
        scored = run.scores(m)
        valid = sorted((sc.value, i, sc) for i, sc in scored if sc.value is not None)
        if not higher_is_better(m):
            valid.reverse()
        nans = [(i, sc) for i, sc in scored if sc.value is None]
        parts.append(f"<h3>{escape(m)}</h3>")
        for _, sid, sc in valid[:worst]:
            parts.append(sample_card(run, m, sid, sc, texts))
        for sid, sc in nans[:worst]:
            parts.append(sample_card(run, m, sid, sc, texts))
        if len(nans) > worst:
            parts.append(f"<p class=muted>and {len(nans) - worst} more samples without a score</p>")
    return "".join(parts)


def _answerable(run: Run, sample_id: str) -> bool | None:
    return next((s.answerable for s in run.samples if s.id == sample_id), None)


def diagnosis_section(run: Run) -> str:
    """The findings, by title; left out when no rule fires."""
    findings = diagnose(run)
    if not findings:
        return ""
    parts = ["<h2 id=diagnosis>Diagnosis</h2>",
             f"<p class=muted>Rules from the metrics' interpretation tables, on the answerable samples: "
             f"high means &ge; {HIGH}, low &lt; {LOW}; noise sensitivity high &ge; {NOISE_HIGH}, low "
             f"&lt; {NOISE_LOW}.</p>"]
    for f in findings:
        where = "on the run's means" if f.scope == "run" else "on a subgroup of samples"
        evidence = ", ".join(f"{m} = {v:.{DIGITS}f}" for m, v in f.evidence.items())
        ids = ", ".join(f.samples[:10]) + (", ..." if len(f.samples) > 10 else "")
        parts.append(
            f"<div class='finding {escape(f.scope)}'><b>{escape(f.title)}</b> "
            f"<span class=muted>({where})</span><br>"
            f"when: {escape(f.condition)}<br>evidence: {escape(evidence)}<br>"
            f"holds on {len(f.samples)} of {f.n} samples{': ' + escape(ids) if ids else ''}<br>"
            f"<b>advice:</b> {escape(f.advice)}</div>")
    titles = {rule.id: rule.title for rule in RULES}
    skipped = [titles[r] for r in unchecked_rules(run)]
    if skipped:
        parts.append(f"<details class=muted><summary>{len(skipped)} more rules not checked, for want of "
                     "their metrics</summary><ul>" + "".join(f"<li>{escape(t)}</li>" for t in skipped)
                     + "</ul></details>")
    return "".join(parts)


def strata_section(run: Run) -> str:
    """Refusals on the samples marked answerable: false; left out when there are none."""
    st = strata(run)
    un, ans = st["unanswerable"], st["answerable"]
    if not un["n"]:
        return ""
    rows = [(m, _f(d["mean"]), f"{d['valid']}/{d['n']}", _f(run.mean(m)))
            for m, d in ans["metrics"].items()]
    parts = ["<h2 id=refusals>Unanswerable questions (refusals)</h2>",
             "<p class=muted>Samples marked answerable: false are scored by whether the response refused, "
             "and left out of the answer relevancy of the answerable samples.</p>"]
    if rows:
        parts.append(table(("metric", "mean, answerable", "valid/n", "mean, all samples"), rows, {1, 2, 3}))
    rate = "-" if un["rate"] is None else f"{un['rate']:.1%}"
    parts.append(table(("unanswerable", "refused", "answered", "unknown", "refusal rate"),
                       [(un["n"], un["refused"], un["answered"], un["unknown"], rate)], {0, 1, 2, 3, 4}))
    parts.append(f"<p>{escape(un['note'])}</p>")
    listed = [(s["id"], {True: "refused", False: "answered", None: "unknown"}[s["refused"]])
              for s in un["samples"][:30]]
    if listed:
        parts.append(table(("sample", "response"), listed))
    return "".join(parts)


def render_report(run: RunLike, *, worst: int = 5) -> str:
    """The whole report page for a run."""
    r = as_run(run)
    summaries = {m: r.metric_summary(m) for m in r.metric_names}
    texts = r.texts or (read_texts(r.path) if r.path is not None else {})
    sections = [summary_section(r, summaries), diagnosis_section(r), strata_section(r),
                plots_section(r, summaries), worst_section(r, worst, texts), usage_section(r)]
    body = [f"<h1>localeval report</h1><p class=muted>{escape(r.label)}: {len(r.samples)} samples, "
            f"{len(summaries)} metrics</p>", invariance_html(r.info), toy_judge_html(r.info),
            *(s for s in sections if s)]
    return page(f"localeval report: {r.label}", body)


def write_report(run_dir: str | Path, *, worst: int = 5, out: str | Path | None = None) -> Path:
    """Write RUN/report.html (or ``out``) and return its path."""
    path = Path(out) if out is not None else Path(run_dir) / REPORT
    write_atomic(path, render_report(run_dir, worst=worst))
    return path


def render_comparison(c: Comparison) -> str:
    """The comparison as a page: the table and the differences with their intervals."""
    rows = comparison_rows(c)
    signs = {BETTER: 1, WORSE: -1}
    plot = interval_plot([(m.metric, m.diff, m.ci, signs.get(m.verdict, 0)) for m in c.metrics])
    only = "".join(f"<p class=muted>only in {side}: {escape(', '.join(names))}</p>"
                   for side, names in (("A", c.only_a), ("B", c.only_b)) if names)
    warned = "".join(f"<div class=finding>{escape(w)}</div>" for w in c.warnings)
    body = [f"<h1>localeval comparison</h1><p>A: {escape(c.run_a)}<br>B: {escape(c.run_b)}</p>", warned,
            "<h2>Paired differences</h2>", table(rows[0], rows[1:], {1, 2, 3, 5}),
            f"<p class=muted>Means on the samples valid in both runs; paired bootstrap ({c.resamples} "
            f"resamples, seed {c.seed}). {escape(verdict_rule(c))}</p>",
            only, "<h2>B - A with intervals</h2>", plot, moved_html(c.moved)]
    return page("localeval comparison", body)


def write_comparison_html(c: Comparison, path: str | Path) -> Path:
    out = Path(path)
    write_atomic(out, render_comparison(c))
    return out
