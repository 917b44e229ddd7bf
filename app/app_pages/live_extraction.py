"""Live-URL extraction (methodology §4.1): leaderboard per engine and vertical, the hygiene
table, and from any URL down to every engine's outcome, its raw events and the consensus
anchors with the engines that confirmed each.

Deep-linkable (the item browser's cells link here): `live_extraction?run=<run_id>&item=<item_id>
&system=<engine>`."""

from __future__ import annotations

import streamlit as st

from app import charts, data, ui
from app.data import live_extraction as live_data

st.title("Live-URL extraction")

runs = live_data.live_runs()  # None when there is no snapshot or it predates the live marts
if runs is None or runs.empty:
    ui.stop_with(
        "No live-URL run in the snapshot yet. Run `bench demo` or `bench run extraction --urls FILE`."
    )

engines = dict(zip(runs["run_id"], runs["engines"], strict=True))
run_id = ui.pick("Run", list(engines), "live_run", "run", lambda r: f"{r} · {engines[r]} engines")
assert run_id is not None
vertical = st.selectbox("Vertical", live_data.verticals(run_id), key="live_vertical")

board = live_data.leaderboard(run_id, vertical)
if not board.empty:
    first = board.iloc[0]
    st.caption(
        f"Ground truth: {first['ground_truth']}. Composite = "
        f"{first['weight_completeness']:g}·completeness + {first['weight_success']:g}·useful success + "
        f"{first['weight_f1']:g}·F1 + {first['weight_latency']:g}·latency + {first['weight_throughput']:g}·throughput. "
        "Cost per 1k useful successes = list price × requests sent / useful successes × 1,000 (price date shown)."
    )


def num(label: str, digits: int = 3, help: str | None = None):
    return st.column_config.NumberColumn(label, format=f"%.{digits}f", help=help)


LEADERBOARD_ORDER = [
    "rank", "system", "composite", "completeness", "useful_success_rate", "token_f1",
    "raw_success_rate", "urls_scored", "urls_excluded", "latency_p50_s", "latency_p95_s",
    "avg_output_bytes", "cost_per_1k_useful_usd", "usd_per_1k_requests", "requests_sent",
    "useful_successes", "price_snapshot_date", "price_basis", "engine_kind",
]  # fmt: skip
board = board.assign(rank=board["composite"].rank(method="min", ascending=False).astype("Int64"))
ui.dataframe(
    board,
    hide_index=True,
    column_order=LEADERBOARD_ORDER,
    column_config={
        "rank": st.column_config.NumberColumn("Rank", help="By composite; ties share a rank."),
        "system": st.column_config.TextColumn("System", help="The extraction engine."),
        "composite": num("Composite", help="Σ weight × component (weights in the caption)"),
        "completeness": num("Completeness", help="Share of the consensus anchors found"),
        "useful_success_rate": num("Useful success", help="Success, not boilerplate, complete"),
        "token_f1": num("Token F1"),
        "raw_success_rate": num("Raw success", help="Any output at all"),
        "urls_scored": st.column_config.NumberColumn("URLs scored"),
        "urls_excluded": st.column_config.NumberColumn(
            "URLs excluded", help="Set aside by hygiene (dead, origin 5xx, redirect only)"
        ),
        "latency_p50_s": num("p50 latency (s)", 2),
        "latency_p95_s": num("p95 latency (s)", 2),
        "avg_output_bytes": num("Avg bytes", 0),
        "cost_per_1k_useful_usd": st.column_config.NumberColumn(
            "$ per 1k useful", format="$%.2f", help="List price × requests / useful successes"
        ),
        "usd_per_1k_requests": st.column_config.NumberColumn("$ per 1k requests", format="$%.2f"),
        "requests_sent": st.column_config.NumberColumn("Requests"),
        "useful_successes": st.column_config.NumberColumn("Useful successes"),
        "price_snapshot_date": "Price date",
        "price_basis": "Price basis",
        "engine_kind": st.column_config.TextColumn("Kind", help="Local library or vendor API"),
    },
)

st.subheader("By vertical")
per_vertical = live_data.by_vertical(run_id)
if per_vertical.empty:
    st.caption("This run's URLs have no vertical but 'all'.")
else:
    metric_labels = {
        "composite": "Composite",
        "completeness": "Completeness",
        "token_f1": "Token F1",
        "useful_success_rate": "Useful success",
    }
    metric = st.selectbox(
        "Score", list(metric_labels), format_func=metric_labels.get, key="live_vertical_metric"
    )
    st.caption(
        "One bar per engine in each vertical, over the URLs hygiene kept in that vertical "
        "(failures score 0)."
    )
    st.altair_chart(
        charts.grouped_bars(
            per_vertical.dropna(subset=[metric]),
            group="vertical",
            label="system",
            value=metric,
            title=metric_labels[metric],
        ),
        width="stretch",
    )

st.subheader("Hygiene: excluded from scoring")
excluded = live_data.hygiene(run_id)
counts = excluded.groupby("exclusion_reason").size().to_dict() if not excluded.empty else {}
cols = st.columns(3)
for col, reason in zip(cols, ("dead", "origin_5xx", "redirect_only"), strict=True):
    col.metric(reason, counts.get(reason, 0))
ui.dataframe(excluded, hide_index=True)

st.subheader("One URL, every engine")
urls = live_data.urls(run_id)
item_id = ui.pick("URL", list(urls), "live_url", "item", urls.get)
assert item_id is not None
pages = live_data.url_pages(run_id, item_id)
ui.dataframe(pages, hide_index=True)
st.markdown("**Consensus anchors** (which engines confirmed each)")
ui.dataframe(live_data.anchors(run_id, item_id), hide_index=True)
system = ui.pick("Raw events of engine", list(pages["system"]), "live_system", "system")
assert system is not None
row = pages.set_index("system").loc[system]
ids = [row["extraction_event_id"], *data._json(row["source_event_ids"] or "[]")]
for event in data.events([i for i in ids if i]):
    with st.expander(f"{event.get('event_type')} · {event.get('event_id')}"):
        st.json(event)
