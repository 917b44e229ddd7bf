"""`bench import draco-results --format csv` with `criterion_id` instead of `criterion_position`:
verdicts named by the DRACO dataset's criterion ids join the pinned rubric; unknown ids are all
listed with the file and line. The example file is docs/examples/draco_verdicts_by_id.csv, the
one docs/imports.md shows."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from collectors.draco.dataset import load_draco
from collectors.imports.draco_results import import_draco_results
from collectors.imports.source_file import ImportFormatError
from tests.bench_cli import run_bench
from warehouse.log import EventLog

REPO = Path(__file__).resolve().parents[2]
DRACO_JSONL = REPO / ".." / "shared" / "data" / "draco" / "test.jsonl"
EXAMPLE = REPO / "docs" / "examples" / "draco_verdicts_by_id.csv"


@pytest.fixture(scope="module")
def task_set():
    return load_draco(DRACO_JSONL)


def test_example_imports_by_id_through_the_cli(tmp_path, task_set):
    assert "docs/examples/draco_verdicts_by_id.csv" in (REPO / "docs" / "imports.md").read_text()
    proc = run_bench(
        tmp_path / "home", "import", "draco-results", str(EXAMPLE), "--format", "csv",
        "--system", "mine", "--judge-label", "gpt-5", "--no-score", cwd=REPO,
    )  # fmt: skip
    assert "99 absent tasks" in proc.stderr


def test_verdicts_join_the_rubric_by_id(tmp_path, task_set):
    rows = list(csv.DictReader(EXAMPLE.open(newline="")))
    task = next(t for t in task_set.tasks if t.item_id == rows[0]["task_id"])
    (summary,) = import_draco_results(
        EventLog(tmp_path / "log"), EXAMPLE, fmt="csv", system="mine", task_set=task_set,
        judge_label="gpt-5",
    )  # fmt: skip
    assert summary.completed == 1 and summary.failed == 0
    # the ids in the file are the rubric's, in any order: every criterion got its own verdict
    assert sorted(r["criterion_id"] for r in rows) == sorted(c.criterion_id for c in task.criteria)


def test_unknown_ids_are_all_listed_with_file_and_line(tmp_path, task_set):
    lines = EXAMPLE.read_text().splitlines()
    task_id = lines[1].split(",")[0]
    lines[2] = f"{task_id},no-such-criterion,MET,"
    lines[5] = f"{task_id},another-made-up-id,UNMET,"
    lines[7] = lines[7].replace(",MET,", ",PERHAPS,").replace(",UNMET,", ",PERHAPS,")
    path = tmp_path / "by_id.csv"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ImportFormatError) as caught:
        import_draco_results(
            EventLog(tmp_path / "log"), path, fmt="csv", system="s", task_set=task_set,
            judge_label="j",
        )  # fmt: skip
    message = str(caught.value)
    assert f"{path}: line 3: field criterion_id: task {task_id}: no rubric criterion" in message
    assert "no-such-criterion" in message and "another-made-up-id" in message
    assert f"{path}: line 6: field criterion_id:" in message
    assert f"{path}: line 8: field verdict:" in message
    assert not any((tmp_path / "log").rglob("*.jsonl")) or not any(
        p.stat().st_size for p in (tmp_path / "log").rglob("*.jsonl")
    )


def test_a_latency_column_is_the_task_figure_and_must_agree_within_a_task(tmp_path, task_set):
    rows = list(csv.DictReader(EXAMPLE.open(newline="")))
    path = tmp_path / "timed.csv"
    with path.open("w", newline="") as out:
        writer = csv.DictWriter(out, [*rows[0], "latency_s"])
        writer.writeheader()
        writer.writerows(
            {**row, "latency_s": "" if i % 2 else "84.5"} for i, row in enumerate(rows)
        )
    log = EventLog(tmp_path / "log")
    import_draco_results(
        log, path, fmt="csv", system="s", task_set=task_set, judge_label="j"
    )  # fmt: skip
    (figure,) = next(
        e["payload"]["item_figures"] for _, e in log.read()
        if e["event_type"] == "imported_file_registered"
    )  # fmt: skip
    assert figure["item_id"] == rows[0]["task_id"] and figure["latency_s"] == 84.5

    text = path.read_text().splitlines()
    text[3] = text[3][: text[3].rindex(",")] + ",90"
    text[5] = text[5][: text[5].rindex(",")] + ",fast"
    path.write_text("\n".join(text) + "\n")
    with pytest.raises(ImportFormatError) as caught:
        import_draco_results(
            EventLog(tmp_path / "log2"), path, fmt="csv", system="s", task_set=task_set,
            judge_label="j",
        )  # fmt: skip
    assert str(caught.value).splitlines()[1:] == [
        f"{path}: line 4: field latency_s: task {rows[0]['task_id']}: 90 differs from 84.5 on "
        "line 2 (one latency per task: its report's)",
        f"{path}: line 6: field latency_s: expected seconds (a number), got text 'fast'",
    ]


def _with_costs(tmp_path: Path, task_set) -> tuple[Path, dict[str, float | None]]:
    """The example (one task) plus two more tasks by criterion id, a `cost_usd` column: the
    example's task at 0.42 on its first row only, the second at 0.25 on every row, the third
    with none. Returns the file and each task's stated cost."""
    rows = list(csv.DictReader(EXAMPLE.open(newline="")))
    costs: dict[str, float | None] = {rows[0]["task_id"]: 0.42}
    out_rows = [{**row, "cost_usd": "0.42" if i == 0 else ""} for i, row in enumerate(rows)]
    others = [t for t in task_set.tasks if t.item_id not in costs][:2]
    for task, cost in zip(others, (0.25, None), strict=True):
        costs[task.item_id] = cost
        out_rows += [
            {
                "task_id": task.item_id,
                "criterion_id": criterion.criterion_id,
                "verdict": "MET",
                "justification": "",
                "cost_usd": "" if cost is None else str(cost),
            }
            for criterion in task.criteria
        ]
    path = tmp_path / "costed.csv"
    with path.open("w", newline="") as out:
        writer = csv.DictWriter(out, [*rows[0], "cost_usd"])
        writer.writeheader()
        writer.writerows(out_rows)
    return path, costs


def test_a_cost_column_is_the_task_figure_and_bad_cells_are_all_reported(tmp_path, task_set):
    path, costs = _with_costs(tmp_path, task_set)
    log = EventLog(tmp_path / "log")
    import_draco_results(log, path, fmt="csv", system="s", task_set=task_set, judge_label="j")
    (figures,) = [
        e["payload"]["item_figures"]
        for _, e in log.read()
        if e["event_type"] == "imported_file_registered"
    ]
    assert {f["item_id"]: f["cost_usd"] for f in figures} == costs

    text = path.read_text().splitlines()
    text[2] = text[2][: text[2].rindex(",")] + ",0.5"  # the first task's second row disagrees
    text[3] = text[3][: text[3].rindex(",")] + ",cheap"
    text[4] = text[4][: text[4].rindex(",")] + ",-1"
    path.write_text("\n".join(text) + "\n")
    with pytest.raises(ImportFormatError) as caught:
        import_draco_results(
            EventLog(tmp_path / "log2"), path, fmt="csv", system="s", task_set=task_set,
            judge_label="j",
        )  # fmt: skip
    task_id = next(iter(costs))
    assert str(caught.value).splitlines()[1:] == [
        f"{path}: line 3: field cost_usd: task {task_id}: 0.5 differs from 0.42 on line 2 "
        "(one cost per task: its report's)",
        f"{path}: line 4: field cost_usd: expected US dollars (a number), got text 'cheap'",
        f"{path}: line 5: field cost_usd: expected US dollars >= 0, got text '-1'",
    ]


@pytest.mark.slow  # ingest and a `dbt build` of the imported DRACO models (~40 s)
def test_a_cost_column_reaches_the_imported_marts(tmp_path, task_set):
    """fct_draco_imported_items.cost_usd is each task's stated cost; draco_imported_leaderboard
    averages the stated ones (a task without a cost is not free) — computed here from the file."""
    import duckdb
    from dbt_harness import NO_UNIT_TESTS, run_dbt

    from ingest.pipeline import ingest_log

    path, costs = _with_costs(tmp_path, task_set)
    log = EventLog(tmp_path / "log")
    (summary,) = import_draco_results(
        log, path, fmt="csv", system="s", task_set=task_set, judge_label="j"
    )
    db = tmp_path / "warehouse.duckdb"
    assert not ingest_log(log, db, tmp_path / "dlt").quarantined
    run_dbt(
        ["build", *NO_UNIT_TESTS, "--select", "+fct_draco_imported_items",
         "+draco_imported_leaderboard"],
        db,
        tmp_path,
    )  # fmt: skip
    stated = [c for c in costs.values() if c is not None]
    with duckdb.connect(str(db), read_only=True) as con:
        items = dict(
            con.execute(
                "select item_id, cost_usd from marts.fct_draco_imported_items where run_id = ?",
                [summary.run_id],
            ).fetchall()
        )
        (board,) = con.execute(
            "select cost_mean_usd, n_items_costed from marts.draco_imported_leaderboard "
            "where run_id = ?",
            [summary.run_id],
        ).fetchall()
    assert items == costs
    assert board == (pytest.approx(sum(stated) / len(stated)), len(stated))
