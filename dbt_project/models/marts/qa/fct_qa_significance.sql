-- One row per (run_id, grader_id, metric, lane) vs scoring_var('qa_baseline_lane'): paired t-tests and
-- family-wise corrections of int_qa_significance_tested (Python, scipy).
select
    run_id,
    grader_id,
    baseline_lane,
    lane,
    metric,
    n_pairs,
    mean_diff,
    t_stat,
    p_value,
    p_adjusted,
    correction,
    family_size,
    significant,
    direction
from {{ ref('int_qa_significance_tested') }}
