"""The one fixture warehouse of tests/dbt, tests/dbt_qa and tests/dbt_draco: every family's events
in one raw.events, one `dbt build` for the whole session (the unit tests left out, as a user's
build does: tests/cli/test_bench_test_cmd.py runs them on a copy of this warehouse).

A full build costs ~1-2 min on 2 cores, so the three families share it instead of building their
own (issue #10). Under pytest-xdist the first worker that asks builds it (tests/shared_build.py);
the others wait for it and read the same DuckDB file read-only.
Tests that rebuild models copy the file first (`shutil.copy(wh.path, ...)`).

Inputs:
* extraction (tests/dbt/extraction_cases.py): hand-made edge cases, an import run, a run of
  another benchmark, the 181 real article-extraction-benchmark pages, an orphan output (warned
  about by `assert_extraction_outcomes_are_on_the_grid`, the build's one warning) and five
  events loaded twice into raw from a second segment (staging dedupes);
* QA (tests/dbt_qa/qa_fixture.py): the real offline runner's events and a crafted vendor run;
* DRACO (tests/dbt_draco/draco_fixture.py): a registration run and a scored run, loaded through
  the real dlt ingest (a log, then `ingest_log`), so raw.events is dlt's table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from dbt_harness import NO_UNIT_TESTS, BuiltWarehouse, run_dbt
from extraction_cases import edge_case_runs, real_data_run
from raw_events_fixture import PRODUCER, Clock, insert_events

from tests.shared_build import built_once
from warehouse.events import ExtractionCompleted, make_event

# The families' run ids (BuiltWarehouse.run_ids of each), then every run the events start.
_BUILD_OUTPUT = "dbt-build.log"


@dataclass(frozen=True)
class FixtureWarehouse:
    path: Path
    work: Path
    build_output: str
    family_run_ids: dict[str, dict[str, str]]  # "extraction" | "qa" | "draco" -> name -> run id
    all_run_ids: frozenset[str]  # every run_started in raw.events, of every family

    def family(self, name: str) -> BuiltWarehouse:
        return BuiltWarehouse(self.path, self.work, self.family_run_ids[name], self.build_output)


def warned_tests(build_output: str) -> list[str]:
    """Names of the data tests that ended in WARN, from dbt's per-node result lines."""
    plain = re.sub(r"\x1b\[[0-9;]*m", "", build_output)
    return sorted(set(re.findall(r"\d+ of \d+ WARN \d+ (\w+)", plain)))


def _extraction_events() -> tuple[dict[str, str], list, list]:
    clock = Clock()
    edge_events = edge_case_runs(clock)
    real = real_data_run(clock)
    edge_run_id = next(e.run_id for e in edge_events if e.event_type == "run_started")
    # an output for an item the run never registered: cannot be scored, must be warned about
    orphan = make_event(
        ExtractionCompleted(
            item_id="ghost",
            system="alpha",
            system_version="1.0",
            attempt=1,
            source="engine",
            render_path=None,
            input_sha256=None,
            output_text="boo",
            output_bytes=3,
        ),
        run_id=edge_run_id,
        producer=PRODUCER,
        occurred_at="2026-11-30T12:00:02.500000Z",
    )
    run_ids = {
        event.payload["spec"]["name"]: event.run_id
        for event in edge_events + real.events
        if event.event_type == "run_started"
    }
    return run_ids, [*edge_events, orphan, *real.events], edge_events[:5]


def build(work: Path) -> FixtureWarehouse:
    from draco_fixture import build_fixture, ingest
    from qa_fixture import offline_runner_events, vendor_run_events

    work.mkdir(parents=True, exist_ok=True)
    draco = build_fixture()
    db_path = ingest(draco.events, work)  # dlt creates raw.events; the rest is inserted beside
    extraction_ids, extraction, duplicated = _extraction_events()
    qa_offline = offline_runner_events(work / "qa-home")
    vendor_run_id, qa_vendor = vendor_run_events(Clock())
    insert_events(db_path, [*extraction, *qa_offline, *qa_vendor])
    # the same events loaded twice into raw (e.g. an append instead of a merge): staging dedupes
    insert_events(db_path, duplicated, segment="zz-duplicate.jsonl")
    result = run_dbt(["build", *NO_UNIT_TESTS], db_path, work)
    all_events = [*draco.events, *extraction, *qa_offline, *qa_vendor]
    (work / _BUILD_OUTPUT).write_text(result.stdout)  # for a reader debugging a failed test
    return FixtureWarehouse(
        path=work / "warehouse.duckdb",
        work=work,
        build_output=result.stdout,
        family_run_ids={
            "extraction": extraction_ids,
            "qa": {"vendor": vendor_run_id},
            "draco": {
                "scored": draco.scored_run_id,
                "registration": draco.registration_run_id,
            },
        },
        all_run_ids=frozenset(e.run_id for e in all_events if e.event_type == "run_started"),
    )


def shared(tmp_path_factory) -> FixtureWarehouse:
    """Built once per session for every xdist worker (tests/shared_build.py)."""
    return built_once(tmp_path_factory, "fixture_warehouse", build)
