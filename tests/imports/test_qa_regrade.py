"""Re-synthesising and re-grading an imported QA run with our (offline) roles: the file's stored
retrieval replayed, nothing called, a second regime beside the imported one with the same
questions, failures and URL metrics; run again, it adds nothing."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from dbt_harness import NO_UNIT_TESTS, run_dbt
from nimble_qa_file import nimble_csv

from collectors.imports.qa_regrade import FAILED_IMPORT, regrade_imported_qa
from collectors.imports.qa_results import import_qa_results
from collectors.imports.source_file import ImportFormatError
from collectors.qa.offline import ExtractiveSynthesizer, NormalizedMatchGrader
from collectors.qa.simpleqa import load_simpleqa
from ingest.pipeline import ingest_log
from tests.bench_cli import BenchResult, run_bench
from warehouse.log import EventLog

SIMPLEQA = Path(__file__).resolve().parents[3] / "shared" / "data" / "simpleqa"


@pytest.fixture(scope="module")
def dataset():
    return load_simpleqa(SIMPLEQA / "simple_qa_test_set.csv")


def events(log: EventLog, run_id: str, event_type: str) -> list[dict]:
    return [
        e["payload"]
        for _r, e in log.read()
        if e["run_id"] == run_id and e["event_type"] == event_type
    ]


@pytest.mark.slow  # runs `dbt build`
def test_an_import_is_resynthesised_and_regraded_by_our_roles_beside_its_own_regime(
    tmp_path, dataset
):
    path, _rows = nimble_csv(tmp_path / "dataset_simpleqa_raw_results_nimble_search.csv", dataset)
    log = EventLog(tmp_path / "log")
    imported = import_qa_results(
        log, path, fmt="nimble", lane="nimble_search", dataset=dataset, grader_label="gpt-4o"
    )
    roles = {"synthesizer": ExtractiveSynthesizer(), "grader": NormalizedMatchGrader()}
    ours = regrade_imported_qa(log, imported.run_id, dataset, **roles)
    assert ours.run_id != imported.run_id and ours.planned == 12 and ours.failed == 1

    # the replayed retrieval is the file's, call for call; the failed row stays failed
    replayed = {
        c["item_id"]: c["raw_body"] for c in events(log, ours.run_id, "provider_call_completed")
    }
    recorded = {
        c["item_id"]: c["raw_body"] for c in events(log, imported.run_id, "provider_call_completed")
    }
    assert replayed == recorded and len(recorded) == 11
    (failure,) = events(log, ours.run_id, "provider_call_failed")
    assert failure["error_class"] == FAILED_IMPORT and failure["error_message"] == "ReadTimeout"
    chunks = {c["item_id"]: c["chunks"] for c in events(log, ours.run_id, "chunks_normalized")}
    assert {i: [c["url"] for c in cs] for i, cs in chunks.items()} == {
        item_id: [c["url"] for c in json.loads(body)["chunks"]]
        for item_id, body in recorded.items()
    }
    # our synthesizer answered from the stored chunks, our grader graded: no imported grade
    answers = events(log, ours.run_id, "answer_synthesized")
    assert sorted(a["outcome"] for a in answers).count("failed") == 1 and len(answers) == 12
    grades = events(log, ours.run_id, "answer_graded")
    assert {g["grader_id"] for g in grades} == {NormalizedMatchGrader.grader_id}
    assert len(grades) == 11

    # run again: the runner resumes a finished run and writes nothing
    again = regrade_imported_qa(log, imported.run_id, dataset, **roles)
    assert again.run_id == ours.run_id and again.events_appended == 0

    db = tmp_path / "w.duckdb"
    assert not ingest_log(log, db, tmp_path / "dlt").quarantined
    run_dbt(["build", *NO_UNIT_TESTS, "--select", "+qa_leaderboard"], db, tmp_path)
    with duckdb.connect(str(db), read_only=True) as con:
        board = {
            r[0]: r[1:]
            for r in con.execute(
                "select grader_id, lane, n_questions, n_failed, mrr, hit_10 "
                "from marts.qa_leaderboard where run_id in (?, ?)",
                [imported.run_id, ours.run_id],
            ).fetchall()
        }
    assert set(board) == {"imported:nimble:gpt-4o", NormalizedMatchGrader.grader_id}
    theirs, mine = board["imported:nimble:gpt-4o"], board[NormalizedMatchGrader.grader_id]
    assert theirs[:3] == mine[:3] == ("nimble_search", 12, 1)
    assert theirs[3:] == pytest.approx(mine[3:])  # the same URLs, scored the same way


def test_a_run_that_is_not_an_import_is_refused(tmp_path, dataset):
    with pytest.raises(ImportFormatError, match="not an imported QA run"):
        regrade_imported_qa(
            EventLog(tmp_path / "log"),
            "run-that-does-not-exist",
            dataset,
            synthesizer=ExtractiveSynthesizer(),
            grader=NormalizedMatchGrader(),
        )


def test_the_command_regrades_an_import_and_refuses_another_question_set(tmp_path, dataset):
    home = tmp_path / "home"
    csv_file = SIMPLEQA / "simple_qa_test_set.csv"

    def run(*args: str) -> BenchResult:
        return run_bench(
            home, "import", *args, "--dataset-file", str(csv_file), "--no-score", check=False
        )

    path, _rows = nimble_csv(tmp_path / "dataset_simpleqa_raw_results_exa.csv", dataset, n=4)
    imported = run("qa-results", str(path), "--format", "nimble", "--lane", "exa_search_auto")
    assert imported.returncode == 0, imported.stderr
    log = EventLog(home / "log")
    (started,) = [e for _r, e in log.read() if e["event_type"] == "run_started"]
    regraded = run("regrade-qa", started["run_id"])
    assert regraded.returncode == 0, regraded.stderr
    assert "4 unit(s) done, 0 failed" in regraded.stderr
    again = run("regrade-qa", started["run_id"])
    assert "0 unit(s) done" in again.stderr and "4 already done" in again.stderr
    # against another question set the run's questions are not there: refused, named
    other = run_bench(
        home, "import", "regrade-qa", started["run_id"], "--questions", "demo", "--no-score",
        check=False,
    )  # fmt: skip
    assert other.returncode == 2 and "pass the same --questions" in other.stderr
