"""The report's HTML: stdlib only, every value escaped, charts as inline SVG (no script, no
stylesheet or font fetched), so the page renders the same from `file://` or any static host."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

MISSING = "—"

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1180px; padding: 1.5rem;
       color: #1d2430; }
h1 { margin-bottom: .2rem; } h2 { border-bottom: 1px solid #ccd; margin-top: 2.4rem; }
h3 { margin-top: 1.8rem; } nav a { margin-right: 1rem; }
table { border-collapse: collapse; margin: .6rem 0; font-size: 13px; display: block;
        overflow-x: auto; }
th, td { border: 1px solid #d8dce4; padding: 3px 7px; text-align: left; white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f2f4f8; }
dl.provenance { display: grid; grid-template-columns: max-content auto; gap: 2px 1rem; }
dl.provenance dt { font-weight: 600; } dl.provenance dd { margin: 0; font-family: monospace; }
.verdict { font-size: 16px; } .note { color: #555; font-size: 13px; }
.regime-official { color: #17622a; } .regime-unofficial { color: #8a4b00; }
pre.disclosure { white-space: pre-wrap; background: #f6f7f9; padding: .6rem; font-size: 13px; }
svg.chart { display: block; margin: .4rem 0; } svg.chart text { font: 12px system-ui, sans-serif; }
svg.chart .bar { fill: #4c78a8; } svg.chart .winner { fill: #2f9e44; }
svg.chart .whisker { stroke: #222; stroke-width: 1.5; } svg.chart .grid { stroke: #e3e6ec; }
"""


def number(value: Any, kind: str, *, points_scale: bool = False) -> str:
    """A value as the report shows it; `points_scale` = a headline already on 0-100."""
    if value is None:
        return MISSING
    if kind == "flag":
        return "yes" if value else "no"
    if kind == "count":
        return f"{int(value):d}"
    if kind == "fraction":
        return f"{float(value):.3f}"
    if kind == "points":
        return f"{100 * float(value):.1f}"
    if kind == "headline":
        return f"{float(value):.1f}" if points_scale else f"{float(value):.3f}"
    if kind == "usd":
        return f"${float(value):.4f}"
    if kind in ("seconds", "p"):
        return f"{float(value):.3f}" if kind == "seconds" else f"{float(value):.4f}"
    if kind == "ms":
        return f"{float(value):.0f}"
    return str(value)


def table(columns: Sequence[tuple[str, str, str]], rows: Sequence[dict[str, Any]], **fmt) -> str:
    """`columns` = (name, label, kind); numbers right-aligned."""
    head = "".join(f"<th>{escape(label)}</th>" for _, label, _ in columns)
    body = []
    for row in rows:
        cells = []
        for name, _, kind in columns:
            css = ' class="num"' if kind not in ("text", "flag") else ""
            cells.append(f"<td{css}>{escape(number(row.get(name), kind, **fmt))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def bar_chart(
    title: str,
    bars: Sequence[tuple[str, float | None, float | None, float | None, bool]],
    *,
    scale: float,
    digits: int,
    full: float,
) -> str:
    """Horizontal bars: (label, value, whisker low, whisker high, highlighted) per row, every
    value multiplied by `scale` (100 for points), the axis from 0 (or the lowest value) to
    `full` (or the highest); a missing value gets its label and "—", no bar."""
    label_w, value_w, row_h, top, width = 210, 70, 22, 26, 760
    plot_w = width - label_w - value_w - 16
    shown = [
        (label, *(None if v is None else float(v) * scale for v in (value, low, high)), hi)
        for label, value, low, high, hi in bars
    ]
    numbers = [v for _, *values, _ in shown for v in values if v is not None]
    lo = min([0.0, *numbers])
    hi = max([full, *numbers])
    span = (hi - lo) or 1.0

    def x(v: float) -> float:
        return label_w + (v - lo) / span * plot_w

    height = top + row_h * len(shown) + 8
    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(title)}"><title>{escape(title)}</title>'
    ]
    for i in range(5):
        tick = lo + span * i / 4
        parts.append(
            f'<line class="grid" x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="{top - 6}" '
            f'y2="{height - 8}"/><text x="{x(tick):.1f}" y="{top - 10}" text-anchor="middle">'
            f"{tick:.{digits}f}</text>"
        )
    for i, (label, value, low, high, highlighted) in enumerate(shown):
        y = top + i * row_h
        mid = y + row_h / 2
        parts.append(
            f'<text x="{label_w - 6}" y="{mid + 4:.1f}" text-anchor="end">{escape(label)}</text>'
        )
        if value is None:
            parts.append(f'<text x="{label_w + 4}" y="{mid + 4:.1f}">{MISSING}</text>')
            continue
        start, end = sorted((x(max(lo, 0.0)), x(value)))
        whisker = ""
        tip = f"{label}: {value:.{digits}f}"
        if low is not None and high is not None:
            tip += f" ({low:.{digits}f}–{high:.{digits}f})"
            whisker = (
                f'<line class="whisker" x1="{x(low):.1f}" x2="{x(high):.1f}" y1="{mid:.1f}" '
                f'y2="{mid:.1f}"/><line class="whisker" x1="{x(low):.1f}" x2="{x(low):.1f}" '
                f'y1="{mid - 5:.1f}" y2="{mid + 5:.1f}"/><line class="whisker" '
                f'x1="{x(high):.1f}" x2="{x(high):.1f}" y1="{mid - 5:.1f}" y2="{mid + 5:.1f}"/>'
            )
        parts.append(
            f'<g><title>{escape(tip)}</title><rect class="bar{" winner" if highlighted else ""}"'
            f' x="{start:.1f}" y="{y + 3}" width="{max(end - start, 0.5):.1f}" '
            f'height="{row_h - 6}"/>{whisker}<text x="{width - value_w}" y="{mid + 4:.1f}">'
            f"{value:.{digits}f}</text></g>"
        )
    parts.append("</svg>")
    return "".join(parts)


def page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        # Nothing may load: no script runs and no request leaves the page.
        '<meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>{escape(title)}</title><style>{STYLE}</style></head>"
        f"<body>{body}</body></html>\n"
    )
