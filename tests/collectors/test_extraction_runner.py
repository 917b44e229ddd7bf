"""Engine runs: one terminal event per (item, engine), resume, failures as facts, retries."""

from __future__ import annotations

from collections import Counter

import pytest

from collectors.extraction.anchors import ANCHOR_RULE_VERSION, build_anchors
from collectors.extraction.engines import ENGINES, Engine, EngineUnavailable
from collectors.extraction.runner import plan_extraction, run_extraction
from warehouse.events import PAYLOAD_MODELS, TERMINAL_EXTRACTION_EVENTS, parse_payload
from warehouse.log import EventLog
from warehouse.verify import verify_log

FAST_ENGINES = ["html-text", "trafilatura"]


def fake_engine(monkeypatch: pytest.MonkeyPatch, name: str, behaviour) -> Engine:
    """Register an engine whose extract() is `behaviour(html, url)` (version: pydantic's)."""
    engine = Engine(
        name=name, distribution="pydantic", settings={"fake": True}, build=lambda: behaviour
    )
    monkeypatch.setitem(ENGINES, name, engine)
    return engine


def terminal_units(events: list[dict]) -> Counter:
    return Counter(
        (e["payload"]["item_id"], e["payload"]["system"], e["payload"]["attempt"])
        for e in events
        if e["event_type"] in TERMINAL_EXTRACTION_EVENTS
    )


def test_one_terminal_event_per_item_and_engine(event_log, demo_corpus, events_of):
    progress: list[tuple[int, int]] = []
    summary = run_extraction(
        event_log,
        demo_corpus,
        FAST_ENGINES,
        limit=4,
        argv=["bench", "extract"],
        on_progress=lambda done, total: progress.append((done, total)),
    )
    assert (summary.planned, summary.completed, summary.failed) == (8, 8, 0)
    assert not summary.already_finished and summary.status == "finished"
    assert progress[0] == (0, 8) and progress[-1] == (8, 8)

    events = events_of(event_log)
    counts = Counter(e["event_type"] for e in events)
    assert counts == {
        "run_started": 1,
        "item_registered": 4,
        "extraction_completed": 8,
        "run_finished": 1,
    }
    assert {e["run_id"] for e in events} == {summary.run_id}
    units = terminal_units(events)
    assert set(units.values()) == {1}
    expected = {(i.item_id, e, 1) for i in demo_corpus.items[:4] for e in FAST_ENGINES}
    assert set(units) == expected
    for event in events:  # every payload validates against its frozen model
        assert parse_payload(event["event_type"], event["payload"])
        assert event["schema_version"] == PAYLOAD_MODELS[event["event_type"]].schema_version
    assert verify_log(event_log).intact


def test_event_contents(event_log, demo_corpus, events_of):
    summary = run_extraction(event_log, demo_corpus, ["trafilatura"], limit=1, argv=["x", "y"])
    item = demo_corpus.items[0]
    (started,) = events_of(event_log, "run_started")
    spec = started["payload"]["spec"]
    assert started["payload"]["spec_sha256"] == summary.spec_sha256
    assert spec["benchmark"] == "extraction" and spec["item_ids"] == [item.item_id]
    assert spec["dataset_sha256"] == demo_corpus.dataset.sha256
    assert spec["systems"][0]["version"] == ENGINES["trafilatura"].version
    assert started["payload"]["dataset"]["name"] == "demo-pydoc-topics"
    assert started["payload"]["argv"] == ["x", "y"]

    (registered,) = events_of(event_log, "item_registered")
    payload = registered["payload"]
    assert payload["ground_truth_text"] == item.truth_text
    assert payload["anchors"] == build_anchors(item.truth_text)
    assert payload["anchor_rule_version"] == ANCHOR_RULE_VERSION
    assert (payload["input_sha256"], payload["input_bytes"]) == (item.html_sha256, item.html_bytes)

    (completed,) = events_of(event_log, "extraction_completed")
    result = completed["payload"]
    assert result["output_text"] == ENGINES["trafilatura"].extract(item.read_html().html)
    assert result["output_bytes"] == len(result["output_text"].encode("utf-8"))
    assert result["source"] == "engine" and result["render_path"] == "raw_html"
    assert result["input_sha256"] == item.html_sha256
    assert result["settings"] == dict(ENGINES["trafilatura"].settings)
    assert 0 < result["latency_ms"] < 10_000

    (finished,) = events_of(event_log, "run_finished")
    assert finished["payload"]["terminal_events"] == 1
    assert (finished["payload"]["completed"], finished["payload"]["failed"]) == (1, 0)


def test_run_id_is_stable_and_depends_on_the_spec(demo_corpus):
    a = plan_extraction(demo_corpus, ["trafilatura", "html-text"])
    b = plan_extraction(demo_corpus, ["html-text", "trafilatura", "html-text"])
    assert a.run_id == b.run_id and a.spec_sha256 == b.spec_sha256
    assert plan_extraction(demo_corpus, ["html-text"]).run_id != a.run_id
    assert plan_extraction(demo_corpus, FAST_ENGINES, limit=3).run_id != a.run_id
    with pytest.raises(ValueError, match="positive"):
        plan_extraction(demo_corpus, FAST_ENGINES, limit=0)
    with pytest.raises(ValueError, match="no extraction engines"):
        plan_extraction(demo_corpus, [])


def test_rerun_after_completion_does_nothing(event_log, demo_corpus):
    run_extraction(event_log, demo_corpus, FAST_ENGINES, limit=3)
    lines_before = sum(1 for _ in event_log.read())
    segments_before = event_log.segments()
    again = run_extraction(event_log, demo_corpus, FAST_ENGINES, limit=3)
    assert again.already_finished and again.status == "already finished"
    assert (again.skipped_existing, again.completed, again.failed) == (6, 0, 0)
    assert sum(1 for _ in event_log.read()) == lines_before
    assert event_log.segments() == segments_before  # not even an empty segment


def test_interrupted_run_resumes_without_duplicates(event_log, demo_corpus, monkeypatch, events_of):
    calls = {"n": 0}

    def interrupt_on_fourth_page(html: str, url: str | None) -> str:
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt  # Ctrl-C mid-item: not an engine failure, not recorded
        return "text"

    fake_engine(monkeypatch, "flaky", interrupt_on_fourth_page)
    engines = ["flaky", "html-text"]
    with pytest.raises(KeyboardInterrupt):
        run_extraction(event_log, demo_corpus, engines, limit=6)

    partial = events_of(event_log)
    # Items 1-3 were appended whole (2 engines each); item 4 was in flight and is absent.
    assert len(terminal_units(partial)) == 6
    assert not events_of(event_log, "run_finished")
    assert verify_log(event_log).intact  # the interrupted writer still sealed its segment

    resumed = run_extraction(event_log, demo_corpus, engines, limit=6)
    assert (resumed.skipped_existing, resumed.completed, resumed.failed) == (6, 6, 0)
    events = events_of(event_log)
    units = terminal_units(events)
    assert len(units) == 12 and set(units.values()) == {1}
    assert len({e["event_id"] for e in events}) == len(events)
    assert Counter(e["event_type"] for e in events)["run_started"] == 1
    assert Counter(e["event_type"] for e in events)["item_registered"] == 6
    (finished,) = events_of(event_log, "run_finished")
    assert finished["payload"]["terminal_events"] == 12
    assert run_extraction(event_log, demo_corpus, engines, limit=6).already_finished


def test_limit_then_full_run_reuses_nothing_across_specs(event_log, demo_corpus):
    small = run_extraction(event_log, demo_corpus, ["html-text"], limit=2)
    full = run_extraction(event_log, demo_corpus, ["html-text"])
    assert small.run_id != full.run_id
    assert full.completed == len(demo_corpus.items) and full.skipped_existing == 0


def test_engine_exceptions_become_failure_events(event_log, demo_corpus, monkeypatch, events_of):
    def broken(html: str, url: str | None) -> str:
        raise ValueError("parser exploded " + "x" * 5000)

    fake_engine(monkeypatch, "broken", broken)
    fake_engine(monkeypatch, "empty", lambda html, url: None)
    summary = run_extraction(event_log, demo_corpus, ["broken", "empty"], limit=2)
    assert (summary.completed, summary.failed) == (2, 2)
    assert summary.status == "finished with 2 failures"

    failures = events_of(event_log, "extraction_failed")
    assert len(failures) == 2
    for failure in failures:
        payload = failure["payload"]
        assert payload["system"] == "broken" and payload["attempt"] == 1
        assert payload["error_class"] == "ValueError"
        assert payload["error_message"].startswith("parser exploded xxx")
        assert (
            len(payload["error_message"]) < 2_100
            and "[truncated, 5016 chars]" in payload["error_message"]
        )
        assert payload["latency_ms"] >= 0
    nothing = events_of(event_log, "extraction_completed")
    assert {e["payload"]["system"] for e in nothing} == {"empty"}
    assert all(e["payload"]["output_text"] is None for e in nothing)
    assert all(e["payload"]["output_bytes"] == 0 for e in nothing)
    (finished,) = events_of(event_log, "run_finished")
    assert (finished["payload"]["completed"], finished["payload"]["failed"]) == (2, 2)


def test_non_string_output_is_a_failure(event_log, demo_corpus, monkeypatch, events_of):
    fake_engine(monkeypatch, "bytes", lambda html, url: b"raw")
    run_extraction(event_log, demo_corpus, ["bytes"], limit=1)
    (failure,) = events_of(event_log, "extraction_failed")
    assert failure["payload"]["error_class"] == "TypeError"


def test_retry_failed_reruns_only_failures_with_the_next_attempt(
    event_log, demo_corpus, monkeypatch, events_of
):
    healthy = {"ok": False}

    def sometimes(html: str, url: str | None) -> str:
        if not healthy["ok"]:
            raise RuntimeError("temporarily broken")
        return "recovered"

    fake_engine(monkeypatch, "sometimes", sometimes)
    engines = ["html-text", "sometimes"]
    first = run_extraction(event_log, demo_corpus, engines, limit=3)
    assert (first.completed, first.failed) == (3, 3)

    healthy["ok"] = True
    plain_rerun = run_extraction(event_log, demo_corpus, engines, limit=3)
    assert plain_rerun.already_finished  # failures are terminal: no silent retry

    retried = run_extraction(event_log, demo_corpus, engines, limit=3, retry_failed=True)
    assert (retried.skipped_existing, retried.completed, retried.failed) == (3, 3, 0)
    assert retried.run_id == first.run_id
    units = terminal_units(events_of(event_log))
    assert sorted(attempt for (_, system, attempt) in units if system == "sometimes") == [
        1,
        1,
        1,
        2,
        2,
        2,
    ]
    finished = sorted(
        (e["payload"] for e in events_of(event_log, "run_finished")),
        key=lambda p: p["terminal_events"],
    )
    assert [(p["terminal_events"], p["completed"], p["failed"]) for p in finished] == [
        (6, 3, 3),
        (9, 6, 0),
    ]
    again = run_extraction(event_log, demo_corpus, engines, limit=3, retry_failed=True)
    assert again.already_finished


def test_unavailable_engine_fails_before_anything_is_written(event_log, demo_corpus, monkeypatch):
    def build():
        raise ImportError("No module named 'missing_lib'")

    monkeypatch.setitem(
        ENGINES,
        "missing",
        Engine(name="missing", distribution="pydantic", settings={}, build=build),
    )
    with pytest.raises(EngineUnavailable, match="missing_lib"):
        run_extraction(event_log, demo_corpus, ["html-text", "missing"], limit=2)
    assert event_log.segments() == []


def test_run_over_an_existing_log_of_other_runs(event_log: EventLog, demo_corpus):
    run_extraction(event_log, demo_corpus, ["html-text"], limit=2)
    other = run_extraction(event_log, demo_corpus, ["trafilatura"], limit=2)
    assert other.completed == 2 and not other.already_finished
