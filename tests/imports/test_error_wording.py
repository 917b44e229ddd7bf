"""One wording across importers, every problem of a file at once: `FILE: line N: field X:
problem` (a JSONL record's line; a one-document JSON file has no lines, so its field path says
where), for valyu grading and inference files, Nimble DRACO results and corrections files, each
with two or more bad rows; nothing is written."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from valyu_fixture import valyu_grading, valyu_inference, write_json, write_jsonl

from collectors.draco.dataset import load_draco
from collectors.imports.corrections import parse_corrections_file
from collectors.imports.draco_results import import_draco_results
from collectors.imports.source_file import ImportFormatError
from tests.bench_cli import run_bench
from warehouse.log import EventLog

REPO = Path(__file__).resolve().parents[2]
DRACO_JSONL = REPO / ".." / "shared" / "data" / "draco" / "test.jsonl"


@pytest.fixture(scope="module")
def task_set():
    return load_draco(DRACO_JSONL)


def _problems(tmp_path: Path, path: Path, fmt: str, task_set, **options) -> str:
    log = EventLog(tmp_path / "log")
    with pytest.raises(ImportFormatError) as error:
        import_draco_results(log, path, fmt=fmt, system="s", task_set=task_set, **options)
    assert list(log.read()) == []
    return str(error.value)


def test_valyu_grading_reports_every_bad_result(tmp_path, task_set):
    one, two = task_set.tasks[:2]
    document = copy.deepcopy(valyu_grading([one, two], runs=1, unmatched=False))
    first = document["results"][0]["runs"][0]["criteria_results"]
    first[3]["verdict"] = "PARTIAL"
    first[5]["verdict"] = None
    document["results"][1]["runs"][0]["criteria_results"][0]["weight"] = 99
    path = write_json(tmp_path / "valyu.eval.json", document)
    message = _problems(tmp_path, path, "valyu", task_set)
    assert message.startswith(f"{path}: 3 problem(s):\n")
    at = f"{path}: field results[0] (task {one.item_id}).runs[0].criteria_results"
    assert f'{at}[3].verdict: expected "MET" or "UNMET", got text \'PARTIAL\'' in message
    assert f'{at}[5].verdict: expected "MET" or "UNMET", got null' in message
    assert (
        f"{path}: field results[1] (task {two.item_id}).runs[0].criteria_results[0]: "
        f"task {two.item_id} position 0: weight int 99 does not match" in message
    )


def test_valyu_inference_reports_every_bad_line(tmp_path, task_set):
    records = valyu_inference(list(task_set.tasks[:4]))
    del records[1]["output"]
    records[2]["elapsed"] = "slow"
    records[3]["id"] = 7
    path = write_jsonl(tmp_path / "valyu.jsonl", records)
    message = _problems(tmp_path, path, "valyu", task_set)
    assert message.startswith(f"{path}: 3 problem(s):\n")
    assert f"{path}: line 2: field output: missing (the report text, or null)" in message
    assert f"{path}: line 3: field elapsed: expected a number or null, got text 'slow'" in message
    assert f"{path}: line 4: field id: expected the DRACO task id, got int 7" in message


def _nimble_record(task, *, met: float = 1.0) -> dict:
    return {
        "item_id": task.item_id,
        "system": "nimble/high",
        "domain": task.domain,
        "error": None,
        "overall": 0.5,
        "axes": {},
        "judge_samples": 1,
        "latency_s": 3.0,
        "verdicts": [
            {
                "axis": c.axis,
                "id": c.criterion_id,
                "weight": c.weight,
                "requirement": c.requirement,
                "met": met,
                "why": "w",
            }
            for c in task.criteria
        ],
    }


def _bad_nimble(tmp_path: Path, task_set) -> tuple[Path, list]:
    tasks = list(task_set.tasks[:3])
    records = [_nimble_record(t) for t in tasks]
    records[0]["verdicts"][0]["met"] = 2.0
    records[0]["verdicts"][2]["met"] = "yes"
    records[2]["verdicts"][1]["id"] = "no-such-criterion"
    return write_jsonl(tmp_path / "nimble.jsonl", records), tasks


def test_nimble_reports_every_bad_record(tmp_path, task_set):
    path, tasks = _bad_nimble(tmp_path, task_set)
    message = _problems(tmp_path, path, "nimble", task_set, judge_label="gpt-5")
    assert message.startswith(f"{path}: 3 problem(s):\n")
    lines = message.splitlines()[1:]
    assert lines == [
        f"{path}: line 1: field verdicts[0].met: expected a met rate in [0, 1], got float 2.0",
        f"{path}: line 1: field verdicts[2].met: expected a met rate in [0, 1], got text 'yes'",
        f"{path}: line 3: field verdicts[1].id: task {tasks[2].item_id}: no rubric criterion "
        "text 'no-such-criterion'",
    ]


@pytest.mark.slow  # one `bench` command
def test_the_cli_prints_every_problem_and_exits_2(tmp_path, task_set):
    path, _ = _bad_nimble(tmp_path, task_set)
    proc = run_bench(
        tmp_path / "home", "import", "draco-results", str(path), "--format", "nimble",
        "--system", "nimble_high", "--judge-label", "gpt-5", "--no-score",
        env={"COLUMNS": "300"}, cwd=REPO, check=False,
    )  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    message = " ".join(proc.stderr.split())
    for where in ("line 1: field verdicts[0].met:", "line 1: field verdicts[2].met:"):
        assert f"{path}: {where}" in message
    assert f"{path}: line 3: field verdicts[1].id:" in message


def test_a_corrections_file_reports_every_bad_line(tmp_path):
    path = tmp_path / "corrections.csv"
    path.write_text(
        "kind,target,reason,benchmark,replacement\n"
        "exclude,no-such-item,typo,draco,\n"
        "retract,x,r,,\n"
        "supersede,no-such-event,r,,MET\n"
        "exclude,item,,qa,\n"
    )
    with pytest.raises(ImportFormatError) as error:
        parse_corrections_file(EventLog(tmp_path / "log"), path)
    assert str(error.value).splitlines() == [
        f"{path}: 4 problem(s):",
        f"{path}: line 2: field target: item 'no-such-item' is not registered in any draco run",
        f"{path}: line 3: field kind: kind 'retract': expected exclude or supersede",
        f"{path}: line 4: field target: event 'no-such-event' is no judge_verdict, "
        "imported_verdict or answer_graded in the log",
        f"{path}: line 5: field reason: a correction needs a reason",
    ]
    path.write_text("kind,target\nexclude,x\n")
    with pytest.raises(ImportFormatError) as error:
        parse_corrections_file(EventLog(tmp_path / "log"), path)
    assert str(error.value) == f"{path}: line 1: missing column(s) ['reason'] in the header"
