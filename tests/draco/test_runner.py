"""The rubric-judged runner over real tasks: stages, resume per stage, rejudge, aborts."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from collectors.demo.draco_tasks import demo_task_set
from collectors.demo.extraction_corpus import build_demo_corpus, load_demo_corpus
from collectors.draco.dataset import dataset_ref, load_draco
from collectors.draco.judge import LlmJudge, OfflineJudge
from collectors.draco.normalize import NORMALIZER
from collectors.draco.plan import select_tasks
from collectors.draco.prompts import RESEARCH_INSTRUCTION_ID, load_prompt
from collectors.draco.runner import DracoRunAborted, plan_draco_run, rejudge, run_draco
from collectors.draco.systems import make_lane
from collectors.llm import make_backend
from collectors.local_corpus import from_extraction_corpus
from tests.fakes.research_fake import FakeResearchServer, Fault
from tests.qa.llm_fake import FakeLlmServer
from warehouse.log import EventLog
from warehouse.verify import verify_log

LANE = "exa_agent_high"
KEY = "sk-canary-runner-exa-0000"


def events(log: EventLog, event_type: str | None = None) -> list[dict]:
    return [e for _raw, e in log.read() if event_type is None or e["event_type"] == event_type]


def verdict_json(prompt: str) -> str:
    # Deterministic but varied: MET for requirements with an even length.
    met = "MET" if len(prompt) % 2 == 0 else "UNMET"
    return json.dumps({"verdict": met, "justification": "Checked against the report."})


@pytest.fixture(scope="module")
def draco(shared_data: Path):
    return load_draco(shared_data / "draco" / "test.jsonl")


def plan_for(task_set, lanes, limit=2):
    return plan_draco_run(
        benchmark="draco",
        dataset=dataset_ref(task_set),
        tasks=select_tasks(task_set, limit=limit),
        lanes=lanes,
        instruction=load_prompt(RESEARCH_INSTRUCTION_ID),
    )


def vendor_lane(fake: FakeResearchServer):
    return make_lane(
        LANE,
        base_urls=fake.base_urls(),
        environ={"EXA_API_KEY": KEY},
        poll_interval_s=0.01,
        policy_changes={"backoff_base_s": 0.01, "backoff_cap_s": 0.02},
        rate_per_s=1000.0,  # a loopback fake needs no vendor pacing (the default is 2 requests/s)
    )


@pytest.fixture(scope="module")
def demo_passages(tmp_path_factory):
    corpus_dir = build_demo_corpus(tmp_path_factory.mktemp("draco-demo") / "corpus")
    return from_extraction_corpus(load_demo_corpus(corpus_dir))


def test_offline_demo_run_judges_every_criterion_once_then_resumes_as_finished(
    tmp_path, demo_passages
):
    task_set = demo_task_set()
    lane = make_lane("local-rag", corpus=demo_passages)
    plan = plan_draco_run(
        benchmark="rubric",
        dataset=dataset_ref(task_set),
        tasks=task_set.tasks,
        lanes=[lane],
        instruction=load_prompt(RESEARCH_INSTRUCTION_ID),
    )
    log = EventLog(tmp_path / "log")
    judge = OfflineJudge(samples=2)
    summary = run_draco(log, plan, judge, NORMALIZER)
    assert summary.status == "finished"
    assert summary.researched == len(task_set.tasks)
    verdicts = events(log, "judge_verdict")
    assert len(verdicts) == task_set.criteria_count * 2
    keys = Counter(
        (v["payload"]["item_id"], v["payload"]["criterion_id"], v["payload"]["sample"])
        for v in verdicts
    )
    assert set(keys.values()) == {1}
    assert len(events(log, "rubric_criterion_registered")) == task_set.criteria_count
    assert len(events(log, "report_normalized")) == len(task_set.tasks)
    assert len(events(log, "run_finished")) == 1

    again = run_draco(log, plan, judge, NORMALIZER)
    assert again.already_finished and again.events_appended == 0
    assert verify_log(log).intact


def test_vendor_failure_is_terminal_then_retried_as_the_next_attempt(tmp_path, draco):
    log = EventLog(tmp_path / "log")
    judge = OfflineJudge(samples=1)
    with FakeResearchServer(polls_to_complete=1, keys={"exa": KEY}) as fake:
        fake.fail_runs("exa", "the agent crashed")
        plan = plan_for(draco, [vendor_lane(fake)], limit=2)
        first = run_draco(log, plan, judge, NORMALIZER)
        assert first.research_failed == 2 and first.verdicts == 0
        assert first.pending == 2 and first.status.startswith("incomplete")
        failed = events(log, "research_failed")
        assert {f["payload"]["error_class"] for f in failed} == {"vendor_failed"}
        assert not events(log, "run_finished")  # attempts remain: not finished yet

        fake.reset(keys={"exa": KEY})
        second = run_draco(
            log,
            plan_for(draco, [vendor_lane(fake)], limit=2),
            judge,
            NORMALIZER,
        )
    assert second.researched == 2
    completed = events(log, "research_completed")
    assert {c["payload"]["attempt"] for c in completed} == {2}
    # Judged: the latest successful attempt only, every criterion once.
    criteria = sum(len(t.criteria) for t in draco.tasks[:2])
    assert len(events(log, "judge_verdict")) == criteria
    assert {v["payload"]["attempt"] for v in events(log, "judge_verdict")} == {2}
    # Raw HTTP exchanges of both attempts are kept.
    stages = Counter(e["payload"]["attempt"] for e in events(log, "provider_call_completed"))
    assert stages[1] > 0 and stages[2] > 0


def test_failed_judge_samples_take_least_favourable_and_are_retried_on_resume(tmp_path, draco):
    log = EventLog(tmp_path / "log")
    task = draco.tasks[0]
    negative = next(c for c in task.criteria if c.weight < 0)
    positive = next(c for c in task.criteria if c.weight > 0)
    with (
        FakeResearchServer(polls_to_complete=1, keys={"exa": KEY}) as fake,
        FakeLlmServer(verdict_json) as llm,
    ):
        backend = make_backend("openai-compatible", base_url=f"{llm.base_url}/v1", max_retries=0)
        judge = LlmJudge(backend, model="judge-test", samples=1)
        llm.fail_when(500, negative.requirement)
        llm.fail_when(500, positive.requirement)
        plan = plan_for(draco, [vendor_lane(fake)], limit=1)
        first = run_draco(log, plan, judge, NORMALIZER)
        assert first.flagged == 2
        failed = [
            v["payload"]
            for v in events(log, "judge_verdict")
            if v["payload"]["outcome"] == "failed"
        ]
        by_criterion = {v["criterion_id"]: v for v in failed}
        assert by_criterion[negative.criterion_id]["met"] is True  # the penalty applies
        assert by_criterion[positive.criterion_id]["met"] is False
        research_calls = len(fake.requests)

        second = run_draco(log, plan, judge, NORMALIZER)
        assert len(fake.requests) == research_calls  # resume never re-calls the system
    assert second.verdicts == 2 and second.flagged == 0
    retried = [
        v["payload"] for v in events(log, "judge_verdict") if v["payload"]["judge_attempt"] == 2
    ]
    assert {v["criterion_id"] for v in retried} == {negative.criterion_id, positive.criterion_id}
    assert len(events(log, "run_finished")) == 1


def test_rejudge_adds_a_second_regime_from_the_log_alone(tmp_path, draco):
    log = EventLog(tmp_path / "log")
    with FakeResearchServer(polls_to_complete=1, keys={"exa": KEY}) as fake:
        plan = plan_for(draco, [vendor_lane(fake)], limit=2)
        run_draco(
            log,
            plan,
            OfflineJudge(samples=1),
            NORMALIZER,
        )
        calls_before = len(fake.requests)
        with FakeLlmServer(verdict_json) as llm:
            backend = make_backend(
                "openai-compatible", base_url=f"{llm.base_url}/v1", max_retries=0
            )
            judge = LlmJudge(backend, model="second-judge", samples=2)
            summary = rejudge(
                log,
                plan.run_id,
                judge,
                NORMALIZER,
            )
            assert len(llm.state.calls) == summary.verdicts
        assert len(fake.requests) == calls_before
    criteria = sum(len(t.criteria) for t in draco.tasks[:2])
    assert summary.verdicts == criteria * 2
    regimes = Counter(v["payload"]["judge_id"] for v in events(log, "judge_verdict"))
    assert sorted(regimes.values()) == [criteria, criteria * 2]
    assert len(events(log, "judge_regime_registered")) == 2


def test_judge_key_refused_aborts_with_a_message_and_resumes(tmp_path, draco):
    log = EventLog(tmp_path / "log")
    with (
        FakeResearchServer(polls_to_complete=1, keys={"exa": KEY}) as fake,
        FakeLlmServer(verdict_json) as llm,
    ):
        backend = make_backend("openai-compatible", base_url=f"{llm.base_url}/v1", max_retries=0)
        judge = LlmJudge(backend, model="judge-test", samples=1)
        llm.state.faults.extend([401] * 500)
        plan = plan_for(draco, [vendor_lane(fake)], limit=1)
        with pytest.raises(DracoRunAborted, match="re-run"):
            run_draco(
                log,
                plan,
                judge,
                NORMALIZER,
                judge_concurrency=1,
            )
        assert len(events(log, "research_completed")) == 1  # the stored report survives
        llm.state.faults.clear()
        summary = run_draco(log, plan, judge, NORMALIZER)
    assert summary.researched == 0
    assert len(events(log, "judge_verdict")) == len(draco.tasks[0].criteria)


def test_an_attempt_cut_off_after_submit_is_abandoned_and_the_next_number_used(tmp_path, draco):
    """A key revoked between submit and poll (like a crash mid-research) leaves attempt 1 with
    logged exchanges but no terminal event; the re-run must not reuse its number, or the new
    exchanges would collide with the old ones and be dropped as repeats."""
    log = EventLog(tmp_path / "log")
    judge = OfflineJudge(samples=1)
    with FakeResearchServer(polls_to_complete=1, keys={"exa": KEY}) as fake:
        fake.add_faults("exa", None, Fault.status(401))  # submit lands, the first poll is refused
        first = run_draco(
            log,
            plan_for(draco, [vendor_lane(fake)], limit=1),
            judge,
            NORMALIZER,
        )
        assert first.aborted_lanes and not events(log, "research_completed")
        fake.reset(keys={"exa": KEY})
        second = run_draco(
            log,
            plan_for(draco, [vendor_lane(fake)], limit=1),
            judge,
            NORMALIZER,
        )
    assert second.status == "finished"
    calls = events(log, "provider_call_completed") + events(log, "provider_call_failed")
    by_attempt = Counter(c["payload"]["attempt"] for c in calls)
    assert by_attempt[1] == 2 and by_attempt[2] >= 2  # attempt 1's exchanges are kept
    (completed,) = events(log, "research_completed")
    assert completed["payload"]["attempt"] == 2
    attempt_2_ids = {c["event_id"] for c in calls if c["payload"]["attempt"] == 2}
    assert set(completed["payload"]["source_event_ids"]) == attempt_2_ids


def test_preflight_checks_every_system_without_starting_research(draco):
    from collectors.draco.runner import DracoPreflightFailed, preflight_lanes

    with FakeResearchServer(polls_to_complete=1, keys={"exa": KEY}) as fake:
        results = preflight_lanes([vendor_lane(fake)])
        assert results == [(LANE, "ok", "key accepted (agent runs list → HTTP 200)")]
        assert all(r.method == "GET" for r in fake.requests)  # nothing was submitted
        wrong = make_lane(LANE, base_urls=fake.base_urls(), environ={"EXA_API_KEY": "sk-wrong-key"})
        with pytest.raises(DracoPreflightFailed, match="auth_failed"):
            preflight_lanes([vendor_lane(fake), wrong])
