"""The live-URL benchmark end to end on the loopback site: one run of the local engines and the
five vendor fakes (over real HTTP), its events loaded into raw and the live marts built by dbt."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from collectors.extraction.live.corpus import UrlCorpus, load_urls
from collectors.extraction.live.engines import VENDOR_ENGINES
from collectors.extraction.live.loopback_site import LoopbackSite
from collectors.extraction.live.runner import LivePlan, plan_live_extraction, run_live_extraction
from tests.fakes.extraction_fakes import FakeExtractionVendors
from warehouse.events import Envelope
from warehouse.log import EventLog

REPO_ROOT = Path(__file__).resolve().parents[2]
DBT_TESTS = REPO_ROOT / "tests" / "dbt"
sys.path.insert(0, str(DBT_TESTS))
from dbt_harness import NO_UNIT_TESTS, run_dbt  # noqa: E402
from raw_events_fixture import insert_events  # noqa: E402

LOCAL = ["trafilatura", "readability-lxml", "html-text"]
ALL_ENGINES = [*LOCAL, *VENDOR_ENGINES]
LIVE_MARTS = (
    "+live_extraction_leaderboard +live_extraction_hygiene fct_live_extraction_anchors dim_events"
)


@dataclass
class LiveBuild:
    site: LoopbackSite
    corpus: UrlCorpus
    plan: LivePlan
    log: EventLog
    db_path: Path
    work: Path

    def rows(self, sql: str, params: list | None = None) -> list[dict]:
        with duckdb.connect(str(self.db_path), read_only=True) as con:
            cursor = con.execute(sql, params or [])
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def events(self, event_type: str | None = None) -> list[dict]:
        return [
            e for _r, e in self.log.read() if event_type is None or e["event_type"] == event_type
        ]


def build_marts(log: EventLog, work: Path, vars_: dict | None = None) -> Path:
    work.mkdir(parents=True, exist_ok=True)
    db_path = work / "warehouse.duckdb"
    if db_path.exists():
        db_path.unlink()
    insert_events(db_path, [Envelope.model_validate(e) for _r, e in log.read()])
    run_dbt(["build", *NO_UNIT_TESTS, "--select", LIVE_MARTS], db_path, work, vars_)
    return db_path


@pytest.fixture(scope="session")
def live_site(shared_data: Path):
    benchmark = shared_data / "article-extraction-benchmark"
    with (
        LoopbackSite(benchmark, articles=5, slow_s=0.5) as site,
        FakeExtractionVendors(site) as fakes,
    ):
        yield site, fakes


@pytest.fixture(scope="session")
def live_build(live_site, tmp_path_factory) -> LiveBuild:
    site, fakes = live_site
    work = tmp_path_factory.mktemp("live")
    corpus = load_urls(site.write_corpus(work / "urls.csv"))
    plan = plan_live_extraction(corpus, ALL_ENGINES, render="auto")
    log = EventLog(work / "log")
    summary = run_live_extraction(log, plan, base_urls=fakes.base_urls(), environ=fakes.environ())
    assert summary.status.startswith("finished"), summary.status
    db_path = build_marts(log, work / "dbt")
    return LiveBuild(site, corpus, plan, log, db_path, work)


def publish_live(live_build: LiveBuild, home: Path, more_models: str | None = None) -> Path:
    """The live build as the app reads it: a copy of its warehouse (with `more_models` built
    into it), published by bench's own publish into `home`/serve.duckdb. A warehouse file is not
    a snapshot: its dim_events is a view over raw.events, named by the warehouse's catalog."""
    import shutil

    from warehouse.publish import publish_snapshot

    work = home.parent / f"{home.name}-warehouse"
    work.mkdir(parents=True, exist_ok=True)
    warehouse = work / "warehouse.duckdb"
    shutil.copyfile(live_build.db_path, warehouse)
    if more_models:
        result = run_dbt(["run", "--select", more_models], warehouse, work / "dbt")
        assert result.returncode == 0, result.stdout[-3000:]
    home.mkdir(parents=True, exist_ok=True)
    head = live_build.log.head(live_build.log.manifest_records())
    serve = home / "serve.duckdb"
    publish_snapshot(warehouse, serve, {"log_head": head.to_json()})
    return serve
