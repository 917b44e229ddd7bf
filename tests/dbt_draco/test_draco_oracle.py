"""The DRACO marts against the scoring rules recomputed from the EVENTS in plain Python
(draco_oracle.py), scipy / statsmodels for the paired tests, and rescoring by --vars and by the
weight-override seed (rebuilt without any collector code)."""

from __future__ import annotations

import csv
import hashlib
import os
import shutil
import statistics
import subprocess
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from dbt_harness import DBT, DBT_PROJECT, NO_UNIT_TESTS, BuiltWarehouse, run_dbt
from draco_fixture import J1, J2, TASK_ROWS
from draco_oracle import DRACO_AXES, score_events, weight_rule
from scipy import stats
from statsmodels.stats.multitest import multipletests

pytestmark = pytest.mark.slow

TOL = 1e-12
# What a rescore of the weights rebuilds that these tests read: the path from the overrides to
# fct_draco_items, dim_rubric_criteria and dim_scoring_vars; not the leaderboards, bootstrap and
# significance models downstream, which these rescoring tests do not read.
DRACO_MODELS = "int_draco_weight_overrides+,+fct_draco_items dim_rubric_criteria dim_scoring_vars"


def seed_prices() -> dict[str, tuple[float, str]]:
    with (DBT_PROJECT / "seeds" / "research_prices.csv").open() as handle:
        return {
            row["lane"]: (float(row["usd_per_task"]), row["basis"])
            for row in csv.DictReader(handle)
        }


def mart_items(wh: BuiltWarehouse, run_id: str) -> dict[tuple[str, str, str], dict]:
    rows = wh.rows("select * from marts.fct_draco_items where run_id = ?", [run_id])
    return {(r["lane"], r["judge_id"], r["item_id"]): r for r in rows}


@pytest.fixture(scope="module")
def oracle(draco_fixture):
    return score_events(draco_fixture.events, draco_fixture.scored_run_id, prices=seed_prices())


def test_every_item_score_axis_score_and_pass_rate_equal_the_oracle(
    draco_warehouse, draco_fixture, oracle
):
    items = mart_items(draco_warehouse, draco_fixture.scored_run_id)
    assert set(items) == set(oracle)
    assert len(oracle) == len(TASK_ROWS) * 3 * 2
    column = {axis: "score_" + axis.replace("-", "_") for axis in DRACO_AXES}
    for key, want in oracle.items():
        got = items[key]
        assert got["status"] == want.status, key
        assert got["attempt"] == want.attempt, key
        assert abs(got["score"] - want.score) <= TOL, key
        assert abs(got["pass_rate"] - want.pass_rate) <= TOL, key
        for axis in DRACO_AXES:
            assert abs(got[column[axis]] - want.axis_scores[axis]) <= TOL, (key, axis)
        assert got["n_split"] == want.n_split, key
        assert got["n_unparsed_samples"] == want.n_unparsed, key
        assert got["n_failed_samples"] == want.n_failed_samples, key
        assert got["n_met_overridden_samples"] == want.n_met_overridden == 0, key
        assert got["error_class"] == want.error_class, key
        assert got["cost_basis"] == want.cost_basis, key
        if want.cost_usd is None:
            assert got["cost_usd"] is None, key
        else:
            assert got["cost_usd"] == pytest.approx(want.cost_usd, abs=TOL), key
        assert got["wall_clock_ms"] == want.wall_clock_ms, key
    # the fixture exercises every path of the rules
    statuses = {r.status for r in oracle.values()}
    assert statuses == {"scored", "incomplete", "failed"}
    assert any(0 < r.score < 1 for r in oracle.values())
    assert any(r.n_unparsed for r in oracle.values()) and any(
        r.n_failed_samples for r in oracle.values()
    )
    # incomplete items are scored as a lower bound: some criteria were filled least favourably
    assert any(
        r.status == "incomplete" and r.score > 0 and any(c.n_filled for c in r.criteria)
        for r in oracle.values()
    )


def test_axis_rows_equal_the_oracle(draco_warehouse, draco_fixture, oracle):
    rows = draco_warehouse.rows(
        "select * from marts.fct_draco_item_axes where run_id = ?", [draco_fixture.scored_run_id]
    )
    assert len(rows) == len(oracle) * 4
    for row in rows:
        want = oracle[(row["lane"], row["judge_id"], row["item_id"])]
        assert abs(row["score"] - want.axis_scores[row["axis"]]) <= TOL


def test_every_criterion_row_equals_the_oracle(draco_warehouse, draco_fixture, oracle):
    rows = draco_warehouse.rows(
        "select * from marts.fct_draco_criteria where run_id = ?", [draco_fixture.scored_run_id]
    )
    got = {(r["lane"], r["judge_id"], r["item_id"], r["criterion_id"]): r for r in rows}
    n = 0
    fractional = set()
    for key, item in oracle.items():
        for c in item.criteria:
            row = got[(*key, c.criterion_id)]
            n += 1
            assert row["n_samples"] == c.n_samples and row["n_met"] == c.n_met
            assert (row["v"] is None) == (c.v is None)
            if c.v is not None:
                assert abs(row["v"] - c.v) <= TOL
                if 0 < c.v < 1:
                    fractional.add(round(c.v, 6))
            assert row["n_samples_filled"] == c.n_filled
            assert abs(row["v_scored"] - c.v_scored) <= TOL
            assert row["passed"] == c.passed
            assert row["split"] == (c.v is not None and 0 < c.v < 1)
            assert row["flagged"] == (c.n_unparsed + c.n_failed > 0)
            assert sorted(row["verdict_event_ids"]) == c.verdict_ids
            assert row["weight"] == c.weight
    assert n == len(rows)
    # 1/3 and 2/3 of three samples; 1/2 where the incomplete item lacks its third sample
    assert fractional == {round(1 / 3, 6), round(1 / 2, 6), round(2 / 3, 6)}


def test_leaderboard_means_equal_the_oracle(draco_warehouse, draco_fixture, oracle):
    board = {
        (r["lane"], r["judge_id"]): r
        for r in draco_warehouse.rows(
            "select * from marts.draco_leaderboard where run_id = ?", [draco_fixture.scored_run_id]
        )
    }
    groups = defaultdict(list)
    for (lane, judge, _item), result in oracle.items():
        groups[(lane, judge)].append(result)
    assert set(board) == set(groups)
    for key, results in groups.items():
        row = board[key]
        assert row["n_items"] == len(results) == len(TASK_ROWS)
        assert abs(row["score_mean"] - statistics.fmean(r.score for r in results)) <= TOL
        assert (
            abs(
                row["factual_accuracy_mean"]
                - statistics.fmean(r.axis_scores["factual-accuracy"] for r in results)
            )
            <= TOL
        )
        assert abs(row["pass_rate_mean"] - statistics.fmean(r.pass_rate for r in results)) <= TOL
        assert row["n_failed"] == sum(r.status == "failed" for r in results)
        assert row["n_incomplete"] == sum(r.status == "incomplete" for r in results)
        done = [r for r in results if r.wall_clock_ms is not None]
        assert row["latency_mean_s"] == pytest.approx(
            statistics.fmean(r.wall_clock_ms / 1000 for r in done), abs=TOL
        )
        costed = [r for r in done if r.cost_usd is not None]
        assert row["n_items_costed"] == len(costed)
        if costed:
            assert row["cost_mean_usd"] == pytest.approx(
                statistics.fmean(r.cost_usd for r in costed), abs=TOL
            )
        bases = {r.cost_basis for r in costed}
        if not costed:
            want_basis = None
        elif len(costed) < len(done):
            want_basis = "partial"
        else:
            want_basis = bases.pop() if len(bases) == 1 else "mixed"
        assert row["cost_basis"] == want_basis
        assert row["n_split_criteria"] == sum(r.n_split for r in results)
        assert row["n_unparsed_samples"] == sum(r.n_unparsed for r in results)
        assert row["n_met_overridden_samples"] == 0
    for judge in (J1, J2):
        ranked = sorted(
            (r for k, r in board.items() if k[1] == judge), key=lambda r: -r["score_mean"]
        )
        assert [r["rank_score"] for r in ranked] == [1, 2, 3]


def test_domain_means_equal_the_oracle(draco_warehouse, draco_fixture, oracle):
    rows = draco_warehouse.rows(
        "select * from marts.fct_draco_domains where run_id = ?", [draco_fixture.scored_run_id]
    )
    groups = defaultdict(list)
    for (lane, judge, _item), result in oracle.items():
        groups[(lane, judge, result.domain)].append(result)
    assert {(r["lane"], r["judge_id"], r["domain"]) for r in rows} == set(groups)
    for row in rows:
        results = groups[(row["lane"], row["judge_id"], row["domain"])]
        assert row["n_items"] == len(results)
        assert abs(row["score_mean"] - statistics.fmean(r.score for r in results)) <= TOL


def test_bootstrap_interval_is_seeded_and_stored(draco_warehouse, draco_fixture, oracle):
    rows = draco_warehouse.rows(
        "select * from marts.draco_leaderboard where run_id = ?", [draco_fixture.scored_run_id]
    )
    for row in rows:
        assert row["bootstrap_seed"] == 20261130 and row["bootstrap_samples"] == 1000
        scores = [
            r.score
            for r in sorted(
                (
                    r
                    for (lane, judge, _i), r in oracle.items()
                    if (lane, judge) == (row["lane"], row["judge_id"])
                ),
                key=lambda r: (r.position, r.item_id),
            )
        ]
        digest = hashlib.sha256(
            f"{row['run_id']}\x1f{row['lane']}\x1f{row['judge_id']}".encode()
        ).digest()
        rng = np.random.default_rng([20261130, int.from_bytes(digest[:8], "big")])
        data = np.asarray(scores)
        means = data[rng.integers(0, len(data), size=(1000, len(data)))].mean(axis=1)
        low, high = np.percentile(means, [2.5, 97.5])
        assert row["score_ci_low"] == pytest.approx(low, abs=TOL)
        assert row["score_ci_high"] == pytest.approx(high, abs=TOL)
        assert row["score_ci_low"] <= row["score_mean"] <= row["score_ci_high"]


def _scores(oracle, lane, judge) -> list[float]:
    """The lane's item scores under one judge, in item order (position, item_id)."""
    results = [r for (ln, jd, _item), r in oracle.items() if (ln, jd) == (lane, judge)]
    return [r.score for r in sorted(results, key=lambda r: (r.position, r.item_id))]


def test_paired_tests_equal_scipy_with_holm_over_all_pairs(draco_warehouse, draco_fixture, oracle):
    rows = draco_warehouse.rows(
        "select * from marts.fct_draco_significance where run_id = ? order by judge_id, lane_a, lane_b",
        [draco_fixture.scored_run_id],
    )
    assert len(rows) == 2 * 3  # 3 lane pairs per judge regime, never across regimes
    for judge in (J1, J2):
        family = [r for r in rows if r["judge_id"] == judge]
        p_t, p_w = [], []
        for row in family:
            a, b = _scores(oracle, row["lane_a"], judge), _scores(oracle, row["lane_b"], judge)
            assert row["n_pairs"] == len(a) == len(TASK_ROWS)
            t = stats.ttest_rel(a, b)
            w = stats.wilcoxon(a, b)
            assert row["t_stat"] == pytest.approx(t.statistic, rel=1e-9)
            assert row["p_ttest"] == pytest.approx(t.pvalue, rel=1e-9)
            assert row["p_wilcoxon"] == pytest.approx(w.pvalue, rel=1e-9)
            assert row["mean_diff"] == pytest.approx(float(np.mean(np.subtract(a, b))), abs=TOL)
            assert row["family_size"] == 3 and row["correction"] == "holm"
            p_t.append(t.pvalue)
            p_w.append(w.pvalue)
        for key, ps in (("p_ttest_adjusted", p_t), ("p_wilcoxon_adjusted", p_w)):
            expected = multipletests(ps, method="holm")[1]
            assert [r[key] for r in family] == pytest.approx(list(expected), rel=1e-9)
        for row in family:
            assert row["significant"] == (row["p_ttest_adjusted"] < 0.05)


def test_criterion_agreement_equals_the_oracle(draco_warehouse, draco_fixture, oracle):
    rows = draco_warehouse.rows(
        "select * from marts.fct_draco_criterion_agreement where run_id = ?",
        [draco_fixture.scored_run_id],
    )
    groups = defaultdict(dict)  # (item, criterion) -> {(lane, judge): v}
    for (lane, judge, item), result in oracle.items():
        for c in result.criteria:
            if c.v is not None:
                groups[(item, c.criterion_id)][(lane, judge)] = c.v
    checked = 0
    for row in rows:
        vs = groups.get((row["item_id"], row["criterion_id"]), {})
        assert row["n_groups"] == len(vs)
        if not vs:
            continue
        per_lane = defaultdict(list)
        for (lane, _judge), v in vs.items():
            per_lane[lane].append(v)
        lane_v = [statistics.fmean(v) for _lane, v in sorted(per_lane.items())]
        assert row["n_systems"] == len(lane_v)
        assert abs(row["mean_v"] - statistics.fmean(vs.values())) <= TOL
        if len(lane_v) > 1:
            assert row["stddev_v"] == pytest.approx(statistics.stdev(lane_v), abs=1e-12)
        assert row["noisy_share"] == pytest.approx(
            sum(0 < v < 1 for v in vs.values()) / len(vs), abs=TOL
        )
        multi = [v for v in per_lane.values() if len(v) >= 2]
        if multi:
            differ = sum(len({x >= 0.5 for x in v}) > 1 for v in multi)
            assert row["judge_disagreement_share"] == pytest.approx(differ / len(multi), abs=TOL)
        else:
            assert row["judge_disagreement_share"] is None
        checked += 1
    assert checked > 200


# --- rescoring: new weights without any API call ------------------------------------------------


def _copy_warehouse(wh: BuiltWarehouse, work: Path) -> Path:
    work.mkdir(parents=True, exist_ok=True)
    db = work / "warehouse.duckdb"
    shutil.copyfile(wh.path, db)
    return db


def _changed(before: dict, after: dict) -> set:
    return {k for k in before if abs(before[k].score - after[k].score) > TOL}


def test_penalty_floor_var_rescores_exactly_the_expected_items(
    draco_warehouse, draco_fixture, oracle, tmp_path
):
    db = _copy_warehouse(draco_warehouse, tmp_path / "floor")
    run_dbt(
        ["run", "--select", *DRACO_MODELS.split()],
        db,
        tmp_path / "floor",
        {"draco_penalty_floor": -100},
    )
    rescored = BuiltWarehouse(db, tmp_path / "floor", draco_warehouse.run_ids, "")
    floored = score_events(
        draco_fixture.events,
        draco_fixture.scored_run_id,
        weights=weight_rule(floor=-100),
        prices=seed_prices(),
    )
    expected_changes = _changed(oracle, floored)
    assert expected_changes  # the Medicine penalties of -150 .. -500 are MET somewhere
    items = mart_items(rescored, draco_fixture.scored_run_id)
    for key, want in floored.items():
        assert abs(items[key]["score"] - want.score) <= TOL, key
    before = mart_items(draco_warehouse, draco_fixture.scored_run_id)
    actual_changes = {k for k in items if abs(items[k]["score"] - before[k]["score"]) > TOL}
    assert actual_changes == expected_changes
    criteria = rescored.rows(
        "select registered_weight, weight, is_floored from marts.dim_rubric_criteria "
        "where registered_weight < -100"
    )
    assert criteria and all(c["weight"] == -100 and c["is_floored"] for c in criteria)
    assert (
        rescored.rows(
            "select var_value from marts.dim_scoring_vars where var_name = 'draco_penalty_floor'"
        )[0]["var_value"]
        == "-100"
    )


def test_weight_override_seed_rescores_exactly_the_expected_items(
    draco_warehouse, draco_fixture, oracle, tmp_path
):
    medicine = draco_fixture.tasks[TASK_ROWS.index(64)]
    heaviest = min(medicine.criteria, key=lambda c: c.weight)
    academic = draco_fixture.tasks[0]
    generous = academic.criteria[0]
    overrides = {
        (medicine.item_id, heaviest.criterion_id): -20,
        (academic.item_id, generous.criterion_id): 60,
    }
    project = tmp_path / "dbt_project"
    shutil.copytree(
        DBT_PROJECT, project, ignore=shutil.ignore_patterns("target", "logs", ".user.yml")
    )
    with (project / "seeds" / "draco_weight_overrides.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item_id", "criterion_id", "weight", "reason"])
        for (item, criterion), weight in overrides.items():
            writer.writerow([item, criterion, weight, "rescoring test"])
    db = _copy_warehouse(draco_warehouse, tmp_path / "seed")
    env = {
        **os.environ,
        "BENCH_DUCKDB_PATH": str(db),
        "DBT_TARGET_PATH": str(tmp_path / "seed" / "target"),
        "DBT_LOG_PATH": str(tmp_path / "seed" / "logs"),
    }
    # `dbt seed` then `dbt run` in one invocation (one parse of the copied project): the seed,
    # then the models, in the order of the graph; no data or unit tests, as `dbt run`.
    args = ["build", "--select", "draco_weight_overrides", *DRACO_MODELS.split()]
    args += ["--exclude-resource-type", "test", "--exclude-resource-type", "unit_test"]
    result = subprocess.run(
        [str(DBT), *args, "--project-dir", str(project), "--profiles-dir", str(project)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-4000:]
    rescored = BuiltWarehouse(db, tmp_path / "seed", draco_warehouse.run_ids, "")
    overridden = score_events(
        draco_fixture.events,
        draco_fixture.scored_run_id,
        weights=weight_rule(overrides=overrides),
        prices=seed_prices(),
    )
    expected_changes = _changed(oracle, overridden)
    assert expected_changes
    items = mart_items(rescored, draco_fixture.scored_run_id)
    for key, want in overridden.items():
        assert abs(items[key]["score"] - want.score) <= TOL, key
    before = mart_items(draco_warehouse, draco_fixture.scored_run_id)
    assert {
        k for k in items if abs(items[k]["score"] - before[k]["score"]) > TOL
    } == expected_changes
    rows = rescored.rows(
        "select item_id, criterion_id, registered_weight, weight, override_reason "
        "from marts.dim_rubric_criteria where is_overridden order by weight"
    )
    assert [(r["item_id"], r["criterion_id"], r["weight"]) for r in rows] == [
        (medicine.item_id, heaviest.criterion_id, -20.0),
        (academic.item_id, generous.criterion_id, 60.0),
    ]
    assert rows[0]["registered_weight"] == heaviest.weight == -500
    assert all(r["override_reason"] == "rescoring test" for r in rows)


def test_weight_override_var_rows_rescore_like_the_seed_and_win_over_it(
    draco_warehouse, draco_fixture, oracle, tmp_path
):
    """`bench rescore --draco-weights FILE` passes its rows as var draco_weight_override_rows:
    the same rule as the seed, no file in the project touched."""
    medicine = draco_fixture.tasks[TASK_ROWS.index(64)]
    heaviest = min(medicine.criteria, key=lambda c: c.weight)
    overrides = {(medicine.item_id, heaviest.criterion_id): -30}
    db = _copy_warehouse(draco_warehouse, tmp_path / "var")
    run_dbt(
        ["run", "--select", *DRACO_MODELS.split()],
        db,
        tmp_path / "var",
        {
            "draco_weight_override_rows": [
                {"item_id": i, "criterion_id": c, "weight": w, "reason": "cli file"}
                for (i, c), w in overrides.items()
            ]
        },
    )
    rescored = BuiltWarehouse(db, tmp_path / "var", draco_warehouse.run_ids, "")
    overridden = score_events(
        draco_fixture.events,
        draco_fixture.scored_run_id,
        weights=weight_rule(overrides=overrides),
        prices=seed_prices(),
    )
    expected_changes = _changed(oracle, overridden)
    assert expected_changes
    items = mart_items(rescored, draco_fixture.scored_run_id)
    for key, want in overridden.items():
        assert abs(items[key]["score"] - want.score) <= TOL, key
    before = mart_items(draco_warehouse, draco_fixture.scored_run_id)
    assert {
        k for k in items if abs(items[k]["score"] - before[k]["score"]) > TOL
    } == expected_changes
    rows = rescored.rows(
        "select weight, override_reason from marts.dim_rubric_criteria where is_overridden"
    )
    assert [(r["weight"], r["override_reason"]) for r in rows] == [(-30.0, "cli file")]


def test_weight_override_that_flips_a_sign_fails_the_build_readably(draco_warehouse, tmp_path):
    """A penalty overridden to a positive weight would earn points for a committed error: the
    build stops on the named data test (polarity stays the registered one)."""
    medicine = draco_warehouse.rows(
        "select item_id, criterion_id from marts.dim_rubric_criteria where registered_weight = -500"
    )[0]
    db = _copy_warehouse(draco_warehouse, tmp_path / "flip")
    flip = {"item_id": medicine["item_id"], "criterion_id": medicine["criterion_id"], "weight": 5}
    with pytest.raises(AssertionError, match="draco_weight_override_keeps_the_registered_sign"):
        run_dbt(
            [
                "build",
                *NO_UNIT_TESTS,
                "--select",
                "int_draco_weight_overrides",
                "int_draco_criteria_weighted",
            ],
            db,
            tmp_path / "flip",
            {"draco_weight_override_rows": [flip]},
        )
    # zeroing a penalty keeps the sign rule: the same build passes
    run_dbt(
        [
            "build",
            *NO_UNIT_TESTS,
            "--select",
            "int_draco_weight_overrides",
            "int_draco_criteria_weighted",
        ],
        db,
        tmp_path / "flip",
        {"draco_weight_override_rows": [{**flip, "weight": 0}]},
    )
