"""The live-URL marts against what the loopback site was built to produce and plain oracles."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

import pytest

from collectors.extraction.live.engines import VENDOR_ENGINES
from collectors.extraction.live.runner import plan_live_extraction, run_live_extraction
from tests.live_extraction.conftest import build_marts
from warehouse.log import EventLog

pytestmark = pytest.mark.slow  # builds the live marts with dbt (3 builds)

CONSENSUS = {"version": "consensus-1", "min_engines": 2, "min_words": 8, "independence": "provider"}


def test_every_unit_ends_in_exactly_one_terminal_event(live_build):
    terminals = Counter(
        (e["payload"]["item_id"], e["payload"]["system"])
        for e in live_build.events("live_extraction_recorded")
    )
    assert set(terminals) == set(live_build.plan.units) and set(terminals.values()) == {1}
    # raw first: every vendor terminal points at its stored provider call, every local one at a fetch
    ids = {e["event_id"]: e["event_type"] for e in live_build.events()}
    for event in live_build.events("live_extraction_recorded"):
        (source,) = event["payload"]["source_event_ids"]
        kind = (
            "page_fetched" if event["payload"]["settings"]["kind"] == "local" else "provider_call"
        )
        assert ids[source].startswith(kind)


def test_hygiene_lists_exactly_what_the_site_was_built_to_produce(live_build):
    rows = live_build.rows("select url, exclusion_reason from marts.live_extraction_hygiene")
    listed: dict[str, list[str]] = {"dead": [], "origin_5xx": [], "redirect_only": []}
    for row in rows:
        listed[row["exclusion_reason"]].append(row["url"])
    expected = live_build.site.expected_hygiene()
    assert {reason: sorted(urls) for reason, urls in listed.items()} == expected
    assert {reason: len(urls) for reason, urls in expected.items()} == {
        "dead": 2,
        "origin_5xx": 1,
        "redirect_only": 1,
    }
    # and nothing the site serves as content was excluded
    scored = live_build.rows(
        "select distinct url from marts.fct_live_extraction_pages where not excluded"
    )
    assert len(scored) == len(live_build.corpus.items) - 4


def normalize(text: str | None) -> str:
    return " ".join(unicodedata.normalize("NFKC", text or "").split())


def oracle_anchors(live_build, rule: dict) -> dict[str, list[tuple[str, list[str]]]]:
    """Consensus anchors from the stored events, in plain Python (the rule of
    int_live_extraction_anchors, written again from its docstring)."""
    non_content = {
        (r["item_id"], r["system"])
        for r in live_build.rows(
            "select item_id, system from marts.fct_live_extraction_pages where non_content"
        )
    }
    by_item: dict[str, list[dict]] = {}
    for event in live_build.events("live_extraction_recorded"):
        p = event["payload"]
        status = p["target_status_code"]
        raw_success = (
            p["outcome"] == "extracted"
            and (status is None or 200 <= status < 300)
            and normalize(p["output_text"])
        )
        if raw_success and (p["item_id"], p["system"]) not in non_content:
            group = (
                p["settings"].get("provider", f"local:{p['system']}")
                if rule["independence"] == "provider"
                else p["system"]
            )
            by_item.setdefault(p["item_id"], []).append(
                {**p, "group": group, "norm": normalize(p["output_text"])}
            )
    result = {}
    for item_id, rows in by_item.items():
        rows.sort(key=lambda r: (r["group"], r["system"]))
        anchors, seen = [], set()
        for row in rows:
            for line in row["output_text"].splitlines():
                for piece in re.split(r"(?<=[.!?])\s+", line):
                    passage = normalize(piece)
                    if (
                        not passage
                        or len(passage.split(" ")) < rule["min_words"]
                        or passage in seen
                    ):
                        continue
                    seen.add(passage)
                    confirming = [r for r in rows if passage in r["norm"]]
                    if len({r["group"] for r in confirming}) >= rule["min_engines"]:
                        anchors.append((passage, sorted(r["system"] for r in confirming)))
        if anchors:
            result[item_id] = anchors
    return result


def mart_anchors(rows) -> dict[str, list[tuple[str, list[str]]]]:
    out: dict[str, list[tuple[str, list[str]]]] = {}
    for row in sorted(rows, key=lambda r: (r["item_id"], r["anchor_index"])):
        out.setdefault(row["item_id"], []).append((row["anchor"], list(row["confirmed_by"])))
    return out


def test_consensus_anchors_equal_a_plain_python_oracle(live_build):
    rows = live_build.rows("select * from intermediate.int_live_extraction_anchors")
    assert {row["consensus_rule_version"] for row in rows} == {"consensus-1"}
    assert mart_anchors(rows) == oracle_anchors(live_build, CONSENSUS)
    # every article page got anchors; the non-content and excluded pages got none
    site = live_build.site
    with_anchors = {
        item.url for item in live_build.corpus.items if item.item_id in mart_anchors(rows)
    }
    content_kinds = {"article", "redirect_chain", "js_only", "slow", "huge", "non_utf8"}
    assert with_anchors == {site.url(p) for p in site.pages if p.kind in content_kinds}


def test_rescoring_the_consensus_rule_and_the_composite_needs_no_fetch(live_build, tmp_path):
    before = sum(1 for _ in live_build.log.read())
    strict = {**CONSENSUS, "version": "consensus-strict", "min_engines": 4}
    weights = {"completeness": 0.5, "success": 0.5, "f1": 0.0, "latency": 0.0, "throughput": 0.0}
    db_path = build_marts(
        live_build.log,
        tmp_path / "strict",
        {"live_consensus_rule": strict, "extraction_weights": weights},
    )
    assert sum(1 for _ in live_build.log.read()) == before  # nothing fetched, nothing appended
    import duckdb

    with duckdb.connect(str(db_path), read_only=True) as con:
        cursor = con.execute("select * from intermediate.int_live_extraction_anchors")
        names = [d[0] for d in cursor.description]
        rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        ground_truth = {
            r[0]
            for r in con.execute(
                "select distinct ground_truth from marts.fct_live_extraction_pages"
            ).fetchall()
        }
        board = con.execute(
            "select composite, completeness, useful_success_rate, weight_completeness, weight_f1 "
            "from marts.live_extraction_leaderboard"
        ).fetchall()
    assert mart_anchors(rows) == oracle_anchors(live_build, strict)
    assert ground_truth == {"consensus:consensus-strict"}
    assert len(rows) < len(
        live_build.rows("select * from intermediate.int_live_extraction_anchors")
    )
    for composite, completeness, useful, w_completeness, w_f1 in board:
        assert (w_completeness, w_f1) == (0.5, 0.0)
        assert composite == pytest.approx(0.5 * (completeness or 0) + 0.5 * (useful or 0))


def test_cost_per_1k_useful_successes_is_the_formula(live_build):
    board = {
        r["system"]: r
        for r in live_build.rows(
            "select * from marts.live_extraction_leaderboard where vertical = 'all'"
        )
    }
    useful = Counter(
        r["system"]
        for r in live_build.rows(
            "select system from marts.fct_live_extraction_pages where useful_success and not excluded"
        )
    )
    requests = Counter()
    for event in live_build.events("live_extraction_recorded"):
        requests[event["payload"]["system"]] += event["payload"]["requests_sent"]
    for name, engine in VENDOR_ENGINES.items():
        row = board[name]
        assert row["requests_sent"] == requests[name] and row["useful_successes"] == useful[name]
        if engine.price_usd_per_1k is None:
            assert row["cost_per_1k_useful_usd"] is None and row["price_basis"].startswith(
                "unknown"
            )
        else:
            expected = engine.price_usd_per_1k / 1000 * requests[name] / useful[name] * 1000
            assert row["cost_per_1k_useful_usd"] == pytest.approx(expected)
            assert str(row["price_snapshot_date"]) == engine.module.PRICE_SNAPSHOT
    assert board["trafilatura"]["cost_per_1k_useful_usd"] == 0.0


def test_composite_is_the_weighted_sum_with_its_weights_shown(live_build):
    import math

    for row in live_build.rows("select * from marts.live_extraction_leaderboard"):
        weights = (
            row["weight_completeness"],
            row["weight_success"],
            row["weight_f1"],
            row["weight_latency"],
            row["weight_throughput"],
        )
        assert weights == (0.40, 0.30, 0.20, 0.05, 0.05)
        expected = (
            0.40 * (row["completeness"] or 0)
            + 0.30 * (row["useful_success_rate"] or 0)
            + 0.20 * (row["token_f1"] or 0)
            + 0.05 * math.exp(-row["latency_p95_s"] / 10)
            + 0.05 * min(row["avg_output_bytes"] / 100_000, 1)
        )
        assert row["composite"] == pytest.approx(expected)
    verticals = {
        r["vertical"]
        for r in live_build.rows("select vertical from marts.live_extraction_leaderboard")
    }
    assert verticals == {"all", *{p.vertical for p in live_build.site.pages}}


def test_non_content_rules_fire_and_are_stored_per_row(live_build):
    site = live_build.site
    rows = live_build.rows(
        "select url, system, raw_success, non_content, non_content_rule_ids, non_content_rules_version from marts.fct_live_extraction_pages"
    )
    for row in rows:
        kind = site.page_for(row["url"]).kind
        if kind in ("anti_bot", "cookie_wall") and row["raw_success"]:
            assert row["non_content"], row
            expected = "cookie_wall" if kind == "cookie_wall" else "browser_check"
            assert expected in row["non_content_rule_ids"].split(",")
        if kind == "article":
            assert not row["non_content"], row
        assert row["non_content_rules_version"] == "2"


def test_js_only_page_is_a_useful_success_only_on_the_render_route(live_build, live_site, tmp_path):
    site, fakes = live_site
    js_url = next(site.url(p) for p in site.pages if p.kind == "js_only")
    rows = {
        r["system"]: r
        for r in live_build.rows(
            "select * from marts.fct_live_extraction_pages where url = ?", [js_url]
        )
    }
    rendered = {
        "nimble_extract",
        "firecrawl_scrape",
        "tavily_extract_advanced",
    }  # render "auto" -> nimble renders
    assert {system for system, row in rows.items() if row["useful_success"]} == rendered
    assert rows["nimble_extract"]["render_used"] == "vx8-browser"
    assert {rows[s]["render_used"] for s in ("trafilatura", "html-text", "readability-lxml")} == {
        "fast"
    }

    # the same page with nimble held on the fast route: not useful any more
    engines = ["nimble_extract", "firecrawl_scrape", "tavily_extract_advanced", "trafilatura"]
    plan = plan_live_extraction(live_build.corpus, engines, render="fast")
    log = EventLog(tmp_path / "log")
    run_live_extraction(log, plan, base_urls=fakes.base_urls(), environ=fakes.environ())
    db_path = build_marts(log, tmp_path / "dbt")
    import duckdb

    with duckdb.connect(str(db_path), read_only=True) as con:
        fast = dict(
            con.execute(
                "select system, useful_success from marts.fct_live_extraction_pages where url = ?",
                [js_url],
            ).fetchall()
        )
    assert fast == {
        "nimble_extract": False,
        "firecrawl_scrape": True,
        "tavily_extract_advanced": True,
        "trafilatura": False,
    }
