"""Paired significance of every pair of lanes within (run_id, judge_id) (methodology 1.3, 5.6).

Per (run_id, judge_id, lane_a < lane_b):
  * pairs = the items of the run both lanes have rows for (every registered task: the grid never
    drops an item), item score as in fct_draco_items: failed and missing items count 0.0;
    n_pairs is reported;
  * paired Student t-test scipy.stats.ttest_rel(a, b) and Wilcoxon signed-rank
    scipy.stats.wilcoxon(a, b) (zero_method 'wilcox', two-sided); mean_diff = mean(a - b),
    direction = a_better | b_better | same by its sign;
  * not tested (p NULL): n_pairs < 2; identical vectors -> statistic NULL, p = 1;
  * family = every pair of lanes of that (run_id, judge_id) (stated in `family`, size in
    family_size): var('draco_correction') holm (step-down) or bonferroni, applied to the t-test
    p-values and, separately, to the Wilcoxon p-values. significant = adjusted t-test p < 0.05.
Scores of different judge regimes are never compared.

Grain: one row per (run_id, judge_id, lane_a, lane_b). Tested in tests/dbt_draco against scipy.
"""

import itertools

import numpy as np
import pyarrow as pa
from bench_stats import ALPHA, adjust, check_correction, paired_ttest, paired_wilcoxon
from bench_vars import scoring_value

SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("judge_id", pa.string()),
        ("lane_a", pa.string()),
        ("lane_b", pa.string()),
        ("n_pairs", pa.int64()),
        ("mean_a", pa.float64()),
        ("mean_b", pa.float64()),
        ("mean_diff", pa.float64()),
        ("t_stat", pa.float64()),
        ("p_ttest", pa.float64()),
        ("p_ttest_adjusted", pa.float64()),
        ("wilcoxon_stat", pa.float64()),
        ("p_wilcoxon", pa.float64()),
        ("p_wilcoxon_adjusted", pa.float64()),
        ("correction", pa.string()),
        ("family", pa.string()),
        ("family_size", pa.int64()),
        ("significant", pa.bool_()),
        ("direction", pa.string()),
    ]
)


def model(dbt, session):
    dbt.config(materialized="table")
    correction = str(scoring_value("draco_correction", dbt.config.get("draco_correction")))
    check_correction(correction, "draco_correction")
    rows = (
        dbt.ref("int_draco_items_scored")
        .project("run_id, judge_id, lane, item_id, position, score")
        .order("run_id, judge_id, lane, position, item_id")
        .to_arrow_table()
        .to_pylist()
    )
    groups = {}
    for row in rows:
        lanes = groups.setdefault((row["run_id"], row["judge_id"]), {})
        lanes.setdefault(row["lane"], {})[row["item_id"]] = (row["position"], row["score"])
    out = []
    for (run_id, judge_id), lanes in sorted(groups.items()):
        pairs = list(itertools.combinations(sorted(lanes), 2))
        family_name = f"all {len(pairs)} lane pairs of run {run_id} under judge {judge_id}"
        family = []
        for lane_a, lane_b in pairs:
            own_a, own_b = lanes[lane_a], lanes[lane_b]
            items = sorted(set(own_a) & set(own_b), key=lambda i: (own_a[i][0], i))
            a = [own_a[i][1] for i in items]
            b = [own_b[i][1] for i in items]
            t_stat, p_t = paired_ttest(a, b)
            w_stat, p_w = paired_wilcoxon(a, b)
            mean_a = float(np.mean(a)) if items else None
            mean_b = float(np.mean(b)) if items else None
            mean_diff = float(np.mean(np.asarray(a) - np.asarray(b))) if items else None
            direction = None
            if mean_diff is not None:
                direction = "a_better" if mean_diff > 0 else "b_better" if mean_diff < 0 else "same"
            family.append(
                {
                    "run_id": run_id,
                    "judge_id": judge_id,
                    "lane_a": lane_a,
                    "lane_b": lane_b,
                    "n_pairs": len(items),
                    "mean_a": mean_a,
                    "mean_b": mean_b,
                    "mean_diff": mean_diff,
                    "t_stat": t_stat,
                    "p_ttest": p_t,
                    "p_ttest_adjusted": None,
                    "wilcoxon_stat": w_stat,
                    "p_wilcoxon": p_w,
                    "p_wilcoxon_adjusted": None,
                    "correction": correction,
                    "family": family_name,
                    "family_size": len(pairs),
                    "significant": False,
                    "direction": direction,
                }
            )
        for key, adjusted_key in (
            ("p_ttest", "p_ttest_adjusted"),
            ("p_wilcoxon", "p_wilcoxon_adjusted"),
        ):
            adjusted = adjust([row[key] for row in family], correction)
            for row, value in zip(family, adjusted, strict=True):
                row[adjusted_key] = value
        for row in family:
            row["significant"] = (
                row["p_ttest_adjusted"] is not None and row["p_ttest_adjusted"] < ALPHA
            )
        out.extend(family)
    return pa.Table.from_pylist(out, schema=SCHEMA)
