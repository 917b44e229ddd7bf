"""Any two sides on the items they share: a side is (run or import, lane, grader/judge regime).

QA sides come from `fct_qa_answers` (an imported SimpleQA file is a run of its own, its rows
joined to the dataset's questions by text, so they carry the dataset's item ids); DRACO sides
from `fct_draco_items` (our judging, of our runs or of imported reports) and
`fct_draco_imported_items` (an imported file's own verdicts); extraction sides (run or imported
predictions, system; no regime: the scoring is deterministic) from `fct_extraction_pages`. Two
sides are paired by item id.

The paired test is the one the significance marts run (dbt_project/python/bench_stats.py,
`paired_ttest`, `paired_wilcoxon`), called here on a pair no mart precomputed: one statistic,
one implementation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from app.data.core import _query
from dbt_project.python.bench_stats import paired_ttest, paired_wilcoxon

SIDE_SEPARATOR = "|"

# --- QA ------------------------------------------------------------------------------------

# One row per (run, lane, grader regime) with graded answers; a question that never landed has a
# row without a grader and belongs to every regime of its lane (as on the lane-vs-lane page).
_QA_SIDES_SQL = """
with
graded as (
    select
        run_id,
        lane,
        grader_id,
        bool_and(grader_official) as grader_official,
        any_value(series) as series,
        any_value(run_index) as run_index,
        any_value(dataset_sha256) as dataset_sha256
    from marts.fct_qa_answers
    where grader_id is not null
    group by run_id, lane, grader_id
),
items as (
    select run_id, lane, count(distinct item_id) as n_items
    from marts.fct_qa_answers
    group by run_id, lane
)
select
    graded.run_id,
    graded.lane,
    graded.grader_id,
    graded.grader_official,
    graded.series,
    graded.run_index,
    graded.dataset_sha256,
    coalesce(runs.run_source, 'engine') = 'import' as imported,
    runs.dataset_name,
    runs.started_at,
    items.n_items
from graded
inner join items on items.run_id = graded.run_id and items.lane = graded.lane
left join marts.dim_runs as runs on runs.run_id = graded.run_id
order by runs.started_at desc nulls last, graded.run_id, graded.lane, graded.grader_id
"""

# A question is won, lost or tied only when both sides landed it (methodology 2.6, the pairing
# of fct_qa_significance); value = 1 when the label is correct, else 0.
_QA_CROSS_SQL = """
with
a as (
    select * from marts.fct_qa_answers
    where run_id = ? and lane = ? and (grader_id = ? or grader_id is null)
),
b as (
    select * from marts.fct_qa_answers
    where run_id = ? and lane = ? and (grader_id = ? or grader_id is null)
)
select
    coalesce(a.item_id, b.item_id) as item_id,
    coalesce(a.sample_order, b.sample_order) as sample_order,
    coalesce(a.problem, b.problem) as problem,
    coalesce(a.gold_answer, b.gold_answer) as gold_answer,
    a.item_id is not null and b.item_id is not null as shared,
    coalesce(a.landed, false) and coalesce(b.landed, false) as paired,
    a.outcome as outcome_a,
    a.label as label_a,
    a.answer as answer_a,
    case when a.label = 'correct' then 1.0 else 0.0 end as value_a,
    a.ndcg_10 as ndcg_10_a,
    b.outcome as outcome_b,
    b.label as label_b,
    b.answer as answer_b,
    case when b.label = 'correct' then 1.0 else 0.0 end as value_b,
    b.ndcg_10 as ndcg_10_b,
    case
        when a.item_id is null or b.item_id is null then 'not shared'
        when not coalesce(a.landed, false) or not coalesce(b.landed, false) then 'unpaired'
        when a.label = 'correct' and b.label is distinct from 'correct' then 'win'
        when b.label = 'correct' and a.label is distinct from 'correct' then 'loss'
        else 'tie'
    end as result
from a
full outer join b on a.item_id = b.item_id
order by a.item_id is null or b.item_id is null, sample_order nulls last, item_id
"""

# Per lane, each run of a series against the run before it (by run index), question by question.
_SERIES_CHANGES_SQL = """
with
answers as (
    select * from marts.fct_qa_answers
    where series = ? and (grader_id = ? or grader_id is null)
),
runs as (
    select
        lane,
        run_index,
        any_value(run_id) as run_id,
        lag(any_value(run_id)) over (partition by lane order by run_index) as previous_run_id,
        lag(run_index) over (partition by lane order by run_index) as previous_run_index
    from answers
    group by lane, run_index
)
select
    runs.lane,
    runs.run_index,
    runs.run_id,
    runs.previous_run_index,
    runs.previous_run_id,
    now_.item_id,
    now_.problem,
    now_.label as label_a,
    before.label as label_b,
    case when now_.label = 'correct' then 1.0 else 0.0 end as value_a,
    case when before.label = 'correct' then 1.0 else 0.0 end as value_b,
    case
        when not coalesce(now_.landed, false) or not coalesce(before.landed, false)
            then 'unpaired'
        when now_.label = 'correct' and before.label is distinct from 'correct' then 'win'
        when before.label = 'correct' and now_.label is distinct from 'correct' then 'loss'
        else 'tie'
    end as result
from runs
inner join answers as now_ on now_.run_id = runs.run_id and now_.lane = runs.lane
inner join answers as before
    on before.run_id = runs.previous_run_id
    and before.lane = runs.lane
    and before.item_id = now_.item_id
order by runs.lane, runs.run_index, now_.sample_order nulls last, now_.item_id
"""

# Each imported QA side beside every lane of every other run (same grader regime or any) that
# answered some of its questions, on exactly the questions the two share.
_QA_IMPORTS_BESIDE_SQL = """
with
sides as (
    select
        answers.run_id,
        answers.lane,
        answers.grader_id,
        coalesce(runs.run_source, 'engine') = 'import' as imported,
        answers.item_id,
        answers.label
    from marts.fct_qa_answers as answers
    left join marts.dim_runs as runs on runs.run_id = answers.run_id
    where answers.grader_id is not null
),
imports as (select * from sides where imported)
select
    imports.run_id as import_run_id,
    imports.lane as import_lane,
    imports.grader_id as import_grader_id,
    own.run_id,
    own.lane,
    own.grader_id,
    own.imported,
    count(*) as n_shared,
    avg(case when own.label = 'correct' then 1.0 else 0.0 end) as strict_accuracy,
    avg(case when imports.label = 'correct' then 1.0 else 0.0 end) as import_strict_accuracy
from imports
inner join sides as own
    on own.item_id = imports.item_id and own.run_id <> imports.run_id
where (? is null or imports.run_id = ?) and (? is null or own.run_id = ?)
group by all
order by import_run_id, import_lane, import_grader_id, own.imported, own.run_id, own.lane,
    own.grader_id
"""


def qa_sides() -> pd.DataFrame:
    """Every QA side (run_id, lane, grader_id) with its series, run index, whether it was
    imported (`bench import qa-results`) and its number of questions; newest run first."""
    return _query(_QA_SIDES_SQL)


def qa_cross_compare(
    run_a: str, lane_a: str, grader_a: str, run_b: str, lane_b: str, grader_b: str
) -> pd.DataFrame:
    """Per question of either side: labels, answers, NDCG@10, value_a/value_b (1 = correct)
    and the result for A: `win`|`loss`|`tie` when both landed it, `unpaired` when shared but
    not landed by both, `not shared` when only one side has it (listed last)."""
    return _query(_QA_CROSS_SQL, run_a, lane_a, grader_a, run_b, lane_b, grader_b)


def series_item_changes(series: str, grader_id: str) -> pd.DataFrame:
    """Per lane and run of a series, each question against the previous run of that lane:
    label now (a) and before (b), value 1 when correct, and `win` (gained) | `loss` (lost) |
    `tie` | `unpaired` (not landed by both runs)."""
    return _query(_SERIES_CHANGES_SQL, series, grader_id)


def qa_imports_beside(import_run_id: str | None, run_id: str | None) -> pd.DataFrame:
    """Each imported QA side beside every other (run, lane, grader regime) sharing questions
    with it: n_shared and both strict accuracies on those questions only. Every import when
    `import_run_id` is None; beside every other run, or only `run_id`'s lanes."""
    return _query(_QA_IMPORTS_BESIDE_SQL, import_run_id, import_run_id, run_id, run_id)


# --- DRACO ---------------------------------------------------------------------------------

# Both DRACO queries start from the same `rows`: our judging (fct_draco_items: failed and missing
# items score 0) and imported files' own verdicts (fct_draco_imported_items) in one shape.
_DRACO_SIDES_SQL = """
with
rows as (
    select
        items.run_id, items.lane, items.judge_id, items.item_id, items.position, items.domain,
        items.status, items.score, false as imported_verdicts,
        coalesce(runs.run_source, 'engine') = 'import' as imported
    from marts.fct_draco_items as items
    left join marts.dim_runs as runs on runs.run_id = items.run_id
    union all
    select
        run_id, lane, judge_id, item_id, position, domain, status, score,
        true as imported_verdicts, true as imported
    from marts.fct_draco_imported_items
)
select
    rows.run_id,
    rows.lane,
    rows.judge_id,
    bool_or(rows.imported) as imported,
    bool_or(rows.imported_verdicts) as imported_verdicts,
    count(distinct rows.item_id) as n_items,
    any_value(runs.started_at) as started_at
from rows
left join marts.dim_runs as runs on runs.run_id = rows.run_id
group by rows.run_id, rows.lane, rows.judge_id
order by any_value(runs.started_at) desc nulls last, rows.run_id, rows.lane, rows.judge_id
"""

# Items both sides scored are paired (fct_draco_significance's rule); result for A by score.
_DRACO_CROSS_SQL = """
with
rows as (
    select
        items.run_id, items.lane, items.judge_id, items.item_id, items.position, items.domain,
        items.status, items.score, false as imported_verdicts,
        coalesce(runs.run_source, 'engine') = 'import' as imported
    from marts.fct_draco_items as items
    left join marts.dim_runs as runs on runs.run_id = items.run_id
    union all
    select
        run_id, lane, judge_id, item_id, position, domain, status, score,
        true as imported_verdicts, true as imported
    from marts.fct_draco_imported_items
),
a as (select * from rows where run_id = ? and lane = ? and judge_id = ?),
b as (select * from rows where run_id = ? and lane = ? and judge_id = ?)
select
    coalesce(a.item_id, b.item_id) as item_id,
    coalesce(a.position, b.position) as position,
    coalesce(a.domain, b.domain) as domain,
    a.item_id is not null and b.item_id is not null as shared,
    a.item_id is not null and b.item_id is not null as paired,
    a.status as status_a,
    a.score as value_a,
    b.status as status_b,
    b.score as value_b,
    a.score - b.score as diff,
    case
        when a.item_id is null or b.item_id is null then 'not shared'
        when a.score > b.score then 'win'
        when a.score < b.score then 'loss'
        else 'tie'
    end as result
from a
full outer join b on a.item_id = b.item_id
order by a.item_id is null or b.item_id is null, position nulls last, item_id
"""


def draco_sides() -> pd.DataFrame:
    """Every DRACO side (run_id, lane, judge_id): our judging of our runs or of imported
    reports, and imported files' own verdicts (`imported_verdicts`); newest run first."""
    return _query(_DRACO_SIDES_SQL)


def draco_cross_compare(
    run_a: str, lane_a: str, judge_a: str, run_b: str, lane_b: str, judge_b: str
) -> pd.DataFrame:
    """Per task of either side: status and score (value_a/value_b, 0-1), diff = A − B and the
    result for A (`win`|`loss`|`tie` by score on shared tasks, else `not shared`)."""
    return _query(_DRACO_CROSS_SQL, run_a, lane_a, judge_a, run_b, lane_b, judge_b)


# --- extraction ------------------------------------------------------------------------------

# One row per (run or imported predictions, system) with scored pages.
_EXTRACTION_SIDES_SQL = """
select
    pages.run_id,
    pages.system,
    any_value(pages.system_version) as system_version,
    any_value(pages.dataset_sha256) as dataset_sha256,
    any_value(runs.dataset_name) as dataset_name,
    coalesce(any_value(runs.run_source), 'engine') = 'import' as imported,
    any_value(runs.started_at) as started_at,
    count(distinct pages.item_id) as n_items
from marts.fct_extraction_pages as pages
left join marts.dim_runs as runs on runs.run_id = pages.run_id
group by pages.run_id, pages.system
order by any_value(runs.started_at) desc nulls last, pages.run_id, pages.system
"""

# The per-page value is the page's shingle F1 (fct_extraction_pages.page_f1: 2PR / (P + R) of
# its shingle precision and recall; 0 when P + R = 0), the item browser's score too. A
# failed page (the engine's failure, a prediction the file lacks) is a terminal result and
# scores 0, as every leaderboard counts it; a missing page (no terminal event yet: an
# interrupted or running run) has no value and leaves the page unpaired.
_EXTRACTION_CROSS_SQL = """
with
pages as (
    select
        run_id,
        system,
        item_id,
        position,
        url,
        outcome,
        error_class,
        useful_success,
        case when outcome <> 'missing' then page_precision end as page_precision,
        case when outcome <> 'missing' then page_recall end as page_recall,
        case when outcome <> 'missing' then page_f1 end as page_f1
    from marts.fct_extraction_pages
),
a as (select * from pages where run_id = ? and system = ?),
b as (select * from pages where run_id = ? and system = ?)
select
    coalesce(a.item_id, b.item_id) as item_id,
    coalesce(a.position, b.position) as position,
    coalesce(a.url, b.url) as url,
    a.item_id is not null and b.item_id is not null as shared,
    a.page_f1 is not null and b.page_f1 is not null as paired,
    a.outcome as outcome_a,
    a.error_class as error_a,
    a.useful_success as useful_a,
    a.page_precision as precision_a,
    a.page_recall as recall_a,
    a.page_f1 as value_a,
    b.outcome as outcome_b,
    b.error_class as error_b,
    b.useful_success as useful_b,
    b.page_precision as precision_b,
    b.page_recall as recall_b,
    b.page_f1 as value_b,
    a.page_f1 - b.page_f1 as diff,
    case
        when a.item_id is null or b.item_id is null then 'not shared'
        when a.page_f1 is null or b.page_f1 is null then 'unpaired'
        when a.page_f1 > b.page_f1 then 'win'
        when a.page_f1 < b.page_f1 then 'loss'
        else 'tie'
    end as result
from a
full outer join b on a.item_id = b.item_id
order by a.item_id is null or b.item_id is null, position nulls last, item_id
"""


def extraction_sides() -> pd.DataFrame:
    """Every extraction side (run_id, system): an engine run's system or imported predictions
    (`bench import extraction-predictions`), with its dataset and number of pages; newest run
    first."""
    return _query(_EXTRACTION_SIDES_SQL)


def extraction_cross_compare(run_a: str, system_a: str, run_b: str, system_b: str) -> pd.DataFrame:
    """Per page of either side: outcome, shingle precision/recall and page shingle F1
    (value_a/value_b, 0-1; failed pages 0, missing pages undefined), diff = A − B and the result
    for A: `win`|`loss`|`tie` by page F1, `unpaired` when a side has no terminal result for the
    page yet (missing), `not shared` when only one side has the page (listed last)."""
    return _query(_EXTRACTION_CROSS_SQL, run_a, system_a, run_b, system_b)


# --- the tally and the paired test (not queries) -------------------------------------------


@dataclass(frozen=True)
class PairedTally:
    wins: int
    losses: int
    ties: int
    unpaired: int
    not_shared: int
    n_pairs: int
    mean_a: float | None
    mean_b: float | None
    mean_diff: float | None
    t_stat: float | None
    p_ttest: float | None
    wilcoxon_stat: float | None
    p_wilcoxon: float | None


def paired_tally(pairs: pd.DataFrame) -> PairedTally:
    """Wins/losses/ties of a compare frame (its `result`), and the paired t-test and Wilcoxon
    signed-rank test of value_a vs value_b over the paired rows, in the frame's order: the
    functions fct_qa_significance and fct_draco_significance call (uncorrected: one chosen
    pair, not a family)."""
    counts = pairs["result"].value_counts()
    paired = pairs[pairs["result"].isin(["win", "loss", "tie"])]
    a = paired["value_a"].astype(float).tolist()
    b = paired["value_b"].astype(float).tolist()
    t_stat, p_t = paired_ttest(a, b)
    w_stat, p_w = paired_wilcoxon(a, b)
    return PairedTally(
        wins=int(counts.get("win", 0)),
        losses=int(counts.get("loss", 0)),
        ties=int(counts.get("tie", 0)),
        unpaired=int(counts.get("unpaired", 0)),
        not_shared=int(counts.get("not shared", 0)),
        n_pairs=len(a),
        mean_a=float(np.mean(a)) if a else None,
        mean_b=float(np.mean(b)) if b else None,
        mean_diff=float(np.mean(np.asarray(a) - np.asarray(b))) if a else None,
        t_stat=t_stat,
        p_ttest=p_t,
        wilcoxon_stat=w_stat,
        p_wilcoxon=p_w,
    )


def side_key(run_id: str, lane: str, regime: str = "") -> str:
    """One side as one deep-link value: run|lane|regime, or run|system where there is no regime
    (extraction)."""
    return SIDE_SEPARATOR.join((run_id, lane, regime) if regime else (run_id, lane))


def parse_side(key: str) -> tuple[str, str, str]:
    """The (run_id, lane, regime) of a `side_key`, regime "" when it has none (a lane or regime
    may not contain '|')."""
    run_id, lane, *regime = key.split(SIDE_SEPARATOR, 2)
    return run_id, lane, regime[0] if regime else ""
