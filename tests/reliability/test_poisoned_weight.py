"""A rubric weight of 2^62 is a clear error at collection; one that reached the log anyway
(written before the bound existed) fails only its own row, loudly, and the warehouse builds."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from collectors.draco.dataset import RubricFormatError, parse_rubric_jsonl
from warehouse.canonical import canonical_sha256
from warehouse.events import MAX_RUBRIC_WEIGHT, RubricCriterionRegistered, hashed_content

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "dbt_draco"), str(HERE.parent / "dbt")]
DRACO_JSONL = Path("/work/shared/data/draco/test.jsonl")
POISON = 2**62


def _poisoned_row() -> bytes:
    row = json.loads(DRACO_JSONL.read_text(encoding="utf-8").splitlines()[0])
    answer = json.loads(row["answer"]) if isinstance(row["answer"], str) else row["answer"]
    answer["sections"][0]["criteria"][0]["weight"] = POISON
    row["answer"] = json.dumps(answer) if isinstance(row["answer"], str) else answer
    return (json.dumps(row) + "\n").encode()


def test_a_huge_weight_is_an_error_at_collection_naming_the_field():
    with pytest.raises(RubricFormatError) as error:
        parse_rubric_jsonl(_poisoned_row(), "poisoned.jsonl")
    message = str(error.value)
    assert "poisoned.jsonl" in message and "weight" in message and str(POISON) in message


def test_the_event_model_bounds_the_weight():
    with pytest.raises(ValueError):
        RubricCriterionRegistered(
            item_id="i",
            criterion_id="c",
            axis="a",
            axis_title="A",
            position=0,
            weight=MAX_RUBRIC_WEIGHT + 1,
            requirement="r",
        )


@pytest.mark.slow
def test_a_poisoned_weight_in_the_log_fails_only_its_row(tmp_path):
    from dbt_harness import NO_UNIT_TESTS, run_dbt
    from draco_fixture import build_fixture, ingest

    fixture = build_fixture()
    events, poisoned_id = [], None
    for event in fixture.events:
        body = event.model_dump()
        if poisoned_id is None and body["event_type"] == "rubric_criterion_registered":
            body["payload"]["weight"] = POISON  # as an event from before the bound was written
            body["content_sha256"] = canonical_sha256(hashed_content(body))
            poisoned_id = body["event_id"]
        events.append(body)
    db = ingest(events, tmp_path)
    result = run_dbt(
        ["build", *NO_UNIT_TESTS, "--select", "+dim_rubric_tasks+", "+dim_rubric_criteria+"],
        db,
        tmp_path,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert "assert_rubric_weights_in_range" in result.stdout and "WARN" in result.stdout

    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        tasks = con.execute(
            "select count(*), max(positive_weight) from marts.dim_rubric_tasks"
        ).fetchone()
        poisoned = con.execute(
            "select count(*) from marts.dim_rubric_criteria where first_criterion_event_id = ?",
            [poisoned_id],
        ).fetchone()[0]
        others = con.execute("select count(*) from marts.dim_rubric_criteria").fetchone()[0]
    assert tasks[0] == len(fixture.task_set.tasks) or tasks[0] > 0
    assert tasks[1] < POISON
    assert poisoned == 0 and others > 0
