"""`bench import qa-results --format jsonl|csv --map ...`: a per-row SimpleQA results file in the
common shape (one JSON object per line, grade letters, latency in seconds) and a CSV with other
column names (grade words, latency in ms, URLs, a cost per row) import without a conversion
script, through the real CLI; the files are docs/examples/*, the very ones docs/imports.md shows.
The marts dbt builds from them reproduce the accuracy, the latency percentiles and the mean and
total cost computed here from the files (latency_source / cost basis 'imported'); a file with
three bad rows reports all three and writes nothing."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import duckdb
import pytest

from collectors.imports.qa_results import import_qa_results
from collectors.imports.source_file import ImportFormatError
from collectors.qa.simpleqa import load_simpleqa
from tests.bench_cli import BenchResult, run_bench
from warehouse.log import EventLog

REPO = Path(__file__).resolve().parents[2]
SIMPLEQA = REPO / ".." / "shared" / "data" / "simpleqa" / "simple_qa_test_set.csv"
EXAMPLES = REPO / "docs" / "examples"
JSONL = EXAMPLES / "simpleqa_results.jsonl"
CSV = EXAMPLES / "simpleqa_results.csv"
JSONL_MAP = "question=problem,answer=predicted,grade=grade,latency_s=latency"
CSV_MAP = (
    "question=query,answer=response,grade=verdict,latency_ms=elapsed_ms,urls=sources,cost_usd=usd"
)


def bench(home: Path, *args: str) -> BenchResult:
    return run_bench(home, *args, env={"COLUMNS": "200"}, cwd=REPO, check=False)


def quantile_cont(values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (DuckDB's quantile_cont), written plainly."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def test_docs_show_the_example_files_and_maps():
    doc = (REPO / "docs" / "imports.md").read_text()
    for shown in (
        "docs/examples/simpleqa_results.jsonl",
        JSONL_MAP,
        "docs/examples/simpleqa_results.csv",
        CSV_MAP,
    ):
        assert shown in doc


@pytest.mark.slow  # runs `dbt build` through `bench import ... --score`
def test_per_row_files_import_with_a_map_and_their_latency_and_cost_reach_the_marts(tmp_path):
    home = tmp_path / "home"
    first = bench(
        home, "import", "qa-results", str(JSONL), "--format", "jsonl", "--lane", "mine",
        "--grader-label", "gpt-4o", "--map", JSONL_MAP, "--no-score",
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert "unmatched" not in first.stderr
    second = bench(
        home, "import", "qa-results", str(CSV), "--format", "csv", "--lane", "theirs",
        "--grader-label", "gpt-4o", "--map", CSV_MAP,
    )  # fmt: skip
    assert second.returncode == 0, second.stderr

    records = [json.loads(line) for line in JSONL.read_text().splitlines() if line.strip()]
    rows = list(csv.DictReader(CSV.open(newline="")))
    expected = {
        "mine": (
            sum(r["grade"] == "A" for r in records) / len(records),
            [r["latency"] * 1000 for r in records],
        ),
        "theirs": (
            sum(r["verdict"] == "CORRECT" for r in rows) / len(rows),
            [float(r["elapsed_ms"]) for r in rows],
        ),
    }
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        board = {
            lane: rest
            for lane, *rest in con.execute(
                "select lane, grader_id, n_questions, strict_accuracy, latency_p50_ms, "
                "latency_p95_ms, latency_source, mrr from marts.qa_leaderboard"
            ).fetchall()
        }
        answers = con.execute(
            "select lane, round_trip_ms, latency_source from marts.fct_qa_answers "
            "order by lane, sample_order"
        ).fetchall()
    assert set(board) == {"mine", "theirs"}
    for lane, (accuracy, latencies) in expected.items():
        grader, n, strict, p50, p95, source, _ = board[lane]
        assert grader == f"imported:{'jsonl' if lane == 'mine' else 'csv'}:gpt-4o"
        assert n == len(latencies)
        assert strict == pytest.approx(accuracy)
        assert p50 == pytest.approx(quantile_cont(latencies, 0.5))
        assert p95 == pytest.approx(quantile_cont(latencies, 0.95))
        assert source == "imported"
        assert [(ms, s) for ln, ms, s in answers if ln == lane] == [
            (pytest.approx(ms), "imported") for ms in latencies
        ]
    assert board["mine"][-1] is None  # no URLs in the file: no retrieval metrics, not zeros
    assert board["theirs"][-1] is not None  # the mapped `sources` column is scored

    # the CSV's `usd` column (cost_usd=usd): each row's cost, and the lane's price where our
    # runs put a list price: 1000 x the mean per 1k, the sum for the run, basis 'imported'
    costs = [float(row["usd"]) for row in rows]
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        prices = {
            lane: rest
            for lane, *rest in con.execute(
                "select lane, usd_per_1k, run_cost_usd, price_basis, price_snapshot_date "
                "from marts.qa_leaderboard"
            ).fetchall()
        }
        row_costs = con.execute(
            "select lane, cost_usd, cost_basis from marts.fct_qa_answers order by lane, sample_order"
        ).fetchall()
    usd_per_1k, run_cost, basis, snapshot = prices["theirs"]
    assert usd_per_1k == pytest.approx(1000 * sum(costs) / len(costs))
    assert run_cost == pytest.approx(sum(costs))
    assert (basis, snapshot) == ("imported", None)
    assert [(c, b) for lane, c, b in row_costs if lane == "theirs"] == [
        (pytest.approx(c), "imported") for c in costs
    ]
    assert prices["mine"] == [None, None, None, None]  # the JSONL states no cost: none, not 0
    assert {(c, b) for lane, c, b in row_costs if lane == "mine"} == {(None, None)}


def test_bad_cost_cells_are_reported_in_the_one_wording(tmp_path):
    """`FILE: line N: field X: problem`, X the file's column; every bad cell at once."""
    lines = CSV.read_text().splitlines()
    header, rows = lines[0], lines[1:]
    bad = [rows[0].rsplit(",", 1)[0] + ",cheap", rows[1].rsplit(",", 1)[0] + ",-0.5", rows[2]]
    path = tmp_path / "bad.csv"
    path.write_text("\n".join([header, *bad]) + "\n")
    proc = bench(
        tmp_path / "home", "import", "qa-results", str(path), "--format", "csv", "--lane",
        "theirs", "--map", CSV_MAP, "--no-score",
    )  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    message = " ".join(proc.stderr.split())
    assert f"{path}: 2 problem(s):" in message
    assert f"{path}: line 2: field usd: expected a number, got text 'cheap'" in message
    assert f"{path}: line 3: field usd: expected a number >= 0" in message
    log_dir = tmp_path / "home" / "log"
    assert not log_dir.exists() or not any(p.stat().st_size for p in log_dir.rglob("*.jsonl"))


def test_three_bad_rows_are_reported_at_once_and_nothing_is_written(tmp_path):
    lines = JSONL.read_text().splitlines()
    bad = [json.loads(line) for line in lines]
    bad[1]["grade"] = "maybe"
    bad[2]["latency"] = "fast"
    del bad[4]["predicted"]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join([json.dumps(r) for r in bad[:3]] + ["{oops", json.dumps(bad[4])]))
    proc = bench(
        tmp_path / "home", "import", "qa-results", str(path), "--format", "jsonl", "--lane",
        "mine", "--map", JSONL_MAP, "--no-score",
    )  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    message = " ".join(proc.stderr.split())
    for problem in (
        f"{path}: line 2: field grade: expected a grade",
        f"{path}: line 3: field latency: expected a number",
        f"{path}: line 4: not valid JSON",
        f"{path}: line 5: field predicted: missing (mapped to answer)",
    ):
        assert problem in message
    log_dir = tmp_path / "home" / "log"
    assert not log_dir.exists() or not any(p.stat().st_size for p in log_dir.rglob("*.jsonl"))


@pytest.fixture(scope="module")
def dataset():
    return load_simpleqa(SIMPLEQA)


def test_map_is_checked_before_the_file_is_read(tmp_path, dataset):
    log = EventLog(tmp_path / "log")
    with pytest.raises(ImportFormatError, match="--map: 'prompt' is not a field"):
        import_qa_results(log, JSONL, fmt="jsonl", lane="l", dataset=dataset, column_map="prompt=x")
    with pytest.raises(ImportFormatError, match="latency_s or latency_ms, not both"):
        import_qa_results(
            log, JSONL, fmt="jsonl", lane="l", dataset=dataset,
            column_map="latency_s=latency,latency_ms=latency",
        )  # fmt: skip
    with pytest.raises(ImportFormatError, match="fixed columns"):
        import_qa_results(
            log, CSV, fmt="nimble", lane="l", dataset=dataset, column_map="question=query"
        )
    # without --map the common shape names no `question` column: the error says how to map it
    with pytest.raises(ImportFormatError, match=r"line 1: no column for \['question'\].*--map"):
        import_qa_results(log, JSONL, fmt="jsonl", lane="l", dataset=dataset)


def test_a_map_is_part_of_the_import(tmp_path, dataset):
    """The same bytes read through another map are another import run (not a no-op)."""
    log = EventLog(tmp_path / "log")
    one = import_qa_results(
        log, JSONL, fmt="jsonl", lane="l", dataset=dataset, column_map=JSONL_MAP
    )
    again = import_qa_results(
        log, JSONL, fmt="jsonl", lane="l", dataset=dataset, column_map=JSONL_MAP
    )
    other = import_qa_results(
        log, JSONL, fmt="jsonl", lane="l", dataset=dataset,
        column_map="question=problem,answer=answer,grade=grade",
    )  # fmt: skip
    assert again.already_imported and again.run_id == one.run_id
    assert not other.already_imported and other.run_id != one.run_id
    assert one.completed == 5 and one.unmatched_ids == []
