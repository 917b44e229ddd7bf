"""The scorecard (marts.vendor_scorecard, the Scorecard page, `bench scorecard`) on marts dbt
built from real events (tests/app/fixture_real_snapshot.py).

The winners are recounted here from the leaderboards and significance marts themselves (never
from the scorecard): latest run per family, the regime its page opens on, best headline first,
the leaderboard's own test of winner vs runner-up.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_harness import APP_SCRIPT, TIMEOUT_S, snapshot_rows
from fixture_real_snapshot import RealSnapshot, install, real_snapshot
from streamlit.testing.v1 import AppTest

from tests.bench_cli import run_bench

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def real_source(tmp_path_factory: pytest.TempPathFactory) -> RealSnapshot:
    return real_snapshot(tmp_path_factory)


@pytest.fixture
def real(bench_home: Path, real_source: RealSnapshot) -> Path:
    return install(real_source, bench_home)


def latest_run(db: Path, board: str) -> str:
    frame = snapshot_rows(
        db,
        f"select distinct b.run_id, r.started_at from marts.{board} b "
        "left join marts.dim_runs r using (run_id)",
    )
    frame = frame.sort_values(["started_at", "run_id"], ascending=[False, True], na_position="last")
    return str(frame.iloc[0]["run_id"])


def ranked(rows: list[tuple[str, float]]) -> list[tuple[str, float]]:
    return sorted(rows, key=lambda row: (-row[1], row[0]))


def recount(db: Path) -> dict[str, dict]:
    """{family: {winner, runner_up, margin, significant, p}} from the leaderboards alone."""
    expected: dict[str, dict] = {}

    run = latest_run(db, "qa_leaderboard")
    board = snapshot_rows(db, "select * from marts.qa_leaderboard where run_id = ?", [run])
    graders = board.groupby("grader_id")["grader_official"].all().reset_index()
    grader = sorted(graders.itertuples(), key=lambda g: (not g.grader_official, g.grader_id))[0]
    board = board[board["grader_id"] == grader.grader_id]
    systems = json.loads(
        snapshot_rows(db, "select systems from marts.dim_runs where run_id = ?", [run]).iloc[0, 0]
    )
    answer_lanes = {
        s["name"] for s in systems if (s.get("settings") or {}).get("lane_kind") == "vendor_answer"
    }
    tests = snapshot_rows(
        db,
        "select * from marts.fct_qa_significance where run_id = ? and grader_id = ? "
        "and metric = 'accuracy'",
        [run, grader.grader_id],
    )
    for family, in_family in (("qa_search", False), ("qa_answer", True)):
        rows = board[board["lane"].isin(answer_lanes) == in_family]
        if rows.empty:
            continue
        order = ranked(list(zip(rows["lane"], rows["strict_accuracy"], strict=True)))
        entry = {"run_id": run, "winner": order[0][0], "top": order[0][1], "runner_up": None}
        entry["margin"] = None
        entry.update(significant=None, p=None, n=len(order))
        if len(order) > 1:
            (a, score_a), (b, score_b) = order[0], order[1]
            entry.update(runner_up=b, margin=score_a - score_b)
            pair = tests[
                ((tests["lane"] == a) & (tests["baseline_lane"] == b))
                | ((tests["lane"] == b) & (tests["baseline_lane"] == a))
            ]
            if not pair.empty and pair.iloc[0]["p_adjusted"] == pair.iloc[0]["p_adjusted"]:
                entry.update(
                    significant=bool(pair.iloc[0]["significant"]),
                    p=float(pair.iloc[0]["p_adjusted"]),
                )
        expected[family] = entry

    run = latest_run(db, "draco_leaderboard")
    board = snapshot_rows(db, "select * from marts.draco_leaderboard where run_id = ?", [run])
    judges = board.groupby("judge_id")["judge_official"].all().reset_index()
    judge = sorted(judges.itertuples(), key=lambda j: (not j.judge_official, j.judge_id))[0]
    board = board[board["judge_id"] == judge.judge_id]
    order = ranked([(r.lane, 100 * r.score_mean) for r in board.itertuples()])
    entry = {"run_id": run, "winner": order[0][0], "top": order[0][1], "runner_up": None}
    entry["margin"] = None
    entry.update(significant=None, p=None, n=len(order))
    if len(order) > 1:
        (a, score_a), (b, score_b) = order[0], order[1]
        pair = snapshot_rows(
            db,
            "select * from marts.fct_draco_significance where run_id = ? and judge_id = ? "
            "and lane_a = ? and lane_b = ?",
            [run, judge.judge_id, min(a, b), max(a, b)],
        )
        entry.update(runner_up=b, margin=score_a - score_b)
        if not pair.empty:
            entry.update(
                significant=bool(pair.iloc[0]["significant"]),
                p=float(pair.iloc[0]["p_ttest_adjusted"]),
            )
    expected["deep_research"] = entry

    run = latest_run(db, "extraction_leaderboard")
    board = snapshot_rows(db, "select * from marts.extraction_leaderboard where run_id = ?", [run])
    order = ranked(list(zip(board["system"], board["composite"], strict=True)))
    expected["extraction"] = {
        "run_id": run,
        "winner": order[0][0],
        "top": order[0][1],
        "runner_up": order[1][0],
        "margin": order[0][1] - order[1][1],
        "significant": None,
        "p": None,
        "n": len(order),
    }
    # the leaderboard's own rank agrees (within one run of one dataset)
    assert board.sort_values("rank_composite").iloc[0]["system"] == order[0][0]
    return expected


def test_scorecard_winners_equal_an_independent_recount_of_the_leaderboards(real: Path):
    expected = recount(real)
    card = snapshot_rows(real, "select * from marts.vendor_scorecard")
    assert set(card["family"]) == set(expected)  # the fixture has no live-extraction run
    for family, want in expected.items():
        rows = card[card["family"] == family]
        assert len(rows) == want["n"], family
        assert set(rows["run_id"]) == {want["run_id"]}, family
        winner = rows[rows["is_winner"]]
        assert list(winner["product"]) == [want["winner"]], family
        top = winner.iloc[0]
        assert top["winner"] == want["winner"]
        assert top["headline"] == pytest.approx(want["top"], abs=1e-12), family
        if want["runner_up"] is None:
            assert top["runner_up"] is None or top["runner_up"] != top["runner_up"]
            continue
        assert top["runner_up"] == want["runner_up"], family
        assert top["margin"] == pytest.approx(want["margin"], abs=1e-12), family
        if want["significant"] is None:
            assert top["margin_significant"] is None or str(top["margin_significant"]) == "<NA>"
        else:
            assert bool(top["margin_significant"]) == want["significant"], family
            assert top["margin_p_adjusted"] == pytest.approx(want["p"]), family
    # on this fixture: QA's winner is the baseline lane, so its test is the leaderboard's own
    assert expected["qa_search"]["winner"] == "local-bm25"
    assert expected["qa_search"]["significant"] is True


def test_every_scorecard_row_carries_its_leaderboard_lineage(real: Path):
    card = snapshot_rows(real, "select * from marts.vendor_scorecard")
    boards = {
        "qa_search": ("qa_leaderboard", "lane", "grader_id"),
        "deep_research": ("draco_leaderboard", "lane", "judge_id"),
        "extraction": ("extraction_leaderboard", "system", None),
    }
    for row in card.itertuples():
        table, key, regime = boards[row.family]
        where = f"run_id = ? and {key} = ?" + (f" and {regime} = ?" if regime else "")
        params = [row.run_id, row.product] + ([row.regime] if regime else [])
        source = snapshot_rows(real, f"select event_ids from marts.{table} where {where}", params)
        assert list(row.event_ids) == list(source.iloc[0]["event_ids"])
        assert len(row.event_ids) > 0
        started = snapshot_rows(
            real, "select run_started_event_id from marts.dim_runs where run_id = ?", [row.run_id]
        )
        assert row.run_started_event_id == started.iloc[0, 0]


def test_scorecard_page_names_each_winner_with_human_labels_and_no_none(real: Path):
    expected = recount(real)
    at = AppTest.from_file(str(APP_SCRIPT), default_timeout=TIMEOUT_S)
    at.switch_page("app_pages/scorecard.py").run()
    assert not at.exception, at.exception
    assert at.title[0].value.startswith("Scorecard")
    text = " ".join(m.value for m in at.markdown)
    for want in expected.values():
        assert f"**{want['winner']}**" in text.replace("\\", "")
    assert "significant (adjusted p = 0.0051)" in text
    assert "only product measured" in text  # deep research has one system here
    assert "less than 0.001" in text or "by 0." in text
    subheaders = [s.value for s in at.subheader]
    assert subheaders == [
        "Question answering: search lanes",
        "Deep research (DRACO)",
        "Extraction",
    ]
    assert len(at.dataframe) == 3
    for frame in at.dataframe:
        shown = frame.value
        assert all(" " in c or c[:1].isupper() or c[:1].isdigit() for c in shown.columns), list(
            shown.columns
        )
        assert not any("_" in c for c in shown.columns)
        cells = shown.astype(str).to_numpy().ravel().tolist()
        assert not [c for c in cells if c in ("None", "nan", "NaN", "<NA>") or c.startswith("{")]
        assert all(url.startswith("/") for url in shown["Leaderboard"])
    qa_links = at.dataframe[0].value["Leaderboard"].tolist()
    assert all(url.startswith("/qa_leaderboard?run=") and "grader=" in url for url in qa_links)
    extraction = at.dataframe[2].value
    assert set(extraction["95 % CI"]) == {"—"}  # the composite has no interval
    assert set(extraction["Cost per task"]) == {"—"}  # local engines: no price recorded


def test_overview_links_the_scorecard(real: Path):
    at = AppTest.from_file(str(APP_SCRIPT), default_timeout=TIMEOUT_S).run()
    assert not at.exception, at.exception
    # page_link elements are not exposed by AppTest; the page source is what links it
    assert "app_pages/scorecard.py" in (APP_SCRIPT.parent / "app_pages" / "overview.py").read_text()


def test_bench_scorecard_prints_each_family_winner(real: Path, bench_home: Path):
    expected = recount(real)
    proc = run_bench(None, "scorecard", "--home", str(bench_home), env={"COLUMNS": "200"})
    assert "local-bm25 wins by 0.600 over closed-book (significant, adjusted p = 0.0051)" in (
        proc.stdout
    )
    for want in expected.values():
        assert want["winner"] in proc.stdout
    assert "None" not in proc.stdout and "nan" not in proc.stdout


def test_bench_scorecard_without_a_snapshot_is_exit_2_naming_the_file(bench_home: Path):
    proc = run_bench(None, "scorecard", "--home", str(bench_home), check=False)
    assert proc.returncode == 2
    assert "serve.duckdb" in proc.stderr
