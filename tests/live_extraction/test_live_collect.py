"""Collection side of the live-URL benchmark: the URL file, the fetcher, the vendor wire
shapes (held to the vendors' SDK types), the price seed, and resume after kill -9."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from collectors.extraction.live.corpus import UrlCorpusError, load_urls
from collectors.extraction.live.engines import VENDOR_ENGINES, VendorClient
from collectors.extraction.live.fetcher import (
    FetchSettings,
    decode_body,
    fetch_page,
    new_fetch_client,
)
from warehouse.log import EventLog

REPO = Path(__file__).resolve().parents[2]


# --- the URL file -------------------------------------------------------------------------


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "url,render\nhttp://a/x,fast\n",
            "urls.csv:1: header must have url,vertical[,render]; missing vertical",
        ),
        ("url,vertical\nhttp://a/x,\n", "urls.csv:2: field 'vertical' is missing or empty"),
        ("url,vertical\nftp://a/x,news\n", "urls.csv:2: field 'url' must be an http(s) URL"),
        (
            "url,vertical,render\nhttp://a/x,news,slow\n",
            "urls.csv:2: field 'render' must be one of auto, fast, full",
        ),
        (
            "url,vertical\nhttp://a/x,news\nhttp://a/x,tech\n",
            "urls.csv:3: field 'url' repeats line 2",
        ),
        ("url,vertical,colour\nhttp://a/x,news,red\n", "urls.csv:1: unknown column(s) colour"),
    ],
)
def test_a_bad_csv_names_the_file_line_and_field(tmp_path, text, message):
    with pytest.raises(
        UrlCorpusError,
        match=message.replace("(", r"\(")
        .replace(")", r"\)")
        .replace("[", r"\[")
        .replace("]", r"\]"),
    ):
        load_urls(write(tmp_path / "urls.csv", text))


def test_jsonl_and_csv_give_the_same_items(tmp_path):
    rows = [("http://a.test/1", "news", ""), ("http://a.test/2", "tech", "full")]
    with (tmp_path / "urls.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["url", "vertical", "render"])
        writer.writerows(rows)
    jsonl = "\n".join(
        json.dumps({"url": u, "vertical": v, **({"render": r} if r else {})}) for u, v, r in rows
    )
    from_csv = load_urls(tmp_path / "urls.csv")
    from_jsonl = load_urls(write(tmp_path / "urls.jsonl", jsonl + "\n"))
    assert from_csv.items == from_jsonl.items
    assert [item.render for item in from_csv.items] == [None, "full"]
    with pytest.raises(UrlCorpusError, match=r"urls.jsonl:1: field 'vertical' must be a string"):
        load_urls(
            write(tmp_path / "urls.jsonl", json.dumps({"url": "http://a/x", "vertical": 3}) + "\n")
        )


# --- the fetcher ----------------------------------------------------------------------------


async def fetch(url: str, settings: FetchSettings | None = None):
    settings = settings or FetchSettings()
    async with new_fetch_client(settings) as client:
        return await fetch_page(
            client, url, item_id="i", attempt=1, render_requested="auto", settings=settings
        )


def test_fetcher_records_redirect_chains_loops_refusals_and_charsets(live_site):
    import asyncio

    site, _fakes = live_site
    by_kind = {page.kind: site.url(page) for page in site.pages}

    chain = asyncio.run(fetch(by_kind["redirect_chain"]))
    assert [hop.status_code for hop in chain.redirect_chain] == [301, 302, 307]
    assert chain.status_code == 200 and chain.final_url.endswith("/amp/story")

    loop = asyncio.run(fetch(by_kind["redirect_loop"]))
    assert (
        loop.error_class == "redirect_loop"
        and loop.status_code is None
        and len(loop.redirect_chain) == 2
    )

    dead = asyncio.run(fetch(by_kind["dead_host"]))
    assert dead.error_class == "connection" and dead.body is None

    latin = asyncio.run(fetch(by_kind["non_utf8"]))
    assert latin.encoding == "windows-1252" and "\ufffd" not in latin.body
    raw = httpx.get(by_kind["non_utf8"]).content
    assert latin.body == raw.decode("cp1252") and latin.body_bytes == len(raw)

    capped = asyncio.run(fetch(by_kind["huge"], FetchSettings(max_bytes=100_000)))
    assert capped.body_truncated and capped.body_bytes == 100_000
    assert asyncio.run(fetch(by_kind["huge"])).body_bytes > 2_000_000


def test_decode_prefers_the_header_then_meta_then_utf8():
    assert decode_body("café".encode("cp1252"), "text/html; charset=windows-1252") == (
        "café",
        "windows-1252",
    )
    assert decode_body(b'<meta charset="iso-8859-1">caf\xe9', None) == (
        '<meta charset="iso-8859-1">café',
        "iso-8859-1",
    )
    assert decode_body(b"caf\xc3\xa9", None) == ("café", "utf-8")


# --- the vendor wire shapes -----------------------------------------------------------------


def test_requests_match_the_vendor_docs_and_responses_parse_with_the_sdk_types(live_site):
    import asyncio

    from nimble_python.types.extract_run_response import ExtractRunResponse
    from parallel.types.extract_response import ExtractResponse

    site, fakes = live_site
    url = site.url(next(p for p in site.pages if p.kind == "article"))
    client = VendorClient(
        VENDOR_ENGINES.values(), base_urls=fakes.base_urls(), environ=fakes.environ()
    )

    async def call_all():
        async with client:
            return {
                name: await client.extract(name, url, "full", item_id="i", attempt=1)
                for name in VENDOR_ENGINES
            }

    fakes.requests.clear()
    results = asyncio.run(call_all())
    sent = {request["path"]: request for request in fakes.requests}
    assert sent["/nimble/v2/extract"]["body"] == {
        "url": url,
        "render": True,
        "formats": ["markdown"],
    }
    firecrawl = sent["/firecrawl/v2/scrape"]["body"]
    assert (
        firecrawl["maxAge"] == 0
        and firecrawl["onlyMainContent"] is True
        and firecrawl["formats"] == ["markdown"]
    )
    assert sent["/exa/contents"]["body"]["maxAgeHours"] == 0 and sent["/exa/contents"]["body"][
        "urls"
    ] == [url]
    assert {r["body"]["extract_depth"] for p, r in sent.items() if p == "/tavily/extract"} <= {
        "basic",
        "advanced",
    }
    policy = sent["/parallel/v1/extract"]["body"]["advanced_settings"]["fetch_policy"]
    assert policy["max_age_seconds"] >= 600  # the documented minimum
    for name, result in results.items():
        assert result.completed and result.value is not None and result.value.text, name
        assert result.cost_usd == (
            VENDOR_ENGINES[name].price_usd_per_1k / 1000
            if VENDOR_ENGINES[name].price_usd_per_1k is not None
            else None
        )
        stored = json.dumps(result.payload.model_dump(mode="json"))
        assert (
            fakes.environ()[VENDOR_ENGINES[name].module.KEY_ENV] not in stored
        )  # keys never stored
    ExtractRunResponse.model_validate(results["nimble_extract"].outcome.body_json)
    ExtractResponse.model_validate(results["parallel_extract"].outcome.body_json)


def test_every_vendor_module_records_its_sdk_check_and_the_price_seed_matches():
    from collectors.http.vendor_truth import declared_checks, stale_checks

    extract = {c.module for c in declared_checks(["collectors.vendors"])}
    extract = {m.split(".")[2] for m in extract if m.endswith(".extract")}
    assert extract == {"nimble", "firecrawl", "exa", "tavily", "parallel"}
    assert (
        stale_checks(["collectors.vendors"]) == []
    )  # the installed SDKs are the ones the modules were checked against
    seed = {
        row["system"]: row
        for row in csv.DictReader((REPO / "dbt_project/seeds/extraction_prices.csv").open())
    }
    assert set(seed) == set(VENDOR_ENGINES)
    for name, engine in VENDOR_ENGINES.items():
        module = engine.module
        assert module.SDK_CHECK.checked_on == "2026-12-01" and module.SDK_CHECK.docs.startswith(
            "https://"
        )
        price = (
            float(seed[name]["usd_per_1k_requests"]) if seed[name]["usd_per_1k_requests"] else None
        )
        assert price == engine.price_usd_per_1k, name
        assert seed[name]["price_snapshot_date"] == module.PRICE_SNAPSHOT
        assert seed[name]["provider"] == module.PROVIDER


# --- resume after kill -9 -------------------------------------------------------------------


def test_kill_9_mid_run_then_resume_leaves_exactly_one_terminal_per_unit(live_site, tmp_path):
    site, fakes = live_site
    urls = site.write_corpus(tmp_path / "urls.csv")
    engines = "trafilatura,html-text,nimble_extract,tavily_extract_basic,exa_contents"
    env = {
        **os.environ,
        **fakes.environ(),
        "BENCH_HOME": str(tmp_path / "home"),
        **{f"BENCH_BASE_URL_{vendor.upper()}": base for vendor, base in fakes.base_urls().items()},
    }
    bench = [sys.executable, "-m", "bench.cli"]
    args = [*bench, "run", "extraction", "--urls", str(urls), "--systems", engines, "--no-score"]
    log = EventLog(tmp_path / "home" / "log")

    def terminals():
        return (
            [e for _r, e in log.read() if e["event_type"] == "live_extraction_recorded"]
            if log.log_dir.exists()
            else []
        )

    process = subprocess.Popen(
        args, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline and process.poll() is None and len(terminals()) < 8:
            time.sleep(0.05)
        assert process.poll() is None, f"the run ended before the kill: {process.communicate()}"
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
    partial = len(terminals())
    assert 0 < partial < len(site.pages) * 5
    assert not [e for _r, e in log.read() if e["event_type"] == "run_finished"]

    resumed = subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    counts = Counter((e["payload"]["item_id"], e["payload"]["system"]) for e in terminals())
    assert len(counts) == len(site.pages) * 5 and set(counts.values()) == {1}
    assert sum(1 for _r, e in log.read() if e["event_type"] == "run_finished") == 1
    again = subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and "already finished" in again.stdout + again.stderr
