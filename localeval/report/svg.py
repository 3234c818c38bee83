"""Plots as inline SVG text: no plotting library, nothing fetched when the page opens."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

BAR, BAR_BAD, AXIS, TEXT = "#4c78a8", "#c44e52", "#888", "#333"


def _svg(width: int, height: int, label: str, body: list[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}" '
            f'font-family="sans-serif" font-size="11">' + "".join(body) + "</svg>")


def _text(x: float, y: float, text: str, anchor: str = "middle", color: str = TEXT) -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" fill="{color}">{escape(text)}</text>'


def bin_counts(values: Sequence[float], bins: int, lo: float, hi: float) -> list[int]:
    """Counts per equal-width bin over [lo, hi]; ``hi`` itself falls in the last bin."""
    counts = [0] * bins
    width = (hi - lo) / bins
    for v in values:
        i = min(bins - 1, max(0, math.floor((v - lo) / width)))
        counts[i] += 1
    return counts


def histogram(values: Sequence[float], *, nan: int = 0, label: str = "", bins: int = 10,
              width: int = 360, height: int = 170) -> str:
    """Score histogram over [0, 1] (wider when scores go below 0), with the NaN count as its own bar."""
    lo = min(0.0, math.floor(min(values, default=0.0) * 10) / 10)
    hi = max(1.0, math.ceil(max(values, default=1.0) * 10) / 10)
    counts = bin_counts(values, bins, lo, hi)
    left, right, top, bottom = 30, 50, 14, 30
    plot_w, plot_h = width - left - right, height - top - bottom
    peak = max([*counts, nan, 1])
    step = plot_w / bins
    body = [_text(width / 2, 11, label)] if label else []
    for i, count in enumerate(counts):
        h = plot_h * count / peak
        a, b = lo + i * (hi - lo) / bins, lo + (i + 1) * (hi - lo) / bins
        body.append(f'<rect x="{left + i * step + 1:.1f}" y="{top + plot_h - h:.1f}" width="{step - 2:.1f}" '
                    f'height="{h:.1f}" fill="{BAR}"><title>{a:.2f} to {b:.2f}: {count}</title></rect>')
    if nan:
        h = plot_h * nan / peak
        x = left + plot_w + 16
        body.append(f'<rect x="{x}" y="{top + plot_h - h:.1f}" width="{step - 2:.1f}" height="{h:.1f}" '
                    f'fill="{BAR_BAD}"><title>NaN: {nan}</title></rect>')
        body.append(_text(x + step / 2, height - bottom + 14, "NaN", color=BAR_BAD))
    base = top + plot_h
    body.append(f'<line x1="{left}" y1="{base}" x2="{left + plot_w}" y2="{base}" stroke="{AXIS}"/>')
    body.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{base}" stroke="{AXIS}"/>')
    for tick in (lo, (lo + hi) / 2, hi):
        tx = left + plot_w * (tick - lo) / (hi - lo)
        body.append(_text(tx, base + 14, f"{tick:g}"))
    body.append(_text(left - 4, top + 8, str(peak), anchor="end"))
    body.append(_text(left - 4, base, "0", anchor="end"))
    body.append(_text(left + plot_w / 2, height - 3, "score"))
    return _svg(width, height, label or "histogram", body)


def interval_plot(rows: Sequence[tuple[str, float | None, tuple[float, float] | None, int]], *,
                  width: int = 560, row_h: int = 26) -> str:
    """One row per label: a point (the difference) and its interval, with a line at 0; the last
    item of a row colours it: 1 better (green), -1 worse (red), 0 no detectable change."""
    shown = [(n, d, ci, s) for n, d, ci, s in rows if d is not None]
    ends = [abs(x) for _, d, ci, _ in shown for x in (d, *(ci or ())) if x is not None]
    reach = max([*ends, 0.05]) * 1.15
    left, right, top = 190, 20, 10
    plot_w = width - left - right
    height = top + row_h * max(1, len(shown)) + 24

    def x_of(v: float) -> float:
        return left + plot_w * (v + reach) / (2 * reach)

    body = [f'<line x1="{x_of(0):.1f}" y1="{top}" x2="{x_of(0):.1f}" y2="{height - 22}" '
            f'stroke="{AXIS}" stroke-dasharray="3,3"/>']
    for i, (name, diff, ci, sign) in enumerate(shown):
        y = top + row_h * i + row_h / 2
        body.append(_text(left - 8, y + 4, name[:30], anchor="end"))
        color = {1: "#2a9d4b", -1: BAR_BAD}.get(sign, BAR)
        if ci is not None:
            body.append(f'<line x1="{x_of(ci[0]):.1f}" y1="{y:.1f}" x2="{x_of(ci[1]):.1f}" y2="{y:.1f}" '
                        f'stroke="{color}" stroke-width="2"/>')
        body.append(f'<circle cx="{x_of(diff):.1f}" cy="{y:.1f}" r="4" fill="{color}">'
                    f'<title>{escape(name)}: {diff:+.3f}</title></circle>')
    for tick in (-reach, 0.0, reach):
        body.append(_text(x_of(tick), height - 8, f"{tick:+.2f}" if tick else "0"))
    return _svg(width, height, "differences B - A with intervals", body)
