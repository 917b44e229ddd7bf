"""Scorecard: who wins each family, at a glance (marts.vendor_scorecard).

One table per family (search lanes, vendor answers, deep research, extraction, live-URL
extraction), each from the latest run of its leaderboard, headline on that leaderboard's
scale, the winner's margin over the runner-up and the leaderboard's own significance test.
Every row links to its leaderboard, opened on the same run and regime.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from app import data, ui

MISSING = "—"

FAMILIES = {
    "qa_search": ("Question answering: search lanes", "app_pages/qa_leaderboard.py"),
    "qa_answer": ("Question answering: vendors' own answers", "app_pages/qa_leaderboard.py"),
    "deep_research": ("Deep research (DRACO)", "app_pages/draco_leaderboard.py"),
    "extraction": ("Extraction", "app_pages/extraction_leaderboard.py"),
    "live_extraction": ("Live-URL extraction", "app_pages/live_extraction.py"),
}
METRICS = {
    "strict_accuracy": "Strict accuracy",
    "score": "Score × 100",
    "composite": "Composite (active weights)",
}


def number(value: Any, digits: int) -> str:
    return f"{float(value):.{digits}f}" if ui.is_number(value) else MISSING


def digits_for(scale: str) -> int:
    return 1 if scale.startswith("points") else 3


def leaderboard_url(row: dict[str, Any]) -> str:
    family, run_id, regime = row["family"], row["run_id"], row["regime"]
    if family in ("qa_search", "qa_answer"):
        return "/qa_leaderboard?" + urlencode({"run": run_id, "grader": regime})
    if family == "deep_research":
        return "/draco_leaderboard?" + urlencode({"run": run_id, "judge": regime})
    return "/" + FAMILIES[family][1].removeprefix("app_pages/").removesuffix(".py")


def margin_text(margin: Any, digits: int) -> str:
    """The margin at the table's precision; a lead too small to show says so, never 0.000."""
    if ui.is_number(margin) and 0 < abs(float(margin)) < 0.5 * 10**-digits:
        return f"less than {10**-digits:.{digits}f}"
    return number(margin, digits)


def verdict(top: dict[str, Any]) -> str:
    digits = digits_for(top["metric_scale"])
    name = ui.md_escape(top["winner"])
    if not isinstance(top["runner_up"], str):
        return f"**{name}** is the only product measured here."
    margin = top["margin"]
    lead = (
        f"tied with **{ui.md_escape(top['runner_up'])}**"
        if ui.is_number(margin) and float(margin) == 0
        else f"ahead of **{ui.md_escape(top['runner_up'])}** by {margin_text(margin, digits)}"
    )
    significant = top["margin_significant"]
    if significant is not None and not pd.isna(significant):
        test = (
            f"significant (adjusted p = {number(top['margin_p_adjusted'], 4)})"
            if significant
            else f"not significant (adjusted p = {number(top['margin_p_adjusted'], 4)})"
        )
    else:
        test = "significance not tested"
    return f"**{name}** wins, {lead}: {test}. {ui.md_escape(top['significance_note'])}."


def family_table(rows: pd.DataFrame) -> pd.DataFrame:
    scale = str(rows["metric_scale"].iloc[0])
    digits = digits_for(scale)
    records = rows.to_dict(orient="records")
    return pd.DataFrame(
        {
            "Rank": [int(r["rank_in_family"]) for r in records],
            "Vendor": [str(r["vendor"]) for r in records],
            "Product": [str(r["product"]) for r in records],
            "Kind": [str(r["product_kind"] or MISSING) for r in records],
            "Headline": [number(r["headline"], digits) for r in records],
            "95 % CI": [
                f"{number(r['ci_low'], digits)}–{number(r['ci_high'], digits)}"
                if ui.is_number(r["ci_low"]) and ui.is_number(r["ci_high"])
                else MISSING
                for r in records
            ],
            "Cost per task": [
                f"${float(r['cost_per_task_usd']):.4f}"
                if ui.is_number(r["cost_per_task_usd"])
                else MISSING
                for r in records
            ],
            "Latency (s)": [number(r["latency_s"], 3) for r in records],
            "Items": [number(r["n_items"], 0) for r in records],
            "Events": [len(r["event_ids"]) if r["event_ids"] is not None else 0 for r in records],
            "Leaderboard": [leaderboard_url(r) for r in records],
        }
    )


st.title("Scorecard: who wins, at a glance")
ui.require_snapshot()
board = data.scorecard()
if board is None or board.empty:
    ui.stop_with(
        "The snapshot has no scorecard rows yet: run a benchmark, then `bench build` and "
        "`bench publish` (the scorecard is marts.vendor_scorecard)."
    )
st.caption(
    "Per family, the latest run of its leaderboard, in the regime that leaderboard opens on. "
    "Each headline is on its leaderboard's scale: strict accuracy and the extraction "
    "composites as fractions 0–1, the deep-research score × 100. “—” = not measured. The "
    "winner's significance is the leaderboard's own test; a family without one says so."
)

for family, (label, page) in FAMILIES.items():
    rows = board[board["family"] == family]
    if rows.empty:
        continue
    top = rows[rows["is_winner"]].iloc[0].to_dict()
    st.subheader(label)
    st.markdown(verdict(top))
    run_started = ui.date_text(top["run_started_at"])
    st.caption(
        f"{METRICS.get(top['metric'], top['metric'])} ({top['metric_scale']}) · run "
        f"{ui.md_escape(top['run_id'])} started {run_started} · regime "
        f"{ui.md_escape(top['regime'] or MISSING)} · latency: "
        f"{ui.md_escape(top['latency_stat'] or MISSING)}"
    )
    st.dataframe(
        family_table(rows),
        hide_index=True,
        column_config={
            "Headline": st.column_config.TextColumn(
                METRICS.get(top["metric"], "Headline"), help=str(top["metric_scale"])
            ),
            "Events": st.column_config.NumberColumn(
                "Events", help="Events the leaderboard row was computed from."
            ),
            "Leaderboard": st.column_config.LinkColumn(
                "Leaderboard", display_text="open leaderboard"
            ),
        },
        key=f"scorecard_{family}",
    )
    st.page_link(page, label=f"{label} leaderboard")
