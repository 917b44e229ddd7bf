"""`bench import draco-results` as a user runs it: a summary naming unjoined ids, exit 2 with the
file and field on bad input, nothing written."""

from __future__ import annotations

from pathlib import Path

from valyu_fixture import UNMATCHED_ID, valyu_grading, write_json

from collectors.draco.dataset import load_draco
from tests.bench_cli import BenchResult, run_bench

REPO = Path(__file__).resolve().parents[2]
DRACO_JSONL = REPO / ".." / "shared" / "data" / "draco" / "test.jsonl"


def bench(home: Path, *args: str) -> BenchResult:
    return run_bench(home, *args, cwd=REPO, check=False)


def test_import_reports_unmatched_and_is_idempotent(tmp_path):
    task = load_draco(DRACO_JSONL).tasks[3]
    path = write_json(tmp_path / "sys.eval.json", valyu_grading([task], runs=1))
    first = bench(
        tmp_path / "home",
        "import",
        "draco-results",
        str(path),
        "--format",
        "valyu",
        "--system",
        "sys",
        "--no-score",
    )
    assert first.returncode == 0, first.stderr
    assert UNMATCHED_ID in first.stderr and "unmatched" in first.stderr
    assert "99 absent tasks" in first.stderr
    again = bench(
        tmp_path / "home",
        "import",
        "draco-results",
        str(path),
        "--format",
        "valyu",
        "--system",
        "sys",
        "--no-score",
    )
    assert again.returncode == 0 and "already imported" in again.stderr


def test_bad_input_exits_2_naming_file_and_field(tmp_path):
    path = tmp_path / "bad.eval.json"
    path.write_text('{"results": [], "overall_score": 0.5}')
    proc = bench(
        tmp_path / "home",
        "import",
        "draco-results",
        str(path),
        "--format",
        "valyu",
        "--system",
        "s",
        "--no-score",
    )
    assert proc.returncode == 2
    assert "bad.eval.json" in proc.stderr and "judge_model" in proc.stderr
    assert "Traceback" not in proc.stderr
    log_dir = tmp_path / "home" / "log"
    assert not log_dir.exists() or not any(p.stat().st_size for p in log_dir.rglob("*.jsonl"))
