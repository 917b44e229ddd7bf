"""The item browser (app/app_pages/item_browser.py) and the item pickers of the lineage pages, on
marts dbt built from real events (tests/app/fixture_real_snapshot.py: QA on two lanes, deep
research under an offline judge and a two-sample flaky rejudge, extraction on four engines).

Every expectation is recounted here from the marts with plain DuckDB and Python (never through
app.data): the matrix cells and their outcome counts, which items each filter keeps, the search,
the ids each cell links to, and that following a link opens that very row's lineage.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest
from app_harness import APP_SCRIPT, TIMEOUT_S, snapshot_rows
from fixture_real_snapshot import RealSnapshot, install, real_snapshot
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.slow

BROWSER = "app_pages/item_browser.py"


@pytest.fixture(scope="session")
def real_source(tmp_path_factory: pytest.TempPathFactory) -> RealSnapshot:
    return real_snapshot(tmp_path_factory)


@pytest.fixture
def real(bench_home: Path, real_source: RealSnapshot) -> Path:
    return install(real_source, bench_home)


def open_page(page: str, params: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(APP_SCRIPT), default_timeout=TIMEOUT_S).run()
    assert not at.exception, at.exception
    at.switch_page(page)
    at.query_params.update(params or {})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def rerun(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def matrix(at: AppTest, item_column: str) -> pd.DataFrame | None:
    frames = [d.value for d in at.dataframe if item_column in d.value.columns]
    return frames[0] if frames else None


def counts_table(at: AppTest) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if "Outcome" in d.value.columns)


def split_cell(cell: str) -> tuple[str, dict[str, str], str]:
    """(path, query params, shown text) of one matrix cell (a link whose fragment is shown)."""
    parts = urlsplit(cell)
    params = {k: v[0] for k, v in parse_qs(parts.query).items()}
    return parts.path, params, parts.fragment


def shown_items(frame: pd.DataFrame | None, item_column: str) -> list[str]:
    return [] if frame is None else list(frame[item_column])


# --- question answering ------------------------------------------------------------------------


def latest_run(db: Path, table: str) -> str:
    """The run a picker opens on: the newest run that has rows in `table`."""
    frame = snapshot_rows(
        db,
        f"select run_id from marts.dim_runs where run_id in (select run_id from marts.{table}) "
        "order by started_at desc, run_id limit 1",
    )
    return str(frame.iloc[0, 0])


def qa_rows(db: Path) -> pd.DataFrame:
    """The answers of the newest QA run (the fixture may hold a series beside it)."""
    return snapshot_rows(
        db,
        "select run_id, lane, item_id, sample_order, problem, label, outcome, grader_id "
        "from marts.fct_qa_answers where run_id = ?",
        [latest_run(db, "fct_qa_answers")],
    )


def test_qa_matrix_cells_counts_and_links_equal_the_answers_mart(real: Path):
    rows = qa_rows(real)
    (run_id,) = set(rows["run_id"])
    (grader,) = set(rows["grader_id"].dropna())
    at = open_page(BROWSER, {"family": "qa"})
    assert at.title[0].value == "Item browser"
    assert at.selectbox(key="items_qa_run").value == run_id
    frame = matrix(at, "Question")
    lanes = sorted(set(rows["lane"]))
    assert list(frame.columns) == ["#", "Question", *lanes, "Share correct"]
    assert len(frame) == rows["item_id"].nunique() == 10

    for question in frame["Question"]:
        shown = frame[frame["Question"] == question].iloc[0]
        for lane in lanes:
            path, params, text = split_cell(shown[lane])
            want = rows[(rows["problem"] == question) & (rows["lane"] == lane)].iloc[0]
            assert path == "/qa_lineage"
            assert params == {
                "run": run_id,
                "lane": lane,
                "item": want["item_id"],
                "grader": grader,
            }, (question, lane)
            label = want["label"] if isinstance(want["label"], str) else want["outcome"]
            assert text == label.replace("_", " ")
        answers = rows[rows["problem"] == question]
        assert shown["Share correct"] == pytest.approx((answers["label"] == "correct").mean())

    recount = rows.assign(
        shown=[
            (label if isinstance(label, str) else outcome).replace("_", " ")
            for label, outcome in zip(rows["label"], rows["outcome"], strict=True)
        ]
    ).pivot_table(index="shown", columns="lane", values="item_id", aggfunc="count", fill_value=0)
    counts = counts_table(at).set_index("Outcome")
    assert counts.to_dict() == recount.to_dict()
    assert 0 < counts.loc["correct", "local-bm25"] < 10  # the fixture's lanes get some right
    cells = frame.astype(str).to_numpy().ravel().tolist()
    assert not [c for c in cells if c in ("None", "nan", "<NA>") or c.startswith("{")]


def test_qa_filters_keep_exactly_the_recounted_questions(real: Path):
    rows = qa_rows(real)
    correct = rows.assign(ok=rows["label"] == "correct").groupby("problem")["ok"]
    order = rows.groupby("problem")["sample_order"].min().sort_values()
    in_order = list(order.index)
    not_all_correct = [q for q in in_order if not correct.all()[q]]
    split = [q for q in in_order if correct.any()[q] and not correct.all()[q]]
    worst_first = sorted(in_order, key=lambda q: (correct.mean()[q], order[q]))

    at = open_page(BROWSER, {"family": "qa"})
    at.checkbox(key="items_failed").check()
    assert shown_items(matrix(rerun(at), "Question"), "Question") == not_all_correct
    at.checkbox(key="items_failed").uncheck()
    at.checkbox(key="items_systems").check()
    assert shown_items(matrix(rerun(at), "Question"), "Question") == split
    assert 0 < len(split) < len(in_order)  # local-bm25 right, closed-book not attempted
    at.checkbox(key="items_systems").uncheck()
    at.checkbox(key="items_worst").check()
    assert shown_items(matrix(rerun(at), "Question"), "Question") == worst_first
    assert at.checkbox(key="items_samples").disabled  # QA answers are graded once


def test_search_finds_a_question_by_a_word_of_it_and_keeps_the_deep_link(real: Path):
    rows = qa_rows(real)
    question = next(q for q in rows["problem"] if "dictionary" in q)  # a demo question
    expected = sorted({q for q in rows["problem"] if "dictionary" in q.lower()})
    at = open_page(BROWSER, {"family": "qa"})
    at.text_input(key="items_search").input("Dictionary")
    rerun(at)
    shown = shown_items(matrix(at, "Question"), "Question")
    assert question in shown and sorted(shown) == expected
    assert at.query_params["q"] == "Dictionary"
    # a deep link with ?q= opens on the same search
    at = open_page(BROWSER, {"family": "qa", "q": "dictionary"})
    assert sorted(shown_items(matrix(at, "Question"), "Question")) == expected
    at.text_input(key="items_search").input("no question has this word xyzzy")
    rerun(at)
    assert matrix(at, "Question") is None
    assert any("No item matches" in i.value for i in at.info)


def test_a_qa_cell_link_opens_that_answer_on_the_lineage_page(real: Path):
    at = open_page(BROWSER, {"family": "qa"})
    frame = matrix(at, "Question")
    _path, params, text = split_cell(frame.iloc[7]["local-bm25"])
    lineage = open_page("app_pages/qa_lineage.py", params)
    assert not lineage.warning or all(
        "not in this snapshot" not in w.value for w in lineage.warning
    )
    values = [s.value for s in lineage.selectbox]
    assert values[:3] == [params["run"], params["lane"], params["item"]]
    assert f"label {text}" in " ".join(t.value for t in lineage.text)


# --- deep research -----------------------------------------------------------------------------


def draco_rows(db: Path) -> pd.DataFrame:
    return snapshot_rows(
        db,
        "select i.run_id, i.judge_id, i.lane, i.item_id, i.position, i.status, i.score, "
        "i.n_split, regexp_replace(trim(t.problem), '\\s+', ' ', 'g') as problem from marts.fct_draco_items i left join marts.dim_rubric_tasks t "
        "on t.dataset_sha256 = i.dataset_sha256 and t.item_id = i.item_id where i.run_id = ?",
        [latest_run(db, "fct_draco_items")],
    )


def test_draco_samples_disagree_filter_and_cells_per_judge_regime(real: Path):
    rows = draco_rows(real)
    regimes = sorted(set(rows["judge_id"]))
    assert len(regimes) == 2  # the offline judge (one sample) and the flaky rejudge (two)
    for judge in regimes:
        mine = rows[rows["judge_id"] == judge].sort_values("position")
        at = open_page(BROWSER, {"family": "draco", "judge": judge})
        assert at.selectbox(key="items_draco_judge").value == judge
        frame = matrix(at, "Task")
        assert len(frame) == len(mine)
        for row in mine.itertuples():
            shown = frame[frame["Task"] == row.problem].iloc[0]
            path, params, text = split_cell(shown[row.lane])
            assert path == "/draco_lineage"
            assert params == {
                "run": row.run_id,
                "judge": judge,
                "lane": row.lane,
                "item": row.item_id,
            }
            assert text == f"{100 * row.score:.1f}"  # every task is scored here
            assert shown["Criteria split"] == row.n_split
            assert shown["Mean score"] == pytest.approx(100 * row.score)
        counts = counts_table(at).set_index("Outcome")
        assert counts.to_dict() == (
            mine.pivot_table(
                index="status", columns="lane", values="item_id", aggfunc="count"
            ).to_dict()
        )
        at.checkbox(key="items_samples").check()
        split = list(mine.loc[mine["n_split"] > 0, "problem"])
        assert shown_items(matrix(rerun(at), "Task"), "Task") == split
        at.checkbox(key="items_samples").uncheck()
        at.checkbox(key="items_failed").check()
        assert shown_items(matrix(rerun(at), "Task"), "Task") == list(
            mine.loc[mine["status"] != "scored", "problem"]
        )
    # the flaky regime's two samples disagree on some criteria, the single offline sample never
    assert (rows.groupby("judge_id")["n_split"].sum() > 0).tolist().count(True) == 1


def test_a_draco_cell_link_opens_that_task_on_the_lineage_page(real: Path):
    rows = draco_rows(real)
    judge = sorted(set(rows["judge_id"]))[-1]
    at = open_page(BROWSER, {"family": "draco", "judge": judge})
    frame = matrix(at, "Task")
    _path, params, _text = split_cell(frame.iloc[2]["local-rag"])
    lineage = open_page("app_pages/draco_lineage.py", params)
    assert [s.value for s in lineage.selectbox][:4] == [
        params["run"],
        params["judge"],
        params["lane"],
        params["item"],
    ]


# --- extraction --------------------------------------------------------------------------------


def extraction_rows(db: Path) -> pd.DataFrame:
    rows = snapshot_rows(
        db,
        "select run_id, system, item_id, position, url, outcome, useful_success, "
        "page_precision, page_recall from marts.fct_extraction_pages where run_id = ?",
        [latest_run(db, "fct_extraction_pages")],
    )
    p, r = rows["page_precision"].astype(float), rows["page_recall"].astype(float)
    f1 = [
        2 * a * b / (a + b) if ok == "completed" and a + b > 0 else 0.0
        for a, b, ok in zip(p, r, rows["outcome"], strict=True)
    ]
    return rows.assign(f1=f1)


def test_extraction_disagreement_worst_first_and_url_search_equal_a_recount(real: Path):
    rows = extraction_rows(real)
    engines = sorted(set(rows["system"]))
    per_page = rows.groupby("url").agg(
        position=("position", "min"),
        spread=("f1", lambda s: s.max() - s.min()),
        mean=("f1", "mean"),
    )
    in_order = list(per_page.sort_values("position").index)
    at = open_page(BROWSER, {"family": "extraction"})
    frame = matrix(at, "Page URL")
    assert list(frame.columns) == ["#", "Page URL", *engines, "Mean shingle F1"]
    assert list(frame["Page URL"]) == in_order
    for row in rows.itertuples():
        shown = frame[frame["Page URL"] == row.url].iloc[0]
        path, params, text = split_cell(shown[row.system])
        assert path == "/item_lineage"
        assert params == {"run": row.run_id, "system": row.system, "item": row.item_id}
        assert text == (f"{row.f1:.3f}" if row.useful_success else f"{row.f1:.3f} · not useful")

    at.checkbox(key="items_systems").check()
    disagree = [u for u in in_order if per_page.loc[u, "spread"] >= 0.2]
    assert 0 < len(disagree) < len(in_order)  # boilerplate-keeping engines lose on some pages
    assert shown_items(matrix(rerun(at), "Page URL"), "Page URL") == disagree
    at.slider(key="items_extraction_spread").set_value(0.5)
    wider = [u for u in in_order if per_page.loc[u, "spread"] >= 0.5]
    assert shown_items(matrix(rerun(at), "Page URL"), "Page URL") == wider
    at.checkbox(key="items_systems").uncheck()
    at.checkbox(key="items_worst").check()
    worst = sorted(in_order, key=lambda u: (per_page.loc[u, "mean"], per_page.loc[u, "position"]))
    assert shown_items(matrix(rerun(at), "Page URL"), "Page URL")[:5] == worst[:5]
    at.text_input(key="items_search").input("reference/power")
    rerun(at)
    assert shown_items(matrix(at, "Page URL"), "Page URL") == [
        u for u in worst if "reference/power" in u
    ]


# --- the lineage pages' pickers ----------------------------------------------------------------


def test_lineage_pickers_show_the_question_task_or_url_not_the_id(real: Path):
    qa = qa_rows(real).set_index("item_id")["problem"].to_dict()
    draco = draco_rows(real).set_index("item_id")["problem"].to_dict()
    pages = extraction_rows(real).set_index("item_id")["url"].to_dict()
    for page, label, texts in (
        ("qa_lineage", "Question", qa),
        ("draco_lineage", "Task", draco),
        ("item_lineage", "Item", pages),
    ):
        at = open_page(f"app_pages/{page}.py")
        box = next(s for s in at.selectbox if s.label == label)
        assert len(box.options) == len(texts) > 1
        one_line = {" ".join(text.split())[:60] for text in texts.values()}
        for option in box.options:  # the labels shown, one per item of the run
            assert not any(item_id in option for item_id in texts), (page, option)
            assert any(prefix in option for prefix in one_line), (page, option)
        assert " ".join(texts[box.value].split())[:60] in box.format_func(box.value)
