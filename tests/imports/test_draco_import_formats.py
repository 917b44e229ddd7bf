"""bench import draco-results, without dbt: joins, errors that name task and position, nothing
half-written, unmatched / absent / duplicate ids reported, the Nimble and long-CSV formats."""

from __future__ import annotations

import copy
import csv
from pathlib import Path

import pytest
from valyu_fixture import UNMATCHED_ID, valyu_grading, write_json, write_jsonl

from collectors.draco.dataset import load_draco
from collectors.imports.draco_results import import_draco_results
from collectors.imports.source_file import ImportFormatError
from warehouse.events import parse_payload
from warehouse.log import EventLog

DRACO_JSONL = (
    Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "draco" / "test.jsonl"
)


@pytest.fixture(scope="module")
def task_set():
    return load_draco(DRACO_JSONL)


def _events(log: EventLog, event_type: str) -> list[dict]:
    return [e for _raw, e in log.read() if e["event_type"] == event_type]


def _trailing_space_task(task_set):
    for task in task_set.tasks:
        for criterion in task.criteria:
            if criterion.requirement != criterion.requirement.rstrip():
                return task, criterion
    raise AssertionError("DRACO has requirements with trailing whitespace")


def test_verbatim_trailing_whitespace_joins_and_every_event_validates(tmp_path, task_set):
    task, _criterion = _trailing_space_task(task_set)
    document = valyu_grading([task], runs=1)
    log = EventLog(tmp_path / "log")
    (summary,) = import_draco_results(
        log, write_json(tmp_path / "g.json", document), fmt="valyu", system="s", task_set=task_set
    )
    assert summary.unmatched_ids == [UNMATCHED_ID]  # reported, not dropped silently
    assert len(summary.absent_ids) == 99
    verdicts = _events(log, "imported_verdict")
    assert len(verdicts) == len(task.criteria)
    assert {v["payload"]["criterion_id"] for v in verdicts} == {
        c.criterion_id for c in task.criteria
    }
    for _raw, event in log.read():
        parse_payload(event["event_type"], event["payload"])
    (file_event,) = _events(log, "imported_file_registered")
    assert file_event["payload"]["header"]["overall_score"] == document["overall_score"]
    assert file_event["payload"]["unmatched_ids"] == [UNMATCHED_ID]


@pytest.mark.parametrize(
    "mutation, message",
    [
        ("strip", "requirement does not match"),
        ("weight", "weight"),
        ("drop", "criteria results, the rubric has"),
        ("verdict", 'expected "MET" or "UNMET"'),
    ],
)
def test_a_mismatch_names_task_and_position_and_writes_nothing(
    tmp_path, task_set, mutation, message
):
    task, criterion = _trailing_space_task(task_set)
    document = copy.deepcopy(valyu_grading([task], runs=1, unmatched=False))
    results = document["results"][0]["runs"][0]["criteria_results"]
    position = criterion.position
    if mutation == "strip":
        results[position]["requirement"] = results[position]["requirement"].rstrip()
    elif mutation == "weight":
        results[position]["weight"] = results[position]["weight"] + 1
    elif mutation == "drop":
        del results[position]
    else:
        results[position]["verdict"] = "PARTIAL"
    log = EventLog(tmp_path / "log")
    with pytest.raises(ImportFormatError) as error:
        import_draco_results(
            log,
            write_json(tmp_path / "bad.json", document),
            fmt="valyu",
            system="s",
            task_set=task_set,
        )
    text = str(error.value)
    assert "bad.json" in text and message in text
    if mutation != "drop":
        assert task.item_id in text and f"[{position}]" in text
    assert list(log.read()) == []


def test_a_missing_judge_model_is_a_clear_error(tmp_path, task_set):
    document = valyu_grading([task_set.tasks[0]], runs=1)
    del document["judge_model"]
    with pytest.raises(ImportFormatError, match="judge_model"):
        import_draco_results(
            EventLog(tmp_path / "log"),
            write_json(tmp_path / "g.json", document),
            fmt="valyu",
            system="s",
            task_set=task_set,
        )


def _nimble_record(task, *, error=None, met=1.0):
    record = {
        "item_id": task.item_id,
        "system": "nimble/high",
        "domain": task.domain,
        "error": error,
        "overall": 0.0,
        "axes": {},
    }
    if error:
        return record
    verdicts = [
        {
            "axis": c.axis,
            "id": c.criterion_id,
            "weight": c.weight,
            "requirement": c.requirement,
            "met": (met if c.weight > 0 else 0.0),
            "why": "w",
        }
        for c in task.criteria
    ]
    return record | {
        "verdicts": verdicts,
        "judge_samples": 3,
        "latency_s": 12.0,
        "answer": "Report text\n\n## Sources\n[1] a — https://a.example",
    }


def test_nimble_last_good_record_wins_and_answers_become_research(tmp_path, task_set):
    task = task_set.tasks[0]
    records = [_nimble_record(task, error="TimeoutError: x"), _nimble_record(task, met=2 / 3)]
    log = EventLog(tmp_path / "log")
    grading, _inference = import_draco_results(
        log,
        write_jsonl(tmp_path / "nimble.jsonl", records),
        fmt="nimble",
        system="nimble_high",
        task_set=task_set,
        judge_label="anthropic:claude-sonnet-5",
    )
    assert grading.judge_id == "imported:nimble:anthropic:claude-sonnet-5"
    assert grading.duplicate_ids == [task.item_id]
    rates = {v["payload"]["met_rate"] for v in _events(log, "imported_verdict")}
    assert rates == {2 / 3, 0.0}
    assert all(v["payload"]["samples"] == 3 for v in _events(log, "imported_verdict"))
    (research,) = _events(log, "research_completed")
    # the harness's own sources block becomes structured citations for our normalizer
    assert research["payload"]["raw_citations"] == [{"url": "https://a.example", "title": "a"}]
    (report,) = _events(log, "report_normalized")
    assert report["payload"]["stripped_bibliography"] is True
    assert report["payload"]["bibliography"][0]["url"] == "https://a.example"
    assert len(_events(log, "research_failed")) == 99  # every other task: missing, scored 0


def test_nimble_needs_a_judge_label(tmp_path, task_set):
    with pytest.raises(ImportFormatError, match="--judge-label"):
        import_draco_results(
            EventLog(tmp_path / "log"),
            write_jsonl(tmp_path / "n.jsonl", [_nimble_record(task_set.tasks[0])]),
            fmt="nimble",
            system="n",
            task_set=task_set,
        )


def test_long_csv_samples_and_unmatched(tmp_path, task_set):
    task = task_set.tasks[1]
    path = tmp_path / "verdicts.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["task_id", "criterion_position", "verdict", "sample", "justification"])
        for sample in (1, 2):
            for c in task.criteria:
                writer.writerow(
                    [task.item_id, c.position, "MET" if sample == 1 else "unmet", sample, ""]
                )
        writer.writerow(["not-a-task", 0, "MET", 1, ""])
    log = EventLog(tmp_path / "log")
    (summary,) = import_draco_results(
        log, path, fmt="csv", system="mine", task_set=task_set, judge_label="my-judge"
    )
    assert summary.unmatched_ids == ["not-a-task"]
    verdicts = _events(log, "imported_verdict")
    assert len(verdicts) == 2 * len(task.criteria)
    assert {v["payload"]["run_index"] for v in verdicts} == {1, 2}


def test_long_csv_missing_position_is_named(tmp_path, task_set):
    task = task_set.tasks[1]
    path = tmp_path / "verdicts.csv"
    lines = ["task_id,criterion_position,verdict"]
    lines += [f"{task.item_id},{c.position},MET" for c in task.criteria[1:]]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ImportFormatError, match=r"position\(s\) \[0\]"):
        import_draco_results(
            EventLog(tmp_path / "log"),
            path,
            fmt="csv",
            system="m",
            task_set=task_set,
            judge_label="j",
        )


def test_not_json_names_the_file(tmp_path, task_set):
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    with pytest.raises(ImportFormatError, match=r"broken\.json"):
        import_draco_results(
            EventLog(tmp_path / "l"), path, fmt="valyu", system="s", task_set=task_set
        )
