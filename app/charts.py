"""Altair charts over mart rows (rendered by `st.altair_chart`). No SQL, no new numbers: each
chart plots columns a page already read, one mark per row it is given, so a test can count
marks against the rows."""

from __future__ import annotations

import altair as alt
import pandas as pd

# SVG, not canvas: every mark is an element a browser test can count (vega-embed reads
# usermeta.embedOptions from the spec).
SVG = {"embedOptions": {"renderer": "svg"}}


def pareto_front(frame: pd.DataFrame, cost: str, quality: str) -> pd.Series:
    """True where no other row is at least as cheap and at least as good, and strictly better on
    one of the two (lower cost, higher quality). Rows without a cost are never on the front."""
    on_front = []
    rows = frame[[cost, quality]].astype(float)
    for i, (c, q) in rows.iterrows():
        if pd.isna(c) or pd.isna(q):
            on_front.append(False)
            continue
        others = rows.drop(index=i).dropna()
        dominated = (
            (others[cost] <= c)
            & (others[quality] >= q)
            & ((others[cost] < c) | (others[quality] > q))
        ).any()
        on_front.append(not dominated)
    return pd.Series(on_front, index=frame.index)


def cost_quality(
    frame: pd.DataFrame, *, label: str, cost: str, quality: str, cost_title: str, quality_title: str
) -> alt.LayerChart:
    """One point per row (cost × quality), the Pareto frontier drawn as a line through its
    points and marked in the legend."""
    data = frame[[label, cost, quality]].dropna(subset=[cost, quality]).copy()
    data["frontier"] = pareto_front(data, cost, quality).map(
        {True: "on frontier", False: "dominated"}
    )
    points = (
        alt.Chart(data)
        .mark_point(filled=True, size=90)
        .encode(
            x=alt.X(f"{cost}:Q", title=cost_title),
            y=alt.Y(f"{quality}:Q", title=quality_title),
            color=alt.Color("frontier:N", title="Pareto frontier"),
            tooltip=[label, cost, quality, "frontier"],
        )
    )
    front = (
        alt.Chart(data[data["frontier"] == "on frontier"].sort_values(cost))
        .mark_line(strokeDash=[4, 3])
        .encode(x=f"{cost}:Q", y=f"{quality}:Q", order=f"{cost}:Q")
    )
    return alt.layer(front, points).properties(usermeta=SVG)


def score_with_ci(
    frame: pd.DataFrame,
    *,
    label: str,
    score: str,
    low: str,
    high: str,
    title: str,
    domain: list[float] | None = None,
) -> alt.LayerChart:
    """One bar per row, with its confidence interval as an error bar; `domain` is the metric's
    display range (`MetricScale.domain`, 0-1 unless given)."""
    data = frame[[label, score, low, high]].copy()
    order = data.sort_values(score, ascending=False)[label].tolist()
    bars = (
        alt.Chart(data)
        .mark_bar()
        .encode(
            y=alt.Y(f"{label}:N", sort=order, title=None),
            x=alt.X(f"{score}:Q", title=title, scale=alt.Scale(domain=domain or [0, 1])),
            tooltip=[label, score, low, high],
        )
    )
    errors = (
        alt.Chart(data)
        .mark_errorbar(ticks=True)
        .encode(
            y=alt.Y(f"{label}:N", sort=order),
            x=alt.X(f"{low}:Q", title=title),
            x2=f"{high}:Q",
        )
    )
    return alt.layer(bars, errors).properties(usermeta=SVG)


def latency(frame: pd.DataFrame, *, label: str, p50: str | None, p95: str, unit: str) -> alt.Chart:
    """p50 and p95 side by side per lane/engine: one bar per (row, percentile) present."""
    value_columns = [c for c in (p50, p95) if c]
    long = frame[[label, *value_columns]].melt(
        id_vars=label, var_name="percentile", value_name="latency"
    )
    long["percentile"] = long["percentile"].map({p50: "p50", p95: "p95"})
    long = long.dropna(subset=["latency"])
    return (
        alt.Chart(long)
        .mark_bar()
        .encode(
            y=alt.Y(f"{label}:N", title=None),
            yOffset="percentile:N",
            x=alt.X("latency:Q", title=f"latency ({unit})"),
            color=alt.Color("percentile:N"),
            tooltip=[label, "percentile", "latency"],
        )
        .properties(usermeta=SVG)
    )


def heatmap(
    frame: pd.DataFrame,
    *,
    x: str,
    y: str,
    value: str,
    title: str,
    domain: list[float] | None = None,
) -> alt.Chart:
    """One cell per row (x × y), coloured by `value` over `domain` (0-1 unless given)."""
    base = alt.Chart(frame[[x, y, value]]).encode(
        x=alt.X(f"{x}:N", title=None), y=alt.Y(f"{y}:N", title=None)
    )
    cells = base.mark_rect().encode(
        color=alt.Color(f"{value}:Q", title=title, scale=alt.Scale(domain=domain or [0, 1])),
        tooltip=[x, y, value],
    )
    return cells.properties(usermeta=SVG)


def series_with_band(
    frame: pd.DataFrame, *, x: str, y: str, lane: str, band_points: float
) -> alt.LayerChart:
    """Accuracy per run of a series, one line (and one point per run) per lane, with the ± noise
    band drawn around every run: a next run inside the band is not a difference that can be
    called (fct_series_accuracy.within_noise_band; band_points = percentage points)."""
    data = frame[[x, y, lane]].copy()
    data["low"] = data[y] - band_points / 100
    data["high"] = data[y] + band_points / 100
    area = (
        alt.Chart(data)
        .mark_area(opacity=0.2)
        .encode(x=f"{x}:O", y="low:Q", y2="high:Q", color=f"{lane}:N")
    )
    line = (
        alt.Chart(data)
        .mark_line(point=True)
        .encode(
            x=alt.X(f"{x}:O", title="run in series"),
            y=alt.Y(f"{y}:Q", title="strict accuracy"),
            color=f"{lane}:N",
            tooltip=[lane, x, y],
        )
    )
    return alt.layer(area, line).properties(usermeta=SVG)


def grouped_bars(
    frame: pd.DataFrame, *, group: str, label: str, value: str, title: str
) -> alt.Chart:
    """One bar per row: `value` per `label` within each `group` (e.g. engine per vertical)."""
    return (
        alt.Chart(frame[[group, label, value]])
        .mark_bar()
        .encode(
            y=alt.Y(f"{group}:N", title=None),
            yOffset=f"{label}:N",
            x=alt.X(f"{value}:Q", title=title),
            color=alt.Color(f"{label}:N"),
            tooltip=[group, label, value],
        )
        .properties(usermeta=SVG)
    )
