"""Correction events honoured by the marts: an item_excluded takes a task / question out of every
score, a verdict_superseded replaces a stored verdict (ours, imported, or a QA grade); the
stored events are never edited and fct_corrections lists every correction with its provenance.
Built from real DRACO tasks and SimpleQA rows through the import path and the offline judge."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from dbt_harness import NO_UNIT_TESTS, run_dbt
from test_qa_import import SIMPLEQA, nimble_csv
from valyu_fixture import valyu_grading, valyu_inference, write_json, write_jsonl

from collectors.draco.dataset import load_draco
from collectors.draco.normalize import NORMALIZER
from collectors.draco.offline_judge import OfflineJudge
from collectors.draco.runner import rejudge
from collectors.imports.corrections import (
    CorrectionError,
    append_corrections,
    exclude_items,
    parse_corrections_file,
    provenance,
    supersede_verdicts,
)
from collectors.imports.draco_results import import_draco_results
from collectors.imports.qa_results import import_qa_results
from collectors.imports.source_file import ImportFormatError
from collectors.qa.simpleqa import load_simpleqa
from ingest.pipeline import ingest_log
from warehouse.log import EventLog

pytestmark = pytest.mark.slow  # the module fixture runs `dbt build`

DRACO_JSONL = (
    Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "draco" / "test.jsonl"
)


def events(log, event_type):
    return [e for _r, e in log.read() if e["event_type"] == event_type]


def rows(db, sql, params=()):
    with duckdb.connect(str(db), read_only=True) as con:
        cursor = con.execute(sql, list(params))
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    work = tmp_path_factory.mktemp("corrections")
    task_set = load_draco(DRACO_JSONL)
    tasks = list(task_set.tasks[:6])
    log = EventLog(work / "log")
    (grading,) = import_draco_results(
        log,
        write_json(work / "g.eval.json", valyu_grading(tasks, runs=1, unmatched=False)),
        fmt="valyu",
        system="sys",
        task_set=task_set,
    )
    (inference,) = import_draco_results(
        log,
        write_jsonl(work / "i.jsonl", valyu_inference(tasks)),
        fmt="valyu",
        system="sys",
        task_set=task_set,
    )
    rejudge(log, inference.run_id, OfflineJudge(samples=1), NORMALIZER)
    dataset = load_simpleqa(SIMPLEQA)
    path, _rows = nimble_csv(work / "dataset_simpleqa_raw_results_n.csv", dataset)
    qa = import_qa_results(log, path, fmt="nimble", lane="n", dataset=dataset, grader_label="g")

    excluded_task = tasks[0].item_id
    # one of our verdicts: an UNMET on a positive criterion of another task, turned MET
    ours = next(
        e
        for e in events(log, "judge_verdict")
        if e["payload"]["item_id"] == tasks[1].item_id
        and e["payload"]["verdict"] == "UNMET"
        and e["payload"]["polarity"] == "positive"
    )
    imported = next(
        e
        for e in events(log, "imported_verdict")
        if e["payload"]["item_id"] == tasks[2].item_id and e["payload"]["verdict"] == "UNMET"
    )
    graded = [e for e in events(log, "answer_graded") if e["payload"]["grade"] == "B"]
    made = provenance("cli", ["exclude"])
    corrections = [
        *exclude_items(
            log, [excluded_task], benchmark="draco", reason="bad rubric", provenance=made
        ),
        *exclude_items(
            log,
            [qa_item := graded[1]["payload"]["item_id"]],
            benchmark="qa",
            reason="gold answer outdated",
            provenance=made,
            scope_run_id=qa.run_id,
        ),
        *supersede_verdicts(
            log, [ours["event_id"]], replacement="MET", reason="judge misread", provenance=made
        ),
        *supersede_verdicts(
            log, [imported["event_id"]], replacement="MET", reason="re-read", provenance=made
        ),
        *supersede_verdicts(
            log, [graded[0]["event_id"]], replacement="A", reason="alias", provenance=made
        ),
    ]
    assert append_corrections(log, corrections) == 5
    assert append_corrections(log, corrections) == 0  # a repeat is a no-op
    db = work / "w.duckdb"
    assert not ingest_log(log, db, work / "dlt").quarantined
    run_dbt(
        [
            "build",
            *NO_UNIT_TESTS,
            "--select",
            "+draco_leaderboard",
            "+draco_published_figures",
            "+qa_leaderboard",
            "+fct_corrections",
            "+fct_draco_imported_items",
        ],
        db,
        work,
    )
    return locals()


def test_excluded_task_leaves_our_regime_and_the_imported_one(built):
    (ours,) = rows(
        built["db"],
        "select * from marts.draco_leaderboard where run_id = ?",
        [built["inference"].run_id],
    )
    assert ours["n_items"] == 99
    items = rows(
        built["db"],
        "select item_id from marts.fct_draco_imported_items where run_id = ?",
        [built["grading"].run_id],
    )
    assert built["excluded_task"] not in {r["item_id"] for r in items} and len(items) == 5


def test_superseded_verdicts_are_scored_and_keep_both_ids(built):
    (v,) = rows(
        built["db"],
        "select verdict, met, outcome, superseded_by_event_id, met_overridden from "
        "intermediate.int_draco_verdicts_resolved where verdict_event_id = ?",
        [built["ours"]["event_id"]],
    )
    assert v["verdict"] == "MET" and v["met"] and v["outcome"] == "parsed"
    assert v["superseded_by_event_id"] and not v["met_overridden"]
    # the imported verdict's replacement moves our recomputation away from the file's figure
    (item,) = rows(
        built["db"],
        "select score, published_score from marts.fct_draco_imported_items where item_id = ? "
        "and run_id = ?",
        [built["tasks"][2].item_id, built["grading"].run_id],
    )
    weight = next(
        c.weight
        for c in built["tasks"][2].criteria
        if c.criterion_id == built["imported"]["payload"]["criterion_id"]
    )
    positive = built["tasks"][2].positive_weight
    assert item["score"] == pytest.approx(
        min(1.0, max(0.0, item["published_score"] + weight / positive))
    )


def test_qa_exclusion_and_grade_supersession(built):
    (row,) = rows(
        built["db"],
        "select n_questions, strict_accuracy from marts.qa_leaderboard where run_id = ?",
        [built["qa"].run_id],
    )
    assert row["n_questions"] == 11  # 12 joined, one excluded
    graded = rows(
        built["db"],
        "select item_id, label from intermediate.int_qa_answers_graded where run_id = ?",
        [built["qa"].run_id],
    )
    labels = {r["item_id"]: r["label"] for r in graded}
    assert labels[built["graded"][0]["payload"]["item_id"]] == "correct"
    assert built["qa_item"] not in labels


def test_fct_corrections_lists_every_correction_with_provenance(built):
    corrections = rows(built["db"], "select * from marts.fct_corrections")
    assert len(corrections) == 5 and all(c["in_effect"] for c in corrections)
    assert {c["reason"] for c in corrections} == {
        "bad rubric",
        "gold answer outdated",
        "judge misread",
        "re-read",
        "alias",
    }
    assert all(c["provenance_source"] == "cli" for c in corrections)


def test_reinstatement_and_errors(tmp_path, built):
    log = built["log"]
    with pytest.raises(CorrectionError, match="not registered"):
        exclude_items(log, ["nope"], benchmark="draco", reason="r", provenance=built["made"])
    with pytest.raises(CorrectionError, match="MET, UNMET"):
        supersede_verdicts(
            log, [built["ours"]["event_id"]], replacement="A", reason="r", provenance=built["made"]
        )
    path = tmp_path / "corrections.csv"
    path.write_text(
        "kind,target,reason,benchmark,reinstate\n"
        f"exclude,{built['excluded_task']},rubric fixed upstream,draco,true\n"
    )
    (reinstated,) = parse_corrections_file(log, path)
    assert reinstated.payload.excluded is False
    assert reinstated.payload.provenance.source == "import"
    assert reinstated.payload.provenance.file_name == "corrections.csv"
    path.write_text("kind,target,reason\nexclude,nope,r\n")
    with pytest.raises(ImportFormatError, match="line 2"):
        parse_corrections_file(log, path)
