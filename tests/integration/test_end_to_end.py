"""log → dlt → dbt → publish, through the real CLI, on the real benchmark and the demo corpus."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from tests.bench_cli import BenchResult, run_bench
from tests.log_files import segment_bytes, write_segment
from warehouse.log import EventLog

pytestmark = pytest.mark.slow

REFERENCE = {  # methodology.md §4.2: F1 / precision / recall / accuracy, upstream README
    "trafilatura": (0.958, 0.938, 0.978, 0.293),
    "readability-lxml": (0.922, 0.913, 0.931, 0.315),
    "html-text": (0.665, 0.500, 0.994, 0.000),
}


def bench(home: Path, *args: str, check: bool = True) -> BenchResult:
    return run_bench(home, *args, check=check)


def marts(home: Path, sql: str, params=None):
    with duckdb.connect(str(home / "serve.duckdb"), read_only=True) as con:
        return con.execute(sql, params or []).fetchall()


@pytest.fixture(scope="module")
def reference_home(tmp_path_factory, shared_data) -> Path:
    home = tmp_path_factory.mktemp("reference")
    bench(
        home,
        "run",
        "extraction",
        "--corpus",
        "article-extraction-benchmark",
        "--engines",
        ",".join(REFERENCE),
    )
    return home


def test_shingle_marts_reproduce_the_published_reference_rows(reference_home):
    rows = marts(
        reference_home,
        "select system, shingle_f1, shingle_precision, shingle_recall, shingle_accuracy, n_items "
        "from marts.extraction_leaderboard",
    )
    got = {system: tuple(round(v, 3) for v in values) for system, *values, n in rows}
    assert {system: n for system, *_, n in rows} == dict.fromkeys(REFERENCE, 181)
    assert got == REFERENCE


def test_every_page_row_traces_back_to_its_events(reference_home):
    orphans = marts(
        reference_home,
        "select count(*) from marts.fct_extraction_pages p "
        "left join marts.dim_events e on e.event_id = p.extraction_event_id "
        "where e.event_id is null or e.content_sha256 <> p.extraction_content_sha256",
    )
    assert orphans == [(0,)]
    assert marts(reference_home, "select count(*) from marts.fct_extraction_pages") == [(181 * 3,)]


def test_rerunning_a_finished_run_is_a_noop(reference_home):
    before = marts(reference_home, "select count(*) from marts.dim_events")
    proc = bench(
        reference_home,
        "run",
        "extraction",
        "--corpus",
        "article-extraction-benchmark",
        "--engines",
        ",".join(REFERENCE),
    )
    assert "already finished" in proc.stderr
    assert marts(reference_home, "select count(*) from marts.dim_events") == before


def test_rescore_changes_composites_without_running_any_engine(reference_home, monkeypatch):
    before = dict(
        marts(reference_home, "select system, composite from marts.extraction_leaderboard")
    )
    # Every engine's extract() is a tripwire for this in-process rescore: no engine may run.
    from collectors.extraction import engines

    def tripwire(*_args, **_kwargs):
        raise AssertionError("an engine was invoked during rescore")

    for engine in engines.ENGINES.values():
        monkeypatch.setattr(engine, "extract", tripwire)
    bench(
        reference_home,
        "rescore",
        "--weights",
        "completeness=1,success=0,f1=0,latency=0,throughput=0",
    )
    after = marts(
        reference_home,
        "select system, composite, w_completeness, w_success, w_f1, w_latency, w_throughput "
        "from marts.extraction_leaderboard",
    )
    for system, composite, *weights in after:
        assert weights == [1.0, 0.0, 0.0, 0.0, 0.0]
        assert composite != pytest.approx(before[system])
    completeness = dict(
        marts(reference_home, "select system, completeness from marts.extraction_leaderboard")
    )
    assert {s: c for s, c, *_ in after} == pytest.approx(completeness)
    bench(reference_home, "rescore", "--reset")
    assert dict(
        marts(reference_home, "select system, composite from marts.extraction_leaderboard")
    ) == (pytest.approx(before))


def test_verify_passes_and_then_names_a_tampered_line(reference_home, tmp_path):
    assert "log intact" in bench(reference_home, "verify").stdout
    import shutil

    copy = tmp_path / "tampered"
    shutil.copytree(reference_home / "log", copy / "log")
    segment = EventLog(copy / "log").segments()[0]
    lines = segment_bytes(segment).decode("utf-8").splitlines()
    lines[3] = lines[3].replace('"attempt":1', '"attempt":2')
    write_segment(segment, ("\n".join(lines) + "\n").encode("utf-8"))
    proc = bench(copy, "verify", check=False)
    assert proc.returncode == 1
    assert f"{segment.name}:4" in proc.stderr


def test_export_lists_the_marts_and_writes_to_stdout(reference_home):
    listed = bench(reference_home, "export", "--list").stdout.split()
    assert {"extraction_leaderboard", "fct_extraction_pages", "dim_runs", "dim_events"} <= set(
        listed
    )
    stdout = bench(reference_home, "export", "dim_runs", "--format", "csv").stdout
    assert stdout.startswith("run_id,")


# --list and stdout do not depend on the format: checked once above, not once per format
@pytest.mark.parametrize("fmt", ["csv", "json", "parquet"])
def test_export_every_format(reference_home, tmp_path, fmt):
    out = tmp_path / f"board.{fmt}"
    bench(reference_home, "export", "extraction_leaderboard", "--format", fmt, "--out", str(out))
    if fmt == "csv":
        assert out.read_text().splitlines()[0].startswith("run_id,")
        assert len(out.read_text().splitlines()) == 4
    elif fmt == "json":
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert {r["system"] for r in rows} == set(REFERENCE)
    else:
        assert pq.read_table(out).num_rows == 3


def test_export_refuses_unknown_marts(reference_home):
    proc = bench(reference_home, "export", "raw_events; drop table x", check=False)
    assert proc.returncode == 2 and "unknown mart" in proc.stderr


def test_bad_input_names_the_problem_and_writes_nothing(tmp_path):
    home = tmp_path / "home"
    proc = bench(home, "run", "extraction", "--corpus", str(tmp_path / "nope"), check=False)
    assert proc.returncode == 2 and "nope" in proc.stderr
    proc = bench(home, "rescore", "--weights", "speed=2", check=False)
    assert proc.returncode == 2 and "speed" in proc.stderr
    assert EventLog(home / "log").segments() == []
