"""`bench import draco-results --format csv` with `criterion_id` instead of `criterion_position`:
verdicts named by the DRACO dataset's criterion ids join the pinned rubric; unknown ids are all
listed with the file and line. The example file is docs/examples/draco_verdicts_by_id.csv, the
one docs/imports.md shows."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from collectors.draco.dataset import load_draco
from collectors.imports.draco_results import import_draco_results
from collectors.imports.source_file import ImportFormatError
from warehouse.log import EventLog

REPO = Path(__file__).resolve().parents[2]
DRACO_JSONL = REPO / ".." / "shared" / "data" / "draco" / "test.jsonl"
EXAMPLE = REPO / "docs" / "examples" / "draco_verdicts_by_id.csv"
BENCH = Path(sys.executable).with_name("bench")


@pytest.fixture(scope="module")
def task_set():
    return load_draco(DRACO_JSONL)


def test_example_imports_by_id_through_the_cli(tmp_path, task_set):
    assert "docs/examples/draco_verdicts_by_id.csv" in (REPO / "docs" / "imports.md").read_text()
    env = {**os.environ, "BENCH_HOME": str(tmp_path / "home")}
    proc = subprocess.run(
        [str(BENCH), "import", "draco-results", str(EXAMPLE), "--format", "csv",
         "--system", "mine", "--judge-label", "gpt-5", "--no-score"],
        env=env, capture_output=True, text=True, timeout=300, cwd=REPO,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
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
