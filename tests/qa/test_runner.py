"""QA runs: one terminal event per stage per (question, lane), lineage, resume, failures,
series, and the LLM / vendor paths through loopback servers."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from collectors.llm import make_backend
from collectors.qa.dataset import select_questions
from collectors.qa.grader_template import GraderTemplate
from collectors.qa.lane_registry import LaneConfigError, build_lanes
from collectors.qa.lanes import LocalBm25Lane
from collectors.qa.offline import (
    ExtractiveSynthesizer,
    LexicalRelevanceJudge,
    NormalizedMatchGrader,
)
from collectors.qa.prompts import load_prompt
from collectors.qa.question_sets import load_question_set
from collectors.qa.roles import LlmSynthesizer, OfficialGrader, UmbrelaJudge
from collectors.qa.runner import QaRunAborted, QaRunError, plan_qa, run_qa
from tests.fakes.fake_server import FakeVendorServer, Fault
from tests.qa.conftest import DEMO_QUESTIONS, events, stage_counts
from warehouse.canonical import sha256_hex
from warehouse.events import parse_payload
from warehouse.verify import verify_log

FIRST_TEN = [3155, 3445, 331, 2121, 4188, 3980, 3317, 2484, 3904, 2933]
CANARY = "sk-canary-5d1e0b77-must-never-be-logged"
STAND_IN_TEMPLATE = "Stand-in grader.\nQuestion: {question}\nGold target: {target}\nPredicted answer: {predicted_answer}\n"


def offline_roles(judge: bool = True) -> dict:
    return {
        "synthesizer": ExtractiveSynthesizer(),
        "grader": NormalizedMatchGrader(),
        "relevance_judge": LexicalRelevanceJudge() if judge else None,
    }


def all_log_bytes(log) -> bytes:
    return b"".join(path.read_bytes() for path in Path(log.log_dir).rglob("*") if path.is_file())


def stand_in_template() -> GraderTemplate:
    return GraderTemplate(
        STAND_IN_TEMPLATE, sha256_hex(STAND_IN_TEMPLATE), "http://stand-in.invalid", "0" * 40
    )


def test_offline_run_one_terminal_event_per_stage(event_log, simpleqa, demo_passages):
    lanes = build_lanes(["local-bm25", "closed-book"], corpus=demo_passages)
    progress: list[tuple[int, int]] = []
    summary = run_qa(
        event_log,
        simpleqa,
        lanes,
        limit=10,
        random_state=0,
        argv=["bench", "run", "simpleqa"],
        on_progress=lambda done, total: progress.append((done, total)),
        **offline_roles(),
    )
    assert (summary.planned, summary.completed, summary.failed, summary.status) == (
        20,
        20,
        0,
        "finished",
    )
    assert progress[0] == (0, 20) and progress[-1] == (20, 20)

    log = events(event_log)
    counts = Counter(e["event_type"] for e in log)
    chunks = {e["payload"]["item_id"]: e for e in log if e["event_type"] == "chunks_normalized"}
    n_chunks = sum(len(e["payload"]["chunks"]) for e in chunks.values())
    assert counts == {
        "run_started": 1,
        "question_registered": 10,
        "provider_call_completed": 10,
        "chunks_normalized": 10,
        "answer_synthesized": 20,
        "answer_graded": 20,
        "relevance_graded": n_chunks,
        "run_finished": 1,
    }
    assert {e["run_id"] for e in log} == {summary.run_id}
    for event in log:  # every payload is valid against its model
        parse_payload(event["event_type"], event["payload"])

    stages = stage_counts(event_log)
    assert set(stages.values()) == {1}, "a stage ended twice"
    by_unit: dict[tuple, set] = {}
    for item, lane, attempt, stage in stages:
        assert attempt == 1
        by_unit.setdefault((item, lane), set()).add(stage)
    assert len(by_unit) == 20
    for (item, lane), unit_stages in by_unit.items():
        if lane == "closed-book":
            assert unit_stages == {"synthesize", "grade"}
        else:
            ranks = {f"relevance#{c['rank']}" for c in chunks[item]["payload"]["chunks"]}
            assert unit_stages == {"search", "chunks", "synthesize", "grade", *ranks}

    registered = sorted(
        (e["payload"] for e in log if e["event_type"] == "question_registered"),
        key=lambda p: p["sample_order"],
    )
    assert [p["row_position"] for p in registered] == FIRST_TEN
    assert all(p["dataset_sha256"] == simpleqa.dataset.sha256 for p in registered)

    started = next(e["payload"] for e in log if e["event_type"] == "run_started")
    assert started["benchmark"] == "simpleqa" and started["seed"] == 0 and started["series"] is None
    assert started["spec"]["selection"]["item_ids"] == [p["item_id"] for p in registered]
    assert [s["name"] for s in started["systems"]] == ["closed-book", "local-bm25"]
    assert started["spec"]["grader"]["official"] is False

    # Lineage: every derived event points at the event it came from.
    ids = {e["event_id"]: e for e in log}
    for event in log:
        p = event["payload"]
        if event["event_type"] == "chunks_normalized":
            assert ids[p["source_event_id"]]["event_type"] == "provider_call_completed"
        elif event["event_type"] == "answer_synthesized":
            assert p["outcome"] == "answered" and p["llm"]["provider"] == "offline"
            if p["lane"] == "closed-book":
                assert p["source_event_ids"] == [] and p["chunk_ranks_used"] == []
            else:
                assert [ids[s]["event_type"] for s in p["source_event_ids"]] == [
                    "chunks_normalized"
                ]
        elif event["event_type"] in ("answer_graded",):
            assert ids[p["source_event_id"]]["event_type"] == "answer_synthesized"
            assert p["grader_id"] == "offline-normalized-match@1" and p["official"] is False
        elif event["event_type"] == "relevance_graded":
            assert ids[p["source_event_id"]]["event_type"] == "chunks_normalized"
    assert verify_log(event_log).intact

    again = run_qa(event_log, simpleqa, lanes, limit=10, random_state=0, **offline_roles())
    assert again.already_finished and again.run_id == summary.run_id and again.events_appended == 0
    assert len(events(event_log)) == len(log)


def test_plan_positions_calls_and_costs(simpleqa, demo_passages):
    lanes = build_lanes(
        ["exa_search_auto", "local-bm25", "closed-book"],
        corpus=demo_passages,
        environ={"EXA_API_KEY": CANARY},
    )
    plan = plan_qa(simpleqa, lanes, limit=500, random_state=0, **offline_roles())
    doc = plan.as_dict()
    assert doc["row_positions"][:10] == FIRST_TEN and len(doc["questions"]) == 500
    by_lane = {lane["name"]: lane for lane in doc["lanes"]}
    assert by_lane["exa_search_auto"]["estimated_cost_usd"] == 3.5  # $7.00 / 1k x 500
    assert by_lane["exa_search_auto"]["calls"]["search"] == 500
    assert by_lane["closed-book"]["calls"] == {
        "search": 0,
        "synthesize_max": 500,
        "grade_max": 500,
        "relevance_max": 0,
    }
    assert by_lane["local-bm25"]["estimated_cost_usd"] == 0.0
    assert doc["estimated_search_cost_usd"] == 3.5
    assert CANARY not in str(doc)
    reordered = plan_qa(
        simpleqa, list(reversed(lanes)), limit=500, random_state=0, **offline_roles()
    )
    assert reordered.run_id == plan.run_id
    assert (
        plan_qa(simpleqa, lanes, limit=500, random_state=1, **offline_roles()).run_id != plan.run_id
    )
    with pytest.raises(QaRunError, match="given twice"):
        plan_qa(simpleqa, [*lanes, lanes[0]], limit=5, **offline_roles())
    with pytest.raises(LaneConfigError, match="unknown lane"):
        build_lanes(["nope"])
    with pytest.raises(LaneConfigError, match="needs a local corpus"):
        build_lanes(["local-bm25"])


def test_user_question_set_run(event_log, demo_passages):
    dataset = load_question_set(DEMO_QUESTIONS)
    summary = run_qa(
        event_log,
        dataset,
        build_lanes(["local-bm25"], corpus=demo_passages),
        limit=None,
        **offline_roles(judge=False),
    )
    assert summary.status == "finished" and summary.planned == 10
    started = events(event_log, "run_started")[0]["payload"]
    assert started["benchmark"] == "qa" and started["dataset"]["sha256"] == dataset.dataset.sha256
    assert summary.grades["local-bm25"].get("A", 0) >= 3  # the demo set is answerable offline
    assert not events(event_log, "relevance_graded")


def test_series_numbers_runs_and_refuses_a_changed_config(event_log, simpleqa, demo_passages):
    lanes = build_lanes(["local-bm25"], corpus=demo_passages)
    first = run_qa(
        event_log, simpleqa, lanes, limit=3, series="weekly", **offline_roles(judge=False)
    )
    second = run_qa(
        event_log, simpleqa, lanes, limit=3, series="weekly", **offline_roles(judge=False)
    )
    assert (first.run_index, second.run_index) == (1, 2) and first.run_id != second.run_id
    started = {e["run_id"]: e["payload"] for e in events(event_log, "run_started")}
    assert started[second.run_id]["series"] == "weekly" and started[second.run_id]["run_index"] == 2
    assert (
        started[first.run_id]["spec"]["config_sha256"]
        == started[second.run_id]["spec"]["config_sha256"]
    )
    with pytest.raises(QaRunError, match="start a new series"):
        run_qa(event_log, simpleqa, lanes, limit=4, series="weekly", **offline_roles(judge=False))
    other = run_qa(
        event_log, simpleqa, lanes, limit=4, series="weekly-4", **offline_roles(judge=False)
    )
    assert other.run_index == 1


class _CrashingLane(LocalBm25Lane):
    """Same lane (same system_ref), but the search crashes from the n-th call on."""

    def __init__(self, corpus, crash_after: int):
        super().__init__(corpus)
        self.calls, self.crash_after = 0, crash_after

    async def search(self, question, *, item_id, attempt):
        self.calls += 1
        if self.calls > self.crash_after:
            raise RuntimeError("simulated crash")
        return await super().search(question, item_id=item_id, attempt=attempt)


def test_an_interrupted_series_run_is_resumed_not_renumbered(event_log, simpleqa, demo_passages):
    with pytest.raises(RuntimeError, match="simulated crash"):
        run_qa(
            event_log,
            simpleqa,
            [_CrashingLane(demo_passages, crash_after=2)],
            limit=5,
            series="s",
            **offline_roles(judge=False),
        )
    assert not events(event_log, "run_finished")
    searched_before = {e["event_id"] for e in events(event_log, "provider_call_completed")}
    assert len(searched_before) == 2
    resumed = run_qa(
        event_log,
        simpleqa,
        [LocalBm25Lane(demo_passages)],
        limit=5,
        series="s",
        **offline_roles(judge=False),
    )
    assert resumed.run_index == 1 and resumed.status == "finished"
    searched = {e["event_id"] for e in events(event_log, "provider_call_completed")}
    assert searched_before < searched and len(searched) == 5  # the two searches were reused
    assert set(stage_counts(event_log).values()) == {1}


@pytest.fixture
def llm_keys(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", CANARY)


def llm_roles(fake_llm, *, judge: bool = True) -> dict:
    oai = make_backend("openai-compatible", base_url=f"{fake_llm.base_url}/v1", max_retries=0)
    claude = make_backend("anthropic", base_url=fake_llm.base_url, max_retries=0)
    return {
        "synthesizer": LlmSynthesizer(oai, model="local-synth"),
        "grader": OfficialGrader(oai, stand_in_template(), model="local-grader"),
        "relevance_judge": UmbrelaJudge(claude, model="claude-judge") if judge else None,
    }


def test_llm_roles_record_every_call(event_log, simpleqa, demo_passages, fake_llm, llm_keys):
    roles = llm_roles(fake_llm)
    lanes = build_lanes(["local-bm25", "closed-book"], corpus=demo_passages)
    q1 = select_questions(simpleqa, 1, 0)[0].question
    fake_llm.fail_when(529, q1.problem, "Final score")  # one relevance judgement is lost
    summary = run_qa(event_log, simpleqa, lanes, limit=3, **roles)
    assert summary.status == "finished"
    assert set(stage_counts(event_log).values()) == {1}
    assert not events(event_log, "provider_call_failed")
    (lost,) = [
        e["payload"]
        for e in events(event_log, "relevance_graded")
        if e["payload"]["outcome"] == "failed"
    ]
    assert lost["item_id"] == q1.item_id and (lost["grade"], lost["parse_ok"]) == (0, False)
    assert lost["llm"] is None and lost["error_message"].startswith("anthropic:claude-judge")
    synth_prompt, closed_prompt = load_prompt("qa-synthesizer@1"), load_prompt("qa-closed-book@1")
    for e in events(event_log, "answer_synthesized"):
        llm = e["payload"]["llm"]
        assert llm["provider"] == "openai-compatible" and llm["model"] == "local-synth"
        assert llm["temperature"] == 0.0 and llm["vendor_request_id"].startswith("req_oai")
        assert (llm["input_tokens"], llm["output_tokens"]) == (21, 4)
        expected = closed_prompt if e["payload"]["lane"] == "closed-book" else synth_prompt
        assert (llm["prompt_id"], llm["prompt_sha256"]) == (expected.prompt_id, expected.sha256)
    for e in events(event_log, "answer_graded"):
        p = e["payload"]
        assert (
            p["official"] is True
            and p["grade"] == "A"
            and p["label"] == "correct"
            and p["parse_ok"]
        )
        assert p["llm"]["prompt_sha256"] == sha256_hex(STAND_IN_TEMPLATE)
        assert p["llm"]["temperature"] == 0.5 and p["llm"]["max_tokens"] == 2048
        assert p["grader_id"].startswith(f"simpleqa-official@{sha256_hex(STAND_IN_TEMPLATE)[:12]}:")
    relevance = [
        e for e in events(event_log, "relevance_graded") if e["payload"]["outcome"] != "failed"
    ]
    assert relevance and all(
        e["payload"]["grade"] == 2 and e["payload"]["outcome"] == "parsed" for e in relevance
    )
    assert all(e["payload"]["llm"]["provider"] == "anthropic" for e in relevance)
    # What the synthesiser saw: the chunks as [title](url) + text, question verbatim.
    synth_calls = [c for c in fake_llm.calls if "Search results:" in c.prompt]
    assert (
        synth_calls
        and "[1] [" in synth_calls[0].prompt
        and "](https://pyref-daily.example/" in synth_calls[0].prompt
    )
    assert fake_llm.calls[0].body["model"] in ("local-synth", "claude-judge", "local-grader")
    assert CANARY.encode() not in all_log_bytes(event_log)


def test_llm_failures_are_terminal_facts_and_retry_failed_redoes_them(
    event_log, simpleqa, fake_llm, llm_keys
):
    roles = llm_roles(fake_llm, judge=False)
    lanes = build_lanes(["closed-book"])
    q1, q2, _ = (s.question for s in select_questions(simpleqa, 3, 0))
    fake_llm.fail_when(500, q1.problem, "No search results")  # q1's synthesis never lands
    fake_llm.fail_when(400, q2.problem, "Gold target")  # q2's grading is rejected
    summary = run_qa(event_log, simpleqa, lanes, limit=3, **roles)
    assert summary.status == "finished with 1 failures"
    (synth_failure,) = [e["payload"] for e in events(event_log, "provider_call_failed")]
    assert synth_failure["stage"] == "synthesize"
    assert (synth_failure["item_id"], synth_failure["landed"], synth_failure["status_code"]) == (
        q1.item_id,
        False,
        500,
    )
    outcomes = {
        e["payload"]["item_id"]: e["payload"] for e in events(event_log, "answer_synthesized")
    }
    assert outcomes[q1.item_id]["outcome"] == "failed"
    assert len(outcomes[q1.item_id]["source_event_ids"]) == 1  # -> the failed call
    # the rejected grading is a grade event, as a failed DRACO judge call is a verdict: the least
    # favourable grade, with the reason (one shape for a failed judgement in every family)
    grades = {e["payload"]["item_id"]: e["payload"] for e in events(event_log, "answer_graded")}
    assert q1.item_id not in grades and len(grades) == 2
    failed_grade = grades[q2.item_id]
    assert (failed_grade["outcome"], failed_grade["grade"], failed_grade["label"]) == (
        "failed",
        "B",
        "incorrect",
    )
    assert failed_grade["parse_ok"] is False and failed_grade["llm"] is None
    assert failed_grade["error_class"] == "http_status"
    assert "openai-compatible:local-grader (HTTP 400)" in failed_grade["error_message"]
    assert summary.grades["closed-book"]["call failed"] == 1
    assert events(event_log, "run_finished")

    assert run_qa(event_log, simpleqa, lanes, limit=3, **roles).already_finished
    fake_llm.add_faults(500)  # the retry fails again: still a finished run, with a new count
    again = run_qa(event_log, simpleqa, lanes, limit=3, retry_failed=True, **roles)
    assert (again.completed, again.failed) == (0, 1) and len(events(event_log, "run_finished")) == 2
    retried = run_qa(event_log, simpleqa, lanes, limit=3, retry_failed=True, **roles)
    assert (retried.completed, retried.failed) == (1, 0)
    later = [
        e["payload"] for e in events(event_log, "answer_synthesized") if e["payload"]["attempt"] > 1
    ]
    assert [(p["item_id"], p["attempt"], p["outcome"]) for p in later] == [
        (q1.item_id, 2, "failed"),
        (q1.item_id, 3, "answered"),
    ]
    assert set(stage_counts(event_log).values()) == {1}


def test_auth_refusal_of_a_shared_role_aborts_the_run_and_resumes(
    event_log, simpleqa, fake_llm, llm_keys
):
    roles = llm_roles(fake_llm, judge=False)
    lanes = build_lanes(["closed-book"])
    q1 = select_questions(simpleqa, 1, 0)[0].question
    fake_llm.fail_when(401, q1.problem, "Gold target")  # the grader's key is refused
    with pytest.raises(QaRunAborted, match=r"grade: openai-compatible refused the key .*HTTP 401"):
        run_qa(event_log, simpleqa, lanes, limit=3, **roles)
    assert not events(event_log, "run_finished") and not events(event_log, "provider_call_failed")
    assert q1.item_id not in {e["payload"]["item_id"] for e in events(event_log, "answer_graded")}
    resumed = run_qa(event_log, simpleqa, lanes, limit=3, **roles)
    assert resumed.status == "finished" and resumed.skipped_existing < 3
    ids = [e["event_id"] for e in events(event_log)]
    assert len(ids) == len(set(ids))
    assert set(stage_counts(event_log).values()) == {1}
    assert len(events(event_log, "answer_graded")) == 3


def test_vendor_lane_rejection_and_lane_abort(event_log, simpleqa):
    with FakeVendorServer(keys={"exa": CANARY}) as fake:
        # A wrong key: every call is 401 -> the lane is aborted, nothing scored.
        lanes = build_lanes(
            ["exa_search_auto"], environ={"EXA_API_KEY": "wrong-key"}, base_urls=fake.base_urls()
        )
        summary = run_qa(event_log, simpleqa, lanes, limit=3, **offline_roles())
        assert (
            "exa_search_auto" in summary.aborted_lanes
            and "HTTP 401" in summary.aborted_lanes["exa_search_auto"]
        )
        assert summary.status.startswith("incomplete")
        auth = events(event_log, "provider_call_failed")
        assert auth and all(e["payload"]["error_class"] == "auth" for e in auth)
        assert not events(event_log, "answer_synthesized") and not events(event_log, "run_finished")

        # The right key: the same command resumes as attempt 2; one 422 is a landed non-answer.
        fake.add_faults("exa", Fault.status(422))
        lanes = build_lanes(
            ["exa_search_auto"], environ={"EXA_API_KEY": CANARY}, base_urls=fake.base_urls()
        )
        resumed = run_qa(event_log, simpleqa, lanes, limit=3, **offline_roles())
    assert resumed.status == "finished" and resumed.run_id == summary.run_id
    answers = [e["payload"] for e in events(event_log, "answer_synthesized")]
    assert {p["attempt"] for p in answers} == {2}
    assert Counter(p["outcome"] for p in answers) == {"rejected": 1, "answered": 2}
    rejected = next(p for p in answers if p["outcome"] == "rejected")
    grade = next(
        e["payload"]
        for e in events(event_log, "answer_graded")
        if e["payload"]["item_id"] == rejected["item_id"]
    )
    assert (grade["grade"], grade["label"], grade["llm"]) == ("C", "not_attempted", None)
    chunks = events(event_log, "chunks_normalized")
    assert len(chunks) == 2 and all(len(e["payload"]["chunks"]) == 10 for e in chunks)
    assert chunks[0]["payload"]["normalizer_version"].startswith("exa")
    assert set(stage_counts(event_log).values()) == {1}
    assert CANARY.encode() not in all_log_bytes(event_log)


def test_preflight_checks_every_lane_and_role(demo_passages, fake_llm, llm_keys):
    from collectors.qa.preflight import preflight_qa

    with FakeVendorServer(keys={"exa": CANARY}) as fake:
        lanes = build_lanes(
            ["exa_search_auto", "exa_search_fast", "local-bm25", "closed-book"],
            corpus=demo_passages,
            environ={"EXA_API_KEY": CANARY},
            base_urls=fake.base_urls(),
        )
        fake.add_faults("/exa/search", None, Fault.status(401))
        roles = llm_roles(fake_llm)
        fake_llm.add_faults(None, 401)  # the grader's key is refused
        checks = {c.component: c for c in preflight_qa(lanes, **roles)}
    assert checks["lane:exa_search_auto"].status == "ok"
    assert checks["lane:exa_search_fast"].status == "auth_failed"
    assert checks["lane:local-bm25"].ok and checks["lane:closed-book"].status == "offline"
    assert checks["synthesizer"].ok and checks["grader"].status == "auth_failed"
    assert checks["relevance_judge"].ok
    assert CANARY not in repr(checks)
