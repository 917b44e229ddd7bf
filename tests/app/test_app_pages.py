"""One AppTest per page, run through the real `st.navigation` entry point.

Expectations are read from the snapshot itself (plain DuckDB, contract columns only), so the same
tests hold for the fixture and for another published snapshot (`BENCH_APP_SNAPSHOT`). Checks that
need the fixture's planted rows call `serve_snapshot.require_fixture()`; their numbers come from
the stored events through an independent oracle (tests/app/event_oracle.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import event_oracle
import pytest
from app_harness import PAGES, REPO_ROOT, ServeSnapshot, open_page, snapshot_rows
from fixture_app_snapshot import MALICIOUS, extraction_argv
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.slow  # the real snapshot: runners -> dlt -> dbt -> publish


def every_text(at: AppTest) -> str:
    parts = [
        e.value
        for kind in ("text", "code", "caption", "info", "warning", "success")
        for e in getattr(at, kind)
    ]
    return "\n".join(str(p) for p in parts)


# --- empty states ------------------------------------------------------------------------------


@pytest.mark.parametrize("page", list(PAGES))
def test_no_snapshot_shows_bench_demo_hint(bench_home: Path, page: str) -> None:
    at = open_page(page)
    assert any("bench demo" in i.value for i in at.info), [i.value for i in at.info]
    assert not at.dataframe
    assert str(bench_home / "serve.duckdb") in every_text(at)


@pytest.mark.parametrize("page", list(PAGES))
def test_snapshot_without_rows_shows_bench_demo_hint(empty_snapshot: Path, page: str) -> None:
    at = open_page(page)
    assert any("bench demo" in i.value for i in at.info), [i.value for i in at.info]
    assert not at.dataframe


def test_unreadable_snapshot_is_a_message_not_a_traceback(bench_home: Path) -> None:
    (bench_home / "serve.duckdb").write_bytes(b"this is not a duckdb file" * 100)
    at = open_page("leaderboard")
    assert any("bench demo" in e.value for e in at.error)
    assert not at.dataframe


# --- overview ----------------------------------------------------------------------------------


def test_overview_counts(serve_snapshot: ServeSnapshot) -> None:
    db = serve_snapshot.serve_db
    expected = snapshot_rows(
        db,
        "select (select count(*) from marts.dim_runs) as runs, "
        "(select count(*) from marts.fct_extraction_pages) as pages",
    ).iloc[0]
    at = open_page("overview")
    assert [t.value for t in at.title] == ["Bench warehouse"]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Runs"] == str(expected["runs"])
    assert metrics["Scored pages"] == str(expected["pages"])
    runs_table = next(d.value for d in at.dataframe if "run_id" in d.value)
    assert set(runs_table["run_id"]) == set(
        snapshot_rows(db, "select run_id from marts.dim_runs")["run_id"]
    )


# --- leaderboard -------------------------------------------------------------------------------


def test_leaderboard_every_dataset_in_composite_order(serve_snapshot: ServeSnapshot) -> None:
    db = serve_snapshot.serve_db
    datasets = snapshot_rows(
        db, "select distinct dataset_sha256 from marts.extraction_leaderboard"
    )["dataset_sha256"].tolist()
    at = open_page("leaderboard")
    assert [t.value for t in at.title] == ["Extraction leaderboard"]
    assert set(at.selectbox[0].options) == {at.selectbox[0].format_func(d) for d in datasets}

    for sha in datasets:
        at.selectbox[0].set_value(sha).run()
        assert not at.exception
        expected = snapshot_rows(
            db,
            "select * from marts.extraction_leaderboard where dataset_sha256 = ? "
            "order by composite desc, system",
            [sha],
        )
        table = at.dataframe[0].value
        assert table["System"].tolist() == expected["system"].tolist()
        assert table["Composite"].tolist() == pytest.approx(expected["composite"].tolist())
        assert table["Composite"].is_monotonic_decreasing
        assert table["Rank"].tolist() == expected["rank_composite"].tolist()
        top = expected.iloc[0]
        assert table["Shingle F1"].iloc[0] == f"{top.shingle_f1:.3f} ± {top.shingle_f1_std:.3f}"

        metrics = {m.label: m.value for m in at.metric}
        assert metrics["Composite"] == f"{top.composite:.3f}"
        assert metrics["Shingle F1"] == f"{top.shingle_f1:.3f}"
        assert metrics["Completeness"] == f"{top.completeness:.3f}"
        assert metrics["Useful success"] == f"{top.useful_success_rate:.3f}"
        assert metrics["p95 latency (s)"] == f"{top.latency_p95_s:.2f}"
        assert any(t.value.startswith(f"{top.system} {top.system_version}") for t in at.text)

        weight_columns = [c for c in expected.columns if c.startswith("w_")]
        weight_sets = expected[[*weight_columns, "useful_success_threshold"]].drop_duplicates()
        weights = at.dataframe[1].value
        if len(weight_sets) == 1:  # one weight set for the whole dataset, shown as one row
            assert weights.iloc[0].tolist() == pytest.approx([top[c] for c in weight_columns])
            assert metrics["Useful-success threshold"] == f"{top.useful_success_threshold:.2f}"
        else:
            assert len(weights) == len(weight_sets)
        caption = " ".join(c.value for c in at.caption).replace("\\", "")
        assert f"seed {int(top.bootstrap_seed)}" in caption
        assert f"{int(top.bootstrap_samples)} bootstrap resamples" in caption


def test_leaderboard_values_equal_the_oracle_over_the_events(
    serve_snapshot: ServeSnapshot,
) -> None:
    fixture = serve_snapshot.require_fixture()
    expected = event_oracle.extraction_leaderboard(
        serve_snapshot.serve_db, fixture.extraction_runs["app-articles"]
    )
    order = sorted(expected, key=lambda system: (-expected[system]["composite"], system))
    at = open_page("leaderboard")
    at.selectbox[0].set_value(fixture.dataset_sha256["app-articles"]).run()
    table = at.dataframe[0].value
    assert table["System"].tolist() == order
    assert table["Composite"].tolist() == pytest.approx([expected[s]["composite"] for s in order])
    assert table["Rank"].tolist() == [expected[s]["rank_composite"] for s in order]
    assert table["Failed"].tolist() == [expected[s]["n_failed"] for s in order]
    assert expected[fixture.failed["system"]]["n_failed"] == 1  # the one refused page
    metrics = {m.label: m.value for m in at.metric}
    top = expected[order[0]]
    assert metrics["Composite"] == f"{top['composite']:.3f}"
    assert metrics["Completeness"] == f"{top['completeness']:.3f}"
    assert metrics["Useful-success threshold"] == "0.30"  # dbt_project.yml's default


# --- runs --------------------------------------------------------------------------------------


def test_runs_page_lists_spec_provenance_and_every_failure(serve_snapshot: ServeSnapshot) -> None:
    db = serve_snapshot.serve_db
    runs = snapshot_rows(db, "select * from marts.dim_runs")
    at = open_page("runs")
    assert [t.value for t in at.title] == ["Runs"]
    for run in runs.itertuples():
        at.selectbox[0].set_value(run.run_id).run()
        assert not at.exception
        assert at.query_params["run"] == run.run_id
        metrics = {m.label: m.value for m in at.metric}
        grid = snapshot_rows(
            db,
            "select coalesce(max(n), 0) as items, coalesce(sum(failed), 0) as failed from ("
            "select system, count(distinct item_id) as n, count(*) filter "
            "(where outcome = 'failed') as failed from marts.fct_extraction_pages "
            "where run_id = ? group by system union all "
            "select lane, count(distinct item_id), count(distinct item_id) filter "
            "(where outcome = 'failed') from marts.fct_qa_answers "
            "where run_id = ? group by lane)",
            [run.run_id, run.run_id],
        ).iloc[0]
        # the grid of the run's family mart (dim_runs has no item count for every family)
        items = int(grid["items"]) or int(run.n_items_registered)
        assert metrics["Items"] == str(items)
        assert metrics["Failed"] == str(int(grid["failed"]))

        provenance_table = next(d.value for d in at.dataframe if "Field" in d.value)
        provenance = dict(zip(provenance_table["Field"], provenance_table["Value"], strict=True))
        assert provenance["package_version"] == str(run.package_version)
        assert provenance["git_sha"] == str(run.git_sha)
        assert provenance["config_sha256"] == str(run.config_sha256)
        assert at.json[0].value is not None and json.loads(at.json[0].value) == json.loads(run.spec)

        failures = snapshot_rows(
            db,
            "select system, item_id, error_class from marts.fct_extraction_pages "
            "where run_id = ? and outcome <> 'completed' order by system, item_id",
            [run.run_id],
        )
        listed = [d.value for d in at.dataframe if "error_message" in d.value]
        if failures.empty:
            assert not listed
            if int(grid["failed"]):  # a QA failure: its error is on the QA lineage page
                assert any("lineage page" in w.value for w in at.warning)
            else:
                assert at.success
            continue
        shown = listed[0]
        assert sorted(zip(shown["system"], shown["item_id"], strict=True)) == sorted(
            zip(failures["system"], failures["item_id"], strict=True)
        )
        assert all(link.startswith("item_lineage?") and "run=" in link for link in shown["lineage"])
        classes = next(
            d.value for d in at.dataframe if "n_items" in d.value and "outcome" in d.value
        )
        for error_class in failures["error_class"].dropna():
            assert error_class in set(classes["error_class"])


def test_runs_page_shows_the_fixture_failure(serve_snapshot: ServeSnapshot) -> None:
    fixture = serve_snapshot.require_fixture()
    at = open_page("runs", {"run": fixture.failed["run"]})
    assert at.selectbox[0].value == fixture.failed["run"]
    failures = next(d.value for d in at.dataframe if "error_message" in d.value)
    row = failures.set_index(["system", "item_id"]).loc[
        (fixture.failed["system"], fixture.failed["item"])
    ]
    (event,) = [
        p
        for p in event_oracle.payloads(
            serve_snapshot.serve_db, "extraction_failed", fixture.failed["run"]
        )
        if (p["system"], p["item_id"]) == (fixture.failed["system"], fixture.failed["item"])
    ]
    assert row["error_class"] == event["error_class"] == fixture.failed["error_class"]
    assert row["error_message"] == event["error_message"] == "Document is empty"  # lxml's words
    assert " ".join(extraction_argv("app-articles")) in [c.value for c in at.code]


# --- item lineage ------------------------------------------------------------------------------


def lineage_params(db: Path, **where: str) -> dict[str, Any]:
    sql = "select * from marts.fct_extraction_pages"
    if where:
        sql += " where " + " and ".join(f"{k} = ?" for k in where)
    row = snapshot_rows(
        db, sql + " order by run_id, system, position limit 1", list(where.values())
    )
    return row.iloc[0].to_dict()


def test_lineage_deep_link_shows_score_events_output_and_truth(
    serve_snapshot: ServeSnapshot,
) -> None:
    db = serve_snapshot.serve_db
    page = lineage_params(db, outcome="completed")
    at = open_page(
        "lineage", {"run": page["run_id"], "system": page["system"], "item": page["item_id"]}
    )
    assert [t.value for t in at.title] == ["Item lineage"]
    assert [s.value for s in at.selectbox] == [page["run_id"], page["system"], page["item_id"]]
    assert at.query_params == {
        "run": page["run_id"],
        "system": page["system"],
        "item": page["item_id"],
    }

    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Completeness"] == f"{page['completeness']:.3f}"
    assert metrics["Token F1"] == f"{page['token_f1']:.3f}"

    events = snapshot_rows(
        db,
        "select * from marts.dim_events where event_id in (?, ?) order by occurred_at",
        [page["item_event_id"], page["extraction_event_id"]],
    )
    shown = next(d.value for d in at.dataframe if "event_id" in d.value)
    assert shown["event_id"].tolist() == events["event_id"].tolist()
    assert shown["content_sha256"].tolist() == events["content_sha256"].tolist()
    assert shown["prev_sha256"].tolist() == events["prev_sha256"].tolist()
    assert shown["segment_line"].tolist() == [
        f"{s}:{n}" for s, n in zip(events["segment"], events["line_no"], strict=True)
    ]
    assert at.success  # extraction_content_sha256 matches the event

    codes = [c.value for c in at.code]
    assert page["output_text"] in codes
    truth = json.loads(events.loc[events["event_type"] == "item_registered", "payload"].iloc[0])[
        "ground_truth_text"
    ]
    assert truth in codes


def test_lineage_shows_provider_html_as_inert_text(serve_snapshot: ServeSnapshot) -> None:
    fixture = serve_snapshot.require_fixture()
    at = open_page("lineage", fixture.malicious)
    codes = [c.value for c in at.code]
    assert sum(MALICIOUS in c for c in codes) == 2  # the raw output and the ground truth
    # Nothing that renders Markdown or HTML carries the payload.
    for kind in (
        "markdown",
        "caption",
        "info",
        "warning",
        "error",
        "success",
        "title",
        "subheader",
    ):
        for element in getattr(at, kind):
            assert "<script" not in element.value and "onerror" not in element.value, kind
    assert not at.get("html")
    payloads = [json.loads(j.value) for j in at.json]
    assert any(p["payload"].get("output_text", "").count(MALICIOUS) for p in payloads)


def test_lineage_failed_item_shows_the_error(serve_snapshot: ServeSnapshot) -> None:
    fixture = serve_snapshot.require_fixture()
    at = open_page(
        "lineage",
        {
            "run": fixture.failed["run"],
            "system": fixture.failed["system"],
            "item": fixture.failed["item"],
        },
    )
    assert any("did not complete" in t.value for t in at.text)
    assert any(c.value.startswith(fixture.failed["error_class"]) for c in at.code)
    shown = next(d.value for d in at.dataframe if "event_id" in d.value)
    assert set(shown["event_type"]) == {"item_registered", "extraction_failed"}


def test_lineage_unknown_link_values_fall_back_without_sql_injection(
    serve_snapshot: ServeSnapshot,
) -> None:
    db = serve_snapshot.serve_db
    at = open_page(
        "lineage", {"run": "' or 1=1 --", "system": "x'); drop table marts.dim_runs; --"}
    )
    assert any("not in this snapshot" in w.value for w in at.warning)
    runs = set(snapshot_rows(db, "select run_id from marts.fct_extraction_pages")["run_id"])
    assert at.selectbox[0].value in runs
    assert at.selectbox[0].options[0].startswith(at.selectbox[0].value)  # the first (newest) run
    assert snapshot_rows(db, "select count(*) as n from marts.dim_runs").iloc[0]["n"] > 0


def test_lineage_selecting_another_item_updates_the_link(serve_snapshot: ServeSnapshot) -> None:
    at = open_page("lineage")
    run_id, system = at.selectbox[0].value, at.selectbox[1].value
    items = snapshot_rows(
        serve_snapshot.serve_db,
        "select item_id from marts.fct_extraction_pages where run_id = ? and system = ? "
        "order by position, item_id",
        [run_id, system],
    )["item_id"].tolist()
    if len(items) < 2:
        pytest.skip("the newest run has a single item for its first system")
    at.selectbox[2].set_value(items[-1]).run()
    assert not at.exception
    assert at.selectbox[2].value == items[-1]
    assert at.query_params == {"run": run_id, "system": system, "item": items[-1]}
    assert any(f"item {items[-1]}" in t.value for t in at.text)


# --- the app's own rules -----------------------------------------------------------------------


def test_app_never_renders_raw_html_and_keeps_sql_in_data_py() -> None:
    sources = {p: p.read_text() for p in (REPO_ROOT / "app").rglob("*.py")}
    for path, text in sources.items():
        assert "unsafe_allow_html" not in text, path
        assert not re.search(r"\bst\.html\s*\(", text), path
        assert "cache_resource" not in text, path
        if path.parent.name != "data":  # app/data/, one module per family
            assert not re.search(r"\bselect\b[\s\S]{0,200}\bfrom\s+marts\.", text, re.I), path
            assert not re.search(r"^\s*(import|from) duckdb", text, re.M), path
