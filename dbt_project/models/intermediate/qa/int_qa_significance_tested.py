"""Paired significance of every lane against one baseline lane (methodology 2.6).

Per (run_id, grader_id, metric, lane != baseline), metric in accuracy (0/1 correct), ndcg_10,
recall_10, mrr, llm_hit_10 (0/1):
  * pairs = the questions where BOTH the lane and var('qa_baseline_lane') landed (answered,
    zero_results, refused, rejected); zero-result rows enter with 0. The same pair set is used
    for every metric of the comparison; n_pairs is reported. A landed answer not graded yet
    counts 0 for accuracy.
  * paired Student t-test, scipy.stats.ttest_rel(lane, baseline), two-sided; mean_diff =
    mean(lane - baseline); direction = better | worse | same by its sign.
  * not tested (p NULL, significant false): n_pairs < 2, or the metric is undefined for one of
    the two lanes (closed-book has no URLs; a run without a judge has no llm_hit_10).
    Identical vectors -> t NULL, p = 1 (tested).
  * family = the tested comparisons of one metric (= L - 1 when every lane is testable);
    var('qa_correction'): bonferroni p_adj = min(1, p * family_size), or holm step-down
    (both equal statsmodels.stats.multitest.multipletests). significant = p_adj < 0.05.
    Claiming several metrics at once needs the family (L - 1) x metrics: not done here.
A run whose lanes do not include the baseline lane has no rows.

Grain: one row per (run_id, grader_id, metric, lane). Tested in tests/dbt_qa against scipy and
statsmodels.
"""

import numpy as np
import pyarrow as pa
from bench_stats import ALPHA, adjust, check_correction, paired_ttest
from bench_vars import scoring_value

METRICS = ("accuracy", "ndcg_10", "recall_10", "mrr", "llm_hit_10")

SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("grader_id", pa.string()),
        ("baseline_lane", pa.string()),
        ("lane", pa.string()),
        ("metric", pa.string()),
        ("n_pairs", pa.int64()),
        ("mean_diff", pa.float64()),
        ("t_stat", pa.float64()),
        ("p_value", pa.float64()),
        ("p_adjusted", pa.float64()),
        ("correction", pa.string()),
        ("family_size", pa.int64()),
        ("significant", pa.bool_()),
        ("direction", pa.string()),
    ]
)


def metric_value(row, metric):
    if metric == "accuracy":
        return 1.0 if row["label"] == "correct" else 0.0
    value = row[metric]
    if value is None:
        return None
    return float(value)


def model(dbt, session):
    dbt.config(materialized="table")
    baseline = str(scoring_value("qa_baseline_lane", dbt.config.get("qa_baseline_lane")))
    correction = str(scoring_value("qa_correction", dbt.config.get("qa_correction")))
    check_correction(correction, "qa_correction")
    rows = (
        dbt.ref("int_qa_answers_scored")
        .project(
            "run_id, grader_id, lane, item_id, sample_order, landed, label, "
            "ndcg_10, recall_10, mrr, cast(llm_hit_10 as double) as llm_hit_10"
        )
        .order("run_id, grader_id, lane, sample_order, item_id")
        .to_arrow_table()
        .to_pylist()
    )
    groups = {}
    for row in rows:
        lanes = groups.setdefault((row["run_id"], row["grader_id"]), {})
        lanes.setdefault(row["lane"], {})[row["item_id"]] = row
    out = []
    for (run_id, grader_id), lanes in sorted(groups.items()):
        if baseline not in lanes:
            continue
        base = lanes[baseline]
        for metric in METRICS:
            family = []
            for lane in sorted(lanes):
                if lane == baseline:
                    continue
                own = lanes[lane]
                pairs = sorted(
                    (
                        (own[i]["sample_order"], i)
                        for i in own
                        if i in base and own[i]["landed"] and base[i]["landed"]
                    ),
                    key=lambda pair: (pair[0] is None, pair[0], pair[1]),
                )
                items = [i for _order, i in pairs]
                a = [metric_value(own[i], metric) for i in items]
                b = [metric_value(base[i], metric) for i in items]
                defined = all(v is not None for v in a + b)
                t = p = mean_diff = None
                if defined and items:
                    mean_diff = float(np.mean(np.asarray(a) - np.asarray(b)))
                if defined:
                    t, p = paired_ttest(a, b)
                direction = None
                if mean_diff is not None:
                    direction = "better" if mean_diff > 0 else "worse" if mean_diff < 0 else "same"
                family.append(
                    {
                        "run_id": run_id,
                        "grader_id": grader_id,
                        "baseline_lane": baseline,
                        "lane": lane,
                        "metric": metric,
                        "n_pairs": len(items),
                        "mean_diff": mean_diff,
                        "t_stat": t,
                        "p_value": p,
                        "p_adjusted": None,
                        "correction": correction,
                        "family_size": None,
                        "significant": False,
                        "direction": direction,
                    }
                )
            tested = [row for row in family if row["p_value"] is not None]
            for row, p_adj in zip(
                tested, adjust([row["p_value"] for row in tested], correction), strict=True
            ):
                row["p_adjusted"] = p_adj
                row["significant"] = p_adj < ALPHA
            for row in family:
                row["family_size"] = len(tested)
            out.extend(family)
    return pa.Table.from_pylist(out, schema=SCHEMA)
