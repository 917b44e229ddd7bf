"""Preflight rows read as a verdict: a passing probe's HTTP 404 is said to be expected."""

from __future__ import annotations

from bench.preflight_view import detail, verdict


def test_a_passing_404_probe_reads_as_ready_with_the_reason() -> None:
    # the research drivers' own detail for a key-accepted status probe
    # (collectors/products/research.py: a run id that does not exist)
    text = "HTTP 404 for a run id that does not exist"
    assert verdict("ok") == "[green]ready[/green]"
    assert detail("ok", text) == (
        "key accepted; the probe's HTTP 404 for a run id that does not exist is the expected answer"
    )


def test_failures_keep_their_detail_and_read_as_failures() -> None:
    assert "key refused" in verdict("auth_failed")
    assert detail("auth_failed", "HTTP 401") == "HTTP 401"
    assert verdict("something-new") == "something-new"


def test_a_detail_that_explains_its_404_is_kept_as_the_collector_wrote_it() -> None:
    # collectors/qa/answer_lanes.py: a 404 shows the key was not refused, not that it is valid
    text = "reachable, key not refused (HTTP 404 for an unknown run id; key validity not proven)"
    assert detail("ok", text) == text
