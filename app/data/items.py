"""The item browser's read side: every item of one run (and one grader or judge regime) × every
system, one cell each, from the family's per-item mart; the filters over those cells; the text
(question, task, URL) that names an item in pickers; the lineage link of each cell.

One cell = one (item, system) row of `fct_qa_answers` (under one grader regime),
`fct_draco_items` (under one judge regime), `fct_extraction_pages` or
`fct_live_extraction_pages` (the URLs hygiene kept), reduced to:

* `outcome`: what happened, in words (QA: the grader's label, or the request's outcome when it
  never landed; deep research: the item status; extraction: useful / not useful / the outcome);
* `score`: the family's per-item score on its own scale, failures at 0 as every leaderboard
  counts them (QA: 1 when correct else 0; deep research: the item score, 0-1, shown in points;
  extraction: the page's shingle F1, the harmonic mean of its shingle precision and recall;
  live extraction: the URL's token F1 against the consensus passage);
* `failed`: the system did not get the item right (QA: not correct; deep research: research
  failed, missing or incomplete; extraction, live or not: the page failed or is not a useful
  success);
* `n_split`: criteria whose judge samples disagree (deep research only; 0 elsewhere: QA answers
  are graded once and extraction engines are deterministic).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlencode

import pandas as pd

from app.data.core import _query

Family = Literal["qa", "draco", "extraction", "live"]


@dataclass(frozen=True)
class FamilyInfo:
    key: Family
    title: str
    item_noun: str  # the column naming the item: question, task, page
    score_name: str
    score_scale: float  # 1 for 0-1 scores, 100 for scores quoted in points
    samples_apply: bool  # whether a judge takes several samples per item
    binary: bool  # the score is 0 or 1 (any difference is a disagreement)


FAMILIES: dict[Family, FamilyInfo] = {
    "qa": FamilyInfo("qa", "Question answering", "Question", "Correct", 1.0, False, True),
    "draco": FamilyInfo("draco", "Deep research (DRACO)", "Task", "Score", 100.0, True, False),
    "extraction": FamilyInfo(
        "extraction", "Extraction", "Page URL", "Shingle F1", 1.0, False, False
    ),
    "live": FamilyInfo("live", "Live-URL extraction", "URL", "Token F1", 1.0, False, False),
}

CELL_COLUMNS = (
    "item_id", "position", "item_text", "system", "outcome", "score", "failed", "n_split",
)  # fmt: skip

# grader_id is NULL on rows whose request never landed (nothing to grade): they belong to every
# grader regime of the run, as on the QA pages.
_QA_CELLS_SQL = """
select
    item_id,
    sample_order as position,
    problem as item_text,
    lane as system,
    replace(coalesce(label, outcome), '_', ' ') as outcome,
    case when label = 'correct' then 1.0 else 0.0 end as score,
    label is distinct from 'correct' as failed,
    0 as n_split
from marts.fct_qa_answers
where run_id = ? and (grader_id = ? or grader_id is null)
order by sample_order nulls last, item_id, lane
"""

_DRACO_CELLS_SQL = """
select
    items.item_id,
    items.position,
    tasks.problem as item_text,
    items.lane as system,
    items.status as outcome,
    coalesce(items.score, 0.0) as score,
    items.status <> 'scored' as failed,
    coalesce(items.n_split, 0) as n_split
from marts.fct_draco_items as items
left join marts.dim_rubric_tasks as tasks
    on tasks.dataset_sha256 = items.dataset_sha256 and tasks.item_id = items.item_id
where items.run_id = ? and items.judge_id = ?
order by items.position, items.item_id, items.lane
"""

_EXTRACTION_CELLS_SQL = """
select
    item_id,
    position,
    url as item_text,
    system,
    case
        when outcome <> 'completed' then outcome
        when useful_success then 'useful'
        else 'not useful'
    end as outcome,
    page_f1 as score,
    outcome <> 'completed' or not coalesce(useful_success, false) as failed,
    0 as n_split
from marts.fct_extraction_pages
where run_id = ?
order by position, item_id, system
"""

# The URLs hygiene excluded (dead, origin 5xx, redirect only) are not scored, as on the
# leaderboard; the live-URL page lists them. The mart keeps no dataset position: URLs sort by id.
_LIVE_CELLS_SQL = """
select
    item_id,
    cast(null as bigint) as position,
    url as item_text,
    system,
    case
        when outcome <> 'extracted' then outcome
        when useful_success then 'useful'
        else 'not useful'
    end as outcome,
    coalesce(token_f1, 0.0) as score,
    not coalesce(useful_success, false) as failed,
    0 as n_split
from marts.fct_live_extraction_pages
where run_id = ? and not excluded
order by item_id, system
"""

_CELLS_SQL: dict[Family, str] = {
    "qa": _QA_CELLS_SQL,
    "draco": _DRACO_CELLS_SQL,
    "extraction": _EXTRACTION_CELLS_SQL,
    "live": _LIVE_CELLS_SQL,
}

_TEXTS_SQL: dict[Family, str] = {
    "qa": """
        select item_id, any_value(problem) as item_text
        from marts.fct_qa_answers where run_id = ? group by item_id
    """,
    "draco": """
        select items.item_id, any_value(tasks.problem) as item_text
        from marts.fct_draco_items as items
        left join marts.dim_rubric_tasks as tasks
            on tasks.dataset_sha256 = items.dataset_sha256 and tasks.item_id = items.item_id
        where items.run_id = ? group by items.item_id
    """,
    "extraction": """
        select item_id, any_value(url) as item_text
        from marts.fct_extraction_pages where run_id = ? group by item_id
    """,
    "live": """
        select item_id, any_value(url) as item_text
        from marts.fct_live_extraction_pages where run_id = ? group by item_id
    """,
}


def item_cells(family: Family, run_id: str, regime: str | None = None) -> pd.DataFrame:
    """One row per (item, system) of one run under one regime (QA grader, DRACO judge;
    extraction has none): CELL_COLUMNS, in dataset order."""
    params = (run_id, regime) if family in ("qa", "draco") else (run_id,)
    frame = _query(_CELLS_SQL[family], *params).copy()
    frame["failed"] = frame["failed"].astype(bool)
    frame["n_split"] = frame["n_split"].fillna(0).astype(int)
    frame["score"] = pd.to_numeric(frame["score"], errors="coerce").astype(float)
    return frame


def item_texts(family: Family, run_id: str) -> dict[str, str]:
    """item_id → the question, task or page URL that names it (pickers show these, not ids)."""
    frame = _query(_TEXTS_SQL[family], run_id)
    return {
        str(item): str(text)
        for item, text in zip(frame["item_id"], frame["item_text"], strict=True)
        if isinstance(text, str) and text.strip()
    }


def item_label(position: object, text: str | None, item_id: str, width: int = 90) -> str:
    """A picker label: `<position>: <text, one line, cut at width>`; the id when no text."""
    shown = " ".join((text or "").split()) or item_id
    if len(shown) > width:
        shown = shown[: width - 1].rstrip() + "…"
    prefix = "" if position is None or pd.isna(position) else f"{int(position)}: "
    return prefix + shown


def lineage_link(family: Family, run_id: str, regime: str | None, system: str, item_id: str) -> str:
    """The lineage page of one cell, with the query params that page picks from."""
    if family == "qa":
        params = {"run": run_id, "lane": system, "item": item_id}
        if regime:
            params["grader"] = regime
        return "/qa_lineage?" + urlencode(params)
    if family == "draco":
        params = {"run": run_id, "judge": regime or "", "lane": system, "item": item_id}
        return "/draco_lineage?" + urlencode(params)
    if family == "live":
        return "/live_extraction?" + urlencode({"run": run_id, "system": system, "item": item_id})
    return "/item_lineage?" + urlencode({"run": run_id, "system": system, "item": item_id})


@dataclass(frozen=True)
class ItemFilters:
    search: str = ""
    failed_only: bool = False
    samples_disagree: bool = False
    systems_disagree: bool = False
    min_spread: float = 0.2  # on the 0-1 scale: best minus worst system's score
    worst_first: bool = False


def item_summary(cells: pd.DataFrame, min_spread: float = 0.2) -> pd.DataFrame:
    """One row per item: position, text, systems, mean / min / max score, whether any system
    failed it, criteria whose samples disagree (summed over systems), whether the systems
    disagree (best minus worst score ≥ min_spread, on the 0-1 scale; at least two systems)."""
    if cells.empty:
        return pd.DataFrame(
            columns=[
                "item_id", "position", "item_text", "n_systems", "mean_score", "min_score",
                "max_score", "any_failed", "n_split", "samples_disagree", "systems_disagree",
            ]
        )  # fmt: skip
    grouped = cells.groupby("item_id", sort=False)
    summary = grouped.agg(
        position=("position", "min"),
        item_text=("item_text", "first"),
        n_systems=("system", "nunique"),
        mean_score=("score", "mean"),
        min_score=("score", "min"),
        max_score=("score", "max"),
        any_failed=("failed", "any"),
        n_split=("n_split", "sum"),
    ).reset_index()
    summary["samples_disagree"] = summary["n_split"] > 0
    spread = summary["max_score"] - summary["min_score"]
    summary["systems_disagree"] = (summary["n_systems"] > 1) & (spread >= min_spread - 1e-12)
    return summary


def filter_items(summary: pd.DataFrame, filters: ItemFilters) -> pd.DataFrame:
    """The items the filters keep, in dataset order or worst (lowest mean score) first."""
    keep = pd.Series(True, index=summary.index)
    words = filters.search.strip().lower()
    if words:
        text = summary["item_text"].fillna("").astype(str).str.lower()
        ids = summary["item_id"].astype(str).str.lower()
        keep &= text.str.contains(words, regex=False) | ids.str.contains(words, regex=False)
    if filters.failed_only:
        keep &= summary["any_failed"]
    if filters.samples_disagree:
        keep &= summary["samples_disagree"]
    if filters.systems_disagree:
        keep &= summary["systems_disagree"]
    kept = summary[keep]
    if filters.worst_first:
        return kept.sort_values(
            ["mean_score", "min_score", "position", "item_id"], kind="stable"
        ).reset_index(drop=True)
    return kept.sort_values(["position", "item_id"], kind="stable").reset_index(drop=True)


def outcome_counts(cells: pd.DataFrame) -> pd.DataFrame:
    """Cells per (outcome, system): outcomes as rows, systems as columns, 0 where none."""
    if cells.empty:
        return pd.DataFrame()
    counts = cells.pivot_table(
        index="outcome", columns="system", values="item_id", aggfunc="count", fill_value=0
    )
    counts.columns.name = None
    return counts.astype(int)
