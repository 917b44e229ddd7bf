"""The Runs and Overview pages on a finished live-URL run (the loopback run of conftest.py, its
marts and dim_runs built by dbt): every count recounted here from the marts with DuckDB.

A finished live run used to show 0 items, 0 systems and "is it still running?" on the Runs page,
and the Overview left the family out."""

from __future__ import annotations

import duckdb
import pytest
from streamlit.testing.v1 import AppTest

from tests.live_extraction.conftest import REPO_ROOT, publish_live

pytestmark = pytest.mark.slow


@pytest.fixture
def live_home(live_build, tmp_path, monkeypatch):
    home = tmp_path / "home"
    # the live marts are built; add the marts every page of the app needs (REQUIRED_TABLES),
    # empty of extraction rows here, and dim_runs, which the Runs page lists
    required = "+dim_runs +fct_extraction_pages +extraction_leaderboard dim_scoring_vars"
    db = publish_live(live_build, home, required)
    monkeypatch.setenv("BENCH_HOME", str(home))
    return db


def rows(db, sql: str, params: list | None = None) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql, params or []).fetchall()


def open_page(page: str, query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(REPO_ROOT / "app" / "streamlit_app.py"), default_timeout=60).run()
    at.switch_page(f"app_pages/{page}.py")
    if query:
        at.query_params.update(query)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_runs_page_counts_a_finished_live_run_from_its_marts(live_build, live_home):
    (run_id,) = {
        r for (r,) in rows(live_home, "select distinct run_id from marts.fct_live_extraction_pages")
    }
    recount = {
        system: (items, completed, failed, missing)
        for system, items, completed, failed, missing in rows(
            live_home,
            "select system, count(distinct item_id), "
            "count(distinct item_id) filter (where outcome = 'completed'), "
            "count(distinct item_id) filter (where outcome = 'failed'), "
            "count(distinct item_id) filter (where outcome = 'missing') "
            "from marts.fct_live_extraction_pages where run_id = ? group by system",
            [run_id],
        )
    }
    assert len(recount) == len(live_build.plan.systems) > 1
    ((status, registered, completed, failed),) = rows(
        live_home,
        "select status, n_items_registered, n_completed, n_failed from marts.dim_runs "
        "where run_id = ?",
        [run_id],
    )
    assert status == "finished"
    assert registered == max(v[0] for v in recount.values()) > 0
    assert (completed, failed) == (
        sum(v[1] for v in recount.values()),
        sum(v[2] for v in recount.values()),
    )

    at = open_page("runs", {"run": run_id})
    metrics = {m.label: m.value for m in at.metric}
    assert metrics, [e.value for e in (*at.info, *at.error, *at.warning)]
    assert metrics["Items"] == str(max(v[0] for v in recount.values()))
    assert metrics["Systems"] == str(len(recount))
    assert metrics["Completed"] == str(sum(v[1] for v in recount.values()))
    assert metrics["Failed"] == str(sum(v[2] for v in recount.values()))
    (per_system,) = [d.value for d in at.dataframe if "n_completed" in d.value.columns]
    shown = {
        row["system"]: (row["n_items"], row["n_completed"], row["n_failed"], row["n_missing"])
        for row in per_system.to_dict(orient="records")
    }
    assert shown == recount
    assert set(per_system["family"]) == {"live extraction"}
    assert not any("still running" in i.value for i in at.info)

    overview = open_page("overview")
    (families,) = [d.value for d in overview.dataframe if "family" in d.value.columns]
    live = families.set_index("family").loc["live extraction"]
    ((n_runs, n_systems, n_pairs),) = rows(
        live_home,
        "select count(distinct run_id), count(distinct system), "
        "count(distinct (run_id, system, item_id)) from marts.fct_live_extraction_pages",
    )
    assert (live["runs"], live["systems"], live["items"]) == (n_runs, n_systems, n_pairs)
    (runs_table,) = [d.value for d in overview.dataframe if "run_id" in d.value.columns]
    live_run = runs_table.set_index("run_id").loc[run_id]
    assert live_run["n_items_registered"] == registered and live_run["status"] == "finished"
    assert any("live_extraction" in str(link.proto.page) for link in overview.get("page_link")), (
        "the overview links the live-URL page"
    )
