"""Read side of the live-URL extraction marts (marts.live_extraction_leaderboard,
marts.live_extraction_hygiene, marts.fct_live_extraction_pages,
marts.fct_live_extraction_anchors), through the same cached read-only query as
app.data."""

from __future__ import annotations

import duckdb
import pandas as pd

from app.data.core import SnapshotUnavailable, _query

LEADERBOARD_COLUMNS = (
    "system, vertical, engine_kind, ground_truth, urls_scored, urls_excluded, raw_success_rate, "
    "useful_success_rate, completeness, token_f1, composite, latency_p50_s, latency_p95_s, "
    "avg_output_bytes, requests_sent, useful_successes, usd_per_1k_requests, price_snapshot_date, "
    "price_basis, cost_per_1k_useful_usd, weight_completeness, weight_success, weight_f1, "
    "weight_latency, weight_throughput"
)


def live_runs() -> pd.DataFrame | None:
    """Live runs, newest first; None when there is no snapshot or it has no live marts."""
    try:
        return _query(
            "select l.run_id, any_value(l.ground_truth) as ground_truth, count(distinct l.system) as engines "
            "from marts.live_extraction_leaderboard l group by l.run_id order by l.run_id"
        )
    except (SnapshotUnavailable, duckdb.CatalogException):
        return None


def leaderboard(run_id: str, vertical: str) -> pd.DataFrame:
    return _query(
        f"select {LEADERBOARD_COLUMNS} from marts.live_extraction_leaderboard "
        "where run_id = ? and vertical = ? order by composite desc, system",
        run_id,
        vertical,
    )


def verticals(run_id: str) -> list[str]:
    frame = _query(
        "select distinct vertical from marts.live_extraction_leaderboard where run_id = ? order by 1",
        run_id,
    )
    return ["all", *[v for v in frame["vertical"] if v != "all"]]


def hygiene(run_id: str) -> pd.DataFrame:
    return _query(
        "select exclusion_reason, url, vertical, statuses_seen, error_classes from "
        "marts.live_extraction_hygiene where run_id = ? order by exclusion_reason, url",
        run_id,
    )


def url_pages(run_id: str, item_id: str) -> pd.DataFrame:
    return _query(
        "select system, outcome, target_status_code, render_requested, render_used, raw_success, "
        "non_content, non_content_rule_ids, completeness, token_f1, useful_success, excluded, "
        "exclusion_reason, output_bytes, latency_ms, error_class, extraction_event_id, source_event_ids "
        "from marts.fct_live_extraction_pages where run_id = ? and item_id = ? order by system",
        run_id,
        item_id,
    )


def urls(run_id: str) -> dict[str, str]:
    """item_id → URL of one run, in URL order (the URL picker shows the URL, links carry the id)."""
    frame = _query(
        "select item_id, any_value(url) as url from marts.fct_live_extraction_pages "
        "where run_id = ? group by item_id order by url, item_id",
        run_id,
    )
    return dict(zip(frame["item_id"], frame["url"], strict=True))


def anchors(run_id: str, item_id: str) -> pd.DataFrame:
    return _query(
        "select anchor_index, anchor, confirmed_by, consensus_rule_version "
        "from marts.fct_live_extraction_anchors where run_id = ? and item_id = ? "
        "order by anchor_index",
        run_id,
        item_id,
    )


def by_vertical(run_id: str) -> pd.DataFrame:
    """Per (vertical, engine) of one run, every vertical but 'all': the composite and the
    components the chart and its table show."""
    return _query(
        "select vertical, system, composite, completeness, token_f1, useful_success_rate, "
        "urls_scored from marts.live_extraction_leaderboard "
        "where run_id = ? and vertical <> 'all' order by vertical, composite desc, system",
        run_id,
    )
