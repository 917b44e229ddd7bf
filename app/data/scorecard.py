"""The scorecard (marts.vendor_scorecard): who wins each family, at a glance."""

from __future__ import annotations

import duckdb
import pandas as pd

from app.data.core import SnapshotUnavailable, _query

_SCORECARD_SQL = """
select
    family, vendor, product, product_kind, run_id, run_started_at, regime, metric, metric_scale,
    headline, ci_low, ci_high, cost_per_task_usd, cost_basis, latency_s, latency_stat, n_items,
    rank_in_family, n_products, is_winner, winner, runner_up, margin, margin_significant,
    margin_p_adjusted, significance_note, run_started_event_id, event_ids
from marts.vendor_scorecard
order by
    case family
        when 'qa_search' then 1 when 'qa_answer' then 2 when 'deep_research' then 3
        when 'extraction' then 4 else 5
    end,
    rank_in_family, product
"""


def scorecard() -> pd.DataFrame | None:
    """Every scorecard row, family by family, best first; None when the snapshot has no
    scorecard mart (published before it existed) or no snapshot at all."""
    try:
        return _query(_SCORECARD_SQL)
    except (SnapshotUnavailable, duckdb.CatalogException):
        return None
