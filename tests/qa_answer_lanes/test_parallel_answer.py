"""`parallel_answer`, the answer lane that takes two calls (Parallel's Task API: submit a run,
then a blocking result call), through the real QA runner against the loopback answer fake:
both calls are in the log, the result call is the unit's search call, a refused key aborts the
lane on either call and the run resumes once the key works. No dbt build (the series test
builds the marts for all four answer lanes)."""

from __future__ import annotations

import csv

import pytest

from collectors.qa.lane_registry import build_lanes
from collectors.qa.offline import ExtractiveSynthesizer, NormalizedMatchGrader
from collectors.qa.question_sets import load_question_set
from collectors.qa.runner import run_qa
from tests.fakes.answer_fake import AnswerProductsFake
from warehouse.log import EventLog

KEYS = {"PARALLEL_API_KEY": "k-par-secret"}
KNOWLEDGE = {
    "Who wrote the play Hamlet?": "William Shakespeare",
    "What is the chemical symbol for gold?": "Au",
    "In which year did the Berlin Wall fall?": "1989",
}


@pytest.fixture
def questions(tmp_path):
    path = tmp_path / "questions.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "gold_answer"])
        writer.writerows(KNOWLEDGE.items())
    return load_question_set(path)


def run(log, questions, fake):
    lanes = build_lanes(["parallel_answer"], environ=KEYS, base_urls=fake.base_urls())
    return run_qa(
        log,
        questions,
        lanes,
        limit=None,
        synthesizer=ExtractiveSynthesizer(),
        grader=NormalizedMatchGrader(),
    )


def events(log, event_type):
    return [e for _raw, e in log.read() if e["event_type"] == event_type]


def calls(log):
    """(stage, status, error_class, item_id, attempt) of every provider call."""
    return [
        (
            e["payload"]["stage"],
            e["payload"]["status_code"],
            e["payload"].get("error_class"),
            e["payload"]["item_id"],
            e["payload"]["attempt"],
        )
        for e in events(log, "provider_call_completed") + events(log, "provider_call_failed")
    ]


def test_a_run_logs_the_submit_and_the_waited_result_and_keeps_parallels_own_answer(
    tmp_path, questions
):
    log = EventLog(tmp_path / "log")
    # every run answers 408 ("not finished within timeout") once before its result
    with AnswerProductsFake(KNOWLEDGE, skill={"parallel": 1.0}, pending_results=1) as fake:
        summary = run(log, questions, fake)
        again = run(log, questions, fake)  # the same command again: resumes, calls nothing
        submitted = [body for vendor, body in fake.requests if vendor == "parallel"]
        waits = [r.result_calls for r in fake.runs.values()]
    assert summary.outcomes == {"parallel_answer": {"answered": 3}}
    assert again.run_id == summary.run_id and len(submitted) == 3
    assert all(
        b["processor"] == "base" and b["task_spec"] == {"output_schema": {"type": "text"}}
        for b in submitted
    )
    assert {b["input"] for b in submitted} == set(KNOWLEDGE)
    assert waits == [[{"timeout": ["120"]}] * 2] * 3  # the 408, then the result
    assert sorted(c[:3] + c[4:] for c in calls(log)) == sorted(
        [("search:submit", 200, None, 1), ("search", 200, None, 1)] * 3
    )
    searches = [
        e for e in events(log, "provider_call_completed") if e["payload"]["stage"] == "search"
    ]
    assert all(e["payload"]["http_attempts"] == 2 for e in searches)
    assert all("/result?timeout=120" in e["payload"]["request"]["url"] for e in searches)
    answers = events(log, "answer_synthesized")
    assert {a["payload"]["answer"] for a in answers} == set(KNOWLEDGE.values())
    assert all(a["payload"]["llm"] is None for a in answers)  # the vendor's answer, not ours
    search_ids = {e["event_id"] for e in searches}
    assert all(a["payload"]["source_event_ids"][0] in search_ids for a in answers)
    assert {g["payload"]["label"] for g in events(log, "answer_graded")} == {"correct"}
    stored = [f.read_bytes() for f in (tmp_path / "log").rglob("*") if f.is_file()]
    assert stored and not any(b"k-par-secret" in data for data in stored)  # redacted


@pytest.mark.parametrize(
    ("route", "status"),
    [("parallel", 401), ("parallel", 402), ("parallel", 403), ("parallel/result", 402)],
)
def test_a_refused_key_aborts_the_lane_and_the_run_resumes_once_it_works(
    tmp_path, questions, route, status
):
    log = EventLog(tmp_path / "log")
    with AnswerProductsFake(KNOWLEDGE, skill={"parallel": 1.0}, refuse={route: status}) as fake:
        aborted = run(log, questions, fake)
        refused = calls(log)
        fake.refuse.clear()  # the key is fixed
        resumed = run(log, questions, fake)
    assert set(aborted.aborted_lanes) == {"parallel_answer"}
    assert "parallel refused the key" in aborted.aborted_lanes["parallel_answer"]
    assert aborted.outcomes == {}  # a refusal is no outcome: the unit waits for a working key
    units = [c for c in refused if c[0] == "search"]
    assert units and all(c[1:3] == (status, "auth") for c in units)
    submits = [c for c in refused if c[0] == "search:submit"]
    # a refused submit ran nothing and is the unit's call; a refused result follows its submit
    if route == "parallel/result":
        assert sorted(c[3:] for c in submits) == sorted(c[3:] for c in units)
    else:
        assert submits == []
    assert resumed.run_id == aborted.run_id and not resumed.aborted_lanes
    assert resumed.outcomes == {"parallel_answer": {"answered": 3}}
    # each refused unit is retried as its next attempt (no event id is reused)
    refused_items = {c[3] for c in units}
    answered = [c for c in calls(log) if c[0] == "search" and c[1] == 200]
    assert sorted((c[3], c[4]) for c in answered) == sorted(
        (item, 2 if item in refused_items else 1) for item in {c[3] for c in answered}
    )
    ids = [e["event_id"] for _raw, e in log.read()]
    assert len(ids) == len(set(ids))


def test_a_rejected_submit_is_the_units_search_call(tmp_path, questions):
    log = EventLog(tmp_path / "log")
    with AnswerProductsFake(KNOWLEDGE, refuse={"parallel": 422}) as fake:
        summary = run(log, questions, fake)
        assert not fake.runs  # nothing was run, so nothing was waited for
    assert summary.outcomes == {"parallel_answer": {"rejected": 3}}
    assert [c[:2] for c in calls(log)] == [("search", 422)] * 3


def test_the_cli_names_every_answer_lane_and_plans_parallel_answer(tmp_path, questions):
    """`bench run qa --help` lists the answer lanes by name (the help is static text, so this
    holds it to the registry); `bench plan qa --lanes parallel_answer` prices it (no key
    needed for a plan): USD 10 per 1,000 runs of the base processor."""
    import json

    from typer.testing import CliRunner

    from bench.cli import app
    from collectors.qa.answer_lanes import ANSWER_LANES

    runner = CliRunner()
    shown = runner.invoke(app, ["run", "qa", "--help"], env={"COLUMNS": "400"}).output
    assert all(lane in shown for lane in ANSWER_LANES), shown
    env = {"BENCH_HOME": str(tmp_path / "home"), "PARALLEL_API_KEY": None}  # unset
    args = ["plan", "qa", "--questions", str(questions.path), "--lanes", "parallel_answer"]
    planned = runner.invoke(app, [*args, "--json"], env=env)
    assert planned.exit_code == 0, planned.output
    plan = json.loads(planned.stdout)
    assert [lane["name"] for lane in plan["lanes"]] == ["parallel_answer"]
    assert plan["estimated_search_cost_usd"] == pytest.approx(3 * 10.0 / 1000)


def _table_row(output: str, component: str) -> tuple[str, str]:
    """(verdict, detail) of a preflight table row, its wrapped cells joined: the console's width
    is whatever it was when bench.cli was first imported in this process, not this test's COLUMNS."""
    cells: list[list[str]] = []
    for line in output.splitlines():
        parts = [part.strip() for part in line.split("│")[1:-1]]
        if len(parts) != 3:
            continue
        if parts[0] and cells:
            break
        if parts[0] == component or (cells and not parts[0]):
            cells.append(parts)
    assert cells, output
    return tuple(" ".join(filter(None, column)) for column in list(zip(*cells, strict=True))[1:])


@pytest.mark.parametrize(("refuse", "status"), [({}, "ready"), ({"parallel": 401}, "key refused")])
def test_preflight_asks_for_a_run_that_cannot_exist(tmp_path, refuse, status):
    """`bench preflight --lanes parallel_answer` starts no paid run: the result of an unknown
    run id answers 404 (reachable, key not refused) or the refusal; exa_answer, with no free
    probe, answers one question as a search lane's preflight does."""
    from typer.testing import CliRunner

    from bench.cli import app

    with AnswerProductsFake(KNOWLEDGE, refuse=refuse) as fake:
        env = {
            "BENCH_HOME": str(tmp_path / "home"),
            "COLUMNS": "400",
            **KEYS,
            "EXA_API_KEY": "k-exa",
            **{f"BENCH_BASE_URL_{v.upper()}": url for v, url in fake.base_urls().items()},
        }
        args = ["preflight", "--lanes", "parallel_answer,exa_answer"]
        done = CliRunner().invoke(app, args, env=env)
        probed = [r.result_calls for r in fake.runs.values()]
        asked = [vendor for vendor, _body in fake.requests]
    assert not probed and asked == ["exa"]  # no Parallel run was submitted
    assert (done.exit_code == 0) is (status == "ready"), done.output
    verdict, detail = _table_row(done.output, "lane:parallel_answer")
    assert status in verdict
    if status == "ready":
        assert "HTTP 404 for an unknown run id; key validity not proven" in detail
