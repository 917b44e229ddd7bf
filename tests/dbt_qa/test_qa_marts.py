"""End to end: real offline QA runner events + a crafted multi-lane vendor run -> raw.events ->
`dbt build`; then oracles: ir-measures for the URL metrics, scipy / statsmodels for the
significance tests, a Python recount of the answer metrics from the events, and rescoring with
--vars (baseline lane, UMBRELA threshold, prices, correction) without any collector code."""

from __future__ import annotations

import json
import math
import shutil
from collections import defaultdict

import duckdb
import ir_measures
import numpy as np
import pandas as pd
import pytest
from dbt_harness import NO_UNIT_TESTS, BuiltWarehouse, run_dbt
from qa_fixture import GRADER_ID
from scipy import stats
from statsmodels.stats.multitest import multipletests

from app.data import formulas as formula_sql

pytestmark = pytest.mark.slow

QA_MARTS = (
    "fct_qa_answers",
    "fct_qa_graded_chunks",
    "qa_leaderboard",
    "fct_qa_significance",
    "fct_qa_breakdowns",
    "fct_series_accuracy",
    "series_summary",
)


@pytest.fixture(scope="module")
def qa_warehouse(fixture_warehouse) -> BuiltWarehouse:
    """The offline runner's and the vendor run's events, in the session's one fixture warehouse
    (tests/dbt/fixture_warehouse.py); run_ids["vendor"]."""
    return fixture_warehouse.family("qa")


def test_every_lane_and_question_is_a_row(qa_warehouse):
    rows = qa_warehouse.rows(
        "select lane, count(*) as n, count(*) filter (where outcome = 'missing') as missing "
        "from marts.fct_qa_answers where run_id = ? group by lane",
        [qa_warehouse.run_ids["vendor"]],
    )
    assert {r["lane"] for r in rows} == {
        "local-bm25",
        "closed-book",
        "nimble_search",
        "exa_search_auto",
        "brave_search",
        "parallel_search_turbo",
    }
    assert all(r["n"] == 24 and r["missing"] == 0 for r in rows)
    offline_runs = qa_warehouse.rows(
        "select count(distinct run_id) as n from marts.qa_leaderboard where grader_id != ?",
        [GRADER_ID],
    )
    assert offline_runs[0]["n"] == 4


def test_answer_metrics_recount(qa_warehouse):
    answers = qa_warehouse.rows("select * from marts.fct_qa_answers")
    board = {
        (r["run_id"], r["lane"], r["grader_id"]): r
        for r in qa_warehouse.rows("select * from marts.qa_leaderboard")
    }
    groups = defaultdict(list)
    for row in answers:
        groups[(row["run_id"], row["lane"], row["grader_id"])].append(row)
    for key, rows in groups.items():
        graded = [r["label"] for r in rows if r["label"] is not None]
        failed = sum(r["outcome"] == "failed" for r in rows)
        landed = sum(r["landed"] for r in rows)
        got = board[key]
        assert got["n_failed"] == failed and got["n_landed"] == landed
        assert got["failure_rate"] == pytest.approx(failed / (failed + landed))
        c, i = graded.count("correct"), graded.count("incorrect")
        assert got["strict_accuracy"] == pytest.approx(c / len(graded))
        aga = c / (c + i) if c + i else 0.0
        assert got["accuracy_given_attempted"] == pytest.approx(aga)
        ic = c / len(graded)
        assert got["f1"] == pytest.approx(2 * ic * aga / (ic + aga) if ic + aga else 0.0)
        lat = [r["round_trip_ms"] for r in rows if r["landed"] and r["round_trip_ms"] is not None]
        if lat:
            assert got["latency_p50_ms"] == pytest.approx(float(np.quantile(lat, 0.5)))
            assert got["latency_p95_ms"] == pytest.approx(float(np.quantile(lat, 0.95)))
        assert (
            got["strict_accuracy_ci_low"]
            <= got["strict_accuracy"]
            <= got["strict_accuracy_ci_high"]
        )
    # failed rows never carry a label; a failed grader call is incorrect with the parse flag
    assert not any(r["label"] for r in answers if not r["landed"])
    flagged = qa_warehouse.rows(
        "select a.*, e.event_type as grade_event_type "
        "from intermediate.int_qa_answers_scored as a "
        "join staging.stg_events as e on e.event_id = a.grade_event_id where a.grade_call_failed"
    )
    assert flagged and all(
        r["label"] == "incorrect" and r["grade_parse_ok"] is False for r in flagged
    )
    # both shapes of a failed grader call score the same: today's and a pre-v2 log's
    assert {r["grade_event_type"] for r in flagged} == {"answer_graded", "provider_call_failed"}
    assert any(r["outcome"] == "rejected" for r in answers)
    assert any(r["outcome"] == "zero_results" for r in answers)


def _ir_oracle(wh: BuiltWarehouse):
    urls = wh.rows("select * from intermediate.int_qa_urls_normalized where is_kept")
    answers = wh.rows(
        "select * from marts.fct_qa_answers where landed and chunks_event_id is not null"
    )
    gold = defaultdict(list)
    predicted = defaultdict(list)
    for u in urls:
        if u["url_source"] == "gold":
            gold[(u["run_id"], u["item_id"])].append(u["normalized_url"])
        else:
            doc = u["normalized_url"] or f"__unparseable_{u['position']}"
            predicted[u["chunks_event_id"]].append((u["position"], doc))
    qrels, run, expected = [], [], {}
    for a in answers:
        g = gold.get((a["run_id"], a["item_id"]), [])
        p = sorted(predicted.get(a["chunks_event_id"], []))
        if not g or not p:
            continue
        qid = f"{a['run_id']}|{a['lane']}|{a['item_id']}"
        qrels += [ir_measures.Qrel(qid, doc, 1) for doc in g]
        run += [ir_measures.ScoredDoc(qid, doc, float(-pos)) for pos, doc in p]
        expected[qid] = a
    return qrels, run, expected


def test_url_metrics_equal_ir_measures(qa_warehouse):
    qrels, run, expected = _ir_oracle(qa_warehouse)
    assert len(expected) > 50
    measures = {
        "ndcg_5": ir_measures.nDCG @ 5,
        "ndcg_10": ir_measures.nDCG @ 10,
        "recall_5": ir_measures.R @ 5,
        "recall_10": ir_measures.R @ 10,
        "mrr": ir_measures.RR,
        "hit_5": ir_measures.Success @ 5,
        "hit_10": ir_measures.Success @ 10,
    }
    hits = 0
    for metric in ir_measures.iter_calc(list(measures.values()), qrels, run):
        name = next(k for k, v in measures.items() if v == metric.measure)
        got = expected[metric.query_id][name]
        got = float(got) if isinstance(got, bool) else got
        assert got == pytest.approx(metric.value, abs=1e-9), (metric.query_id, name)
        hits += metric.value > 0 and name == "hit_10"
    assert hits > 5, "the fixture must exercise gold hits"


def test_empty_predictions_or_gold_score_zero(qa_warehouse):
    rows = qa_warehouse.rows(
        "select * from marts.fct_qa_answers where outcome = 'zero_results' and lane != 'closed-book'"
    )
    assert rows
    for r in rows:
        assert (r["ndcg_10"], r["recall_10"], r["mrr"], r["hit_10"]) == (0.0, 0.0, 0.0, False)
        assert r["llm_hit_10"] is False and r["llm_precision_10"] == 0.0


def _expected_significance(wh: BuiltWarehouse, baseline: str, correction: str):
    answers = wh.rows("select * from marts.fct_qa_answers order by sample_order, item_id")
    by = defaultdict(lambda: defaultdict(dict))
    for a in answers:
        by[(a["run_id"], a["grader_id"])][a["lane"]][a["item_id"]] = a
    out = {}
    for (run_id, grader), lanes in by.items():
        if baseline not in lanes:
            continue
        base = lanes[baseline]
        for metric in ("accuracy", "ndcg_10", "recall_10", "mrr", "llm_hit_10"):
            tested = []
            for lane in sorted(lanes):
                if lane == baseline:
                    continue
                own = lanes[lane]
                items = [i for i in own if i in base and own[i]["landed"] and base[i]["landed"]]

                def value(row, metric=metric):
                    if metric == "accuracy":
                        return 1.0 if row["label"] == "correct" else 0.0
                    v = row[metric]
                    return None if v is None else float(v)

                a = [value(own[i]) for i in items]
                b = [value(base[i]) for i in items]
                p = None
                if len(items) >= 2 and None not in a + b:
                    p = 1.0 if a == b else float(stats.ttest_rel(a, b).pvalue)
                out[(run_id, grader, metric, lane)] = {"n_pairs": len(items), "p_value": p}
                if p is not None:
                    tested.append((lane, p))
            if tested:
                _reject, adjusted, _s, _b = multipletests(
                    [p for _l, p in tested], method=correction
                )
                for (lane, _p), p_adj in zip(tested, adjusted, strict=True):
                    out[(run_id, grader, metric, lane)]["p_adjusted"] = float(p_adj)
                    out[(run_id, grader, metric, lane)]["family_size"] = len(tested)
    return out


def _check_significance(wh: BuiltWarehouse, baseline: str, correction: str):
    expected = _expected_significance(wh, baseline, correction)
    rows = wh.rows("select * from marts.fct_qa_significance")
    assert {(r["run_id"], r["grader_id"], r["metric"], r["lane"]) for r in rows} == set(expected)
    n_tested = 0
    for r in rows:
        e = expected[(r["run_id"], r["grader_id"], r["metric"], r["lane"])]
        assert r["baseline_lane"] == baseline and r["correction"] == correction
        assert r["n_pairs"] == e["n_pairs"]
        if e["p_value"] is None:
            assert r["p_value"] is None and r["significant"] is False
            continue
        n_tested += 1
        assert math.isclose(r["p_value"], e["p_value"], rel_tol=1e-12, abs_tol=1e-15)
        assert math.isclose(r["p_adjusted"], e["p_adjusted"], rel_tol=1e-12, abs_tol=1e-15)
        assert r["family_size"] == e["family_size"]
        assert r["significant"] == (r["p_adjusted"] < 0.05)
    return n_tested


def test_significance_equals_scipy_and_statsmodels(qa_warehouse):
    assert _check_significance(qa_warehouse, "local-bm25", "bonferroni") > 10
    # the same pair set for every metric of one comparison
    rows = qa_warehouse.rows(
        "select run_id, lane, count(distinct n_pairs) as n from marts.fct_qa_significance "
        "group by run_id, grader_id, lane"
    )
    assert all(r["n"] == 1 for r in rows)


def _snapshot(wh: BuiltWarehouse) -> dict:
    snap = {}
    for mart in QA_MARTS:
        snap[mart] = wh.query(f"select * from marts.{mart} order by all")
    return snap


@pytest.fixture(scope="module")
def rescored(qa_warehouse, tmp_path_factory):
    work = tmp_path_factory.mktemp("dbt_qa_rescore")
    path = work / "warehouse.duckdb"
    shutil.copy(qa_warehouse.path, path)
    raw_before = BuiltWarehouse(path, work, {}, "").rows("select count(*) as n from raw.events")
    new_vars = {
        "qa_baseline_lane": "nimble_search",
        "umbrela_threshold": 3,
        "qa_correction": "holm",
        "lane_price_overrides": {"nimble_search": 1.5},
    }
    result = run_dbt(
        ["build", *NO_UNIT_TESTS, "--select", "lane_prices+", "int_qa_runs+"], path, work, new_vars
    )
    wh = BuiltWarehouse(path, work, qa_warehouse.run_ids, result.stdout)
    assert wh.rows("select count(*) as n from raw.events") == raw_before  # nothing was collected
    return wh


def test_rebuild_is_bit_identical(qa_warehouse, tmp_path_factory):
    work = tmp_path_factory.mktemp("dbt_qa_rebuild")
    path = work / "warehouse.duckdb"
    shutil.copy(qa_warehouse.path, path)
    run_dbt(["run", "--select", "lane_prices+", "int_qa_runs+"], path, work)
    again, before = _snapshot(BuiltWarehouse(path, work, {}, "")), _snapshot(qa_warehouse)
    for mart in QA_MARTS:
        assert again[mart].equals(before[mart]), mart


def test_rescoring_with_vars_changes_marts_without_collectors(rescored):
    _check_significance(rescored, "nimble_search", "holm")
    board = rescored.rows(
        "select * from marts.qa_leaderboard where run_id = ?", [rescored.run_ids["vendor"]]
    )
    nimble = next(r for r in board if r["lane"] == "nimble_search")
    assert nimble["usd_per_1k"] == 1.5 and nimble["price_basis"] == "override"
    assert nimble["run_cost_usd"] == pytest.approx(
        1.5 * (nimble["n_landed"] + nimble["n_failed"]) / 1000
    )
    assert nimble["accuracy_p_adjusted"] is None  # the baseline is not compared with itself
    assert all(r["baseline_lane"] == "nimble_search" for r in board)
    answers = rescored.rows("select * from marts.fct_qa_answers where llm_precision_10 is not null")
    assert all(r["relevance_threshold"] == 3 for r in answers)


def test_umbrela_threshold_recount(qa_warehouse, rescored):
    for wh, threshold in ((qa_warehouse, 2), (rescored, 3)):
        grades = wh.rows(
            """
            select u.run_id, u.lane, u.item_id, c.chunk_rank, r.grade
            from marts.fct_qa_answers as u
            join staging.stg_events__chunks_normalized as c on c.chunks_event_id = u.chunks_event_id
            left join staging.stg_events__relevance_graded as r
              on r.run_id = u.run_id and r.lane = u.lane and r.item_id = u.item_id
             and r.chunk_rank = c.chunk_rank and r.attempt = c.attempt
            where u.landed and u.llm_hit_10 is not null and c.chunk_rank <= 10
            """
        )
        per = defaultdict(list)
        for g in grades:
            per[(g["run_id"], g["lane"], g["item_id"])].append(g["grade"] or 0)
        rows = wh.rows("select * from marts.fct_qa_answers where llm_hit_10 is not null and landed")
        for r in rows:
            values = per.get((r["run_id"], r["lane"], r["item_id"]), [])
            relevant = sum(v >= threshold for v in values)
            assert r["llm_hit_10"] == (relevant > 0)
            assert r["llm_precision_10"] == pytest.approx(relevant / len(values) if values else 0.0)


def _whatif_inputs(wh: BuiltWarehouse, run_id: str, grader_id: str):
    """What the QA what-if reads of one (run, grader): landed answer rows, graded chunks, the
    published formulas, the leaderboard."""
    with duckdb.connect(str(wh.path), read_only=True) as con:
        units = con.execute(
            "select lane, item_id, sample_order, landed, llm_hit_10 is not null as "
            "relevance_measured, chunks_event_id from marts.fct_qa_answers "
            "where run_id = ? and grader_id = ? and landed",
            [run_id, grader_id],
        ).df()
        chunks = con.execute(
            "select * from marts.fct_qa_graded_chunks where run_id = ?", [run_id]
        ).df()
        formulas = dict(
            con.execute("select formula, sql_text from marts.dim_scoring_formulas").fetchall()
        )
        board = con.execute(
            "select * from marts.qa_leaderboard where run_id = ? and grader_id = ? order by lane",
            [run_id, grader_id],
        ).df()
    return units, chunks, formulas, board


def _plain_lane_relevance(wh: BuiltWarehouse, run_id: str, grader_id: str, threshold: float):
    """The oracle: per lane, the plain mean over landed measured rows of hit / precision at
    `threshold`, each chunk's grade its staged verdict of the chunks' attempt (0 if none)."""
    grades = wh.rows(
        """
        select u.lane, u.item_id, c.chunk_rank, r.grade
        from marts.fct_qa_answers as u
        join staging.stg_events__chunks_normalized as c on c.chunks_event_id = u.chunks_event_id
        left join staging.stg_events__relevance_graded as r
          on r.run_id = u.run_id and r.lane = u.lane and r.item_id = u.item_id
         and r.chunk_rank = c.chunk_rank and r.attempt = c.attempt
        where u.run_id = ? and u.grader_id = ? and u.landed and c.chunk_rank <= 10
        """,
        [run_id, grader_id],
    )
    per = defaultdict(list)
    for g in grades:
        per[(g["lane"], g["item_id"])].append(g["grade"] or 0)
    units = wh.rows(
        "select lane, item_id, llm_hit_10 is not null as measured from marts.fct_qa_answers "
        "where run_id = ? and grader_id = ? and landed",
        [run_id, grader_id],
    )
    hits: dict[str, list[float]] = {}
    precisions: dict[str, list[float]] = {}
    for u in units:
        lane_hits = hits.setdefault(u["lane"], [])
        lane_precisions = precisions.setdefault(u["lane"], [])
        if not u["measured"]:
            continue  # NULL, skipped by the mean
        values = per.get((u["lane"], u["item_id"]), [])
        relevant = sum(v >= threshold for v in values)
        lane_hits.append(float(relevant > 0))
        lane_precisions.append(relevant / len(values) if values else 0.0)

    def mean(xs):
        return sum(xs) / len(xs) if xs else None

    return {lane: (mean(hits[lane]), mean(precisions[lane])) for lane in hits}


@pytest.mark.parametrize("threshold", [0, 1, 3])
def test_qa_whatif_relevance_formulas_equal_a_plain_recount(qa_warehouse, threshold):
    """app.data.formulas.qa_lane_relevance (dbt's published formulas over fct_qa_graded_chunks
    and the landed fct_qa_answers rows) at thresholds the build did not use, against the plain
    recount from the staged events."""
    regimes = qa_warehouse.rows("select distinct run_id, grader_id from marts.qa_leaderboard")
    assert regimes
    measured = 0
    for regime in regimes:
        units, chunks, formulas, _board = _whatif_inputs(qa_warehouse, **regime)
        got = formula_sql.qa_lane_relevance(units, chunks, threshold, formulas)
        expected = _plain_lane_relevance(
            qa_warehouse, regime["run_id"], regime["grader_id"], threshold
        )
        assert sorted(got["lane"]) == sorted(expected)
        for row in got.itertuples():
            hit, precision = expected[row.lane]
            for value, oracle in ((row.llm_hit_10, hit), (row.llm_precision_10, precision)):
                if oracle is None:
                    assert pd.isna(value), (regime, row.lane)
                else:
                    measured += 1
                    assert value == pytest.approx(oracle, abs=1e-12), (regime, row.lane)
    assert measured


def test_qa_whatif_equals_the_rescored_leaderboard(qa_warehouse, rescored):
    """At the rescore's threshold 3 and nimble_search at $1.5/1k, the what-if over the first
    build's rows equals the rescored qa_leaderboard, bit for bit where the formula is a mean."""
    regimes = qa_warehouse.rows("select distinct run_id, grader_id from marts.qa_leaderboard")
    for regime in regimes:
        units, chunks, formulas, board = _whatif_inputs(qa_warehouse, **regime)
        *_, official = _whatif_inputs(rescored, **regime)
        relevance = formula_sql.qa_lane_relevance(units, chunks, 3, formulas)
        costs = formula_sql.qa_lane_costs(board, {"nimble_search": 1.5}, formulas)
        official = official.set_index("lane")
        for column in ("llm_hit_10", "llm_precision_10"):
            assert relevance.set_index("lane")[column].to_dict() == pytest.approx(
                official[column].to_dict(), rel=0, abs=0, nan_ok=True
            ), (regime, column)
        # every lane: the ones not repriced as published
        for column in ("usd_per_1k", "run_cost_usd"):
            assert costs.set_index("lane")[column].to_dict() == pytest.approx(
                official.loc[board["lane"], column].to_dict(), abs=1e-12, nan_ok=True
            ), (regime, column)


def test_series_marts(qa_warehouse):
    series = qa_warehouse.rows("select * from marts.fct_series_accuracy order by lane, run_index")
    assert [r["run_index"] for r in series] == [1, 2, 3, 1, 2, 3]
    summary = qa_warehouse.rows("select * from marts.series_summary")
    assert {r["n_runs"] for r in summary} == {3}
    assert all(r["noise_band_points"] == 0.4 for r in summary)


def test_dim_runs_counts_questions_and_answer_outcomes(qa_warehouse):
    """dim_runs counts a QA run's registered questions and its latest answer per (lane,
    question), recounted here from the stored events (not from the marts)."""
    run_id = qa_warehouse.run_ids["vendor"]
    raw = qa_warehouse.rows(
        "select event_type, payload from raw.events where run_id = ? "
        "and event_type in ('question_registered', 'answer_synthesized')",
        [run_id],
    )
    questions = {
        json.loads(r["payload"])["item_id"] for r in raw if r["event_type"] == "question_registered"
    }
    latest: dict[tuple[str, str], dict] = {}
    for r in raw:
        if r["event_type"] != "answer_synthesized":
            continue
        answer = json.loads(r["payload"])
        key = (answer["lane"], answer["item_id"])
        if key not in latest or answer["attempt"] > latest[key]["attempt"]:
            latest[key] = answer
    failed = sum(a["outcome"] == "failed" for a in latest.values())
    assert failed, "the fixture must hold a failed answer"
    (run,) = qa_warehouse.rows("select * from marts.dim_runs where run_id = ?", [run_id])
    assert run["n_items_registered"] == len(questions) == 24
    assert (run["n_completed"], run["n_failed"]) == (len(latest) - failed, failed)
