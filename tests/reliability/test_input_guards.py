"""Input a user hands `bench` is refused whole, before any event exists, with the file, line and
field named (exit 2, no traceback); a damaged DuckDB file is named with the command that
replaces it. Each case is one that main (bcb0fc2) got wrong, driven through the real CLI as a
user would: a 100,000-deep rubric (RecursionError traceback), a 50 MB rubric field (an orphan
`run_started` sealed before the refusal), an all-penalty rubric (scored 0.0 without a word),
NUL bytes in questions and `javascript:` gold URLs (accepted), and a corrupt or truncated
warehouse.duckdb / serve.duckdb (raw `_duckdb.IOException` tracebacks, exit 1)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from collectors.draco.dataset import load_draco
from tests.bench_cli import BenchResult, run_bench
from warehouse.log import EventLog

# collectors.user_text.MAX_TEXT_BYTES, written out: the messages print it, and this file also
# runs against the code from before the limit existed
MAX_TEXT_BYTES = 1024 * 1024
DRACO_RUN = ["run", "draco", "--systems", "local-rag", "--judge", "offline", "--samples", "1"]


def bench(home: Path, *args: str, cwd: Path) -> BenchResult:
    # rich wraps at 80 otherwise: messages and paths stay on one line
    return run_bench(home, *args, cwd=cwd, env={"COLUMNS": "400"}, check=False)


def event_ids(home: Path) -> list[str]:
    log = home / "log"
    return [event["event_id"] for _raw, event in EventLog(log).read()] if log.exists() else []


def rubric_row(task_id: str = "my-task-1", **answer_changes) -> dict:
    """One task in DRACO's shape (bench init's template), the rubric as an object."""
    criteria = [
        {"id": "names-two-tools", "weight": 10, "requirement": "Names two open-source tools."},
        {"id": "invents-numbers", "weight": -20, "requirement": "States unsourced numbers."},
    ]
    answer = {
        "id": f"{task_id}-rubric",
        "sections": [{"id": "accuracy", "title": "Accuracy", "criteria": criteria}],
    }
    answer.update(answer_changes)
    return {
        "id": task_id,
        "domain": "technology",
        "problem": f"Compare two open-source HTML-to-text extractors ({task_id}).",
        "answer": answer,
    }


def write_jsonl(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def assert_refused(proc: subprocess.CompletedProcess[str], *expected: str) -> None:
    output = proc.stdout + proc.stderr
    assert proc.returncode == 2, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
    for text in expected:
        assert text in output, f"{text!r} not in:\n{output[-3000:]}"


# --- rubric task files (`bench run draco --tasks FILE`) ------------------------------------


@pytest.mark.parametrize("encoding", ["object", "json-string"])
def test_a_100000_deep_rubric_is_refused_with_file_line_and_field(tmp_path, encoding):
    """bcb0fc2: RecursionError traceback, exit 1."""
    row = rubric_row()
    row["answer"]["sections"][0]["criteria"][0]["notes"] = "@DEEP@"
    deep = "[" * 100_000 + "]" * 100_000
    if encoding == "json-string":  # DRACO's own double encoding: the rubric is a JSON string
        row["answer"] = json.dumps(row["answer"])
        line = json.dumps(row).replace('\\"@DEEP@\\"', deep)
        field = "'answer'"  # the rubric string, then the path inside it
    else:
        line = json.dumps(row).replace('"@DEEP@"', deep)
        field = "'answer.sections[0].criteria[0].notes"
    tasks = write_jsonl(tmp_path / "rubric_tasks.jsonl", "# my tasks", line)
    proc = bench(tmp_path / "home", *DRACO_RUN, "--tasks", str(tasks), cwd=tmp_path)
    assert_refused(proc, "rubric_tasks.jsonl: line 2", "nested deeper than 64 levels", field)
    if encoding == "json-string":
        assert "'sections[0].criteria[0].notes" in proc.stdout + proc.stderr
    assert event_ids(tmp_path / "home") == []


@pytest.mark.parametrize(
    ("where", "field"),
    [("problem", "'problem'"), ("requirement", "'answer.sections[0].criteria[1].requirement'")],
)
def test_a_50mb_rubric_field_is_refused_before_any_event_is_written(tmp_path, where, field):
    """bcb0fc2: `run_started` sealed, then the log refused the 50 MB event: an orphan run."""
    home = tmp_path / "home"
    earlier = write_jsonl(tmp_path / "earlier.jsonl", json.dumps(rubric_row("earlier-task")))
    first = bench(home, *DRACO_RUN, "--tasks", str(earlier), "--no-score", cwd=tmp_path)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    before = event_ids(home)
    assert before

    row = rubric_row()
    huge = "x" * (50 * 1024 * 1024)
    if where == "problem":
        row["problem"] = huge
    else:
        row["answer"]["sections"][0]["criteria"][1]["requirement"] = huge
    tasks = write_jsonl(
        tmp_path / "big.jsonl", json.dumps(rubric_row("fine-task")), json.dumps(row)
    )
    proc = bench(home, *DRACO_RUN, "--tasks", str(tasks), "--no-score", cwd=tmp_path)
    assert_refused(
        proc, "big.jsonl: line 2", field, "52,428,800 bytes", f"limit of {MAX_TEXT_BYTES:,} bytes"
    )
    assert event_ids(home) == before  # not one new event: no run_started, no registration


def test_an_all_penalty_rubric_is_refused_with_file_line_and_field(tmp_path):
    """bcb0fc2: every response scored 0.0 (DRACO's max(0, raw / P) with P = 0), no word."""
    row = rubric_row()
    row["answer"]["sections"][0]["criteria"][0]["weight"] = -10
    tasks = write_jsonl(
        tmp_path / "rubric_tasks.jsonl", json.dumps(rubric_row("fine-task")), json.dumps(row)
    )
    proc = bench(tmp_path / "home", *DRACO_RUN, "--tasks", str(tasks), "--no-score", cwd=tmp_path)
    assert_refused(
        proc,
        "rubric_tasks.jsonl: line 2",
        "'answer.sections[].criteria[].weight'",
        "all 2 criteria are penalties",
    )
    assert event_ids(tmp_path / "home") == []


def test_no_draco_task_is_all_penalty(shared_data):
    """Why refusing (not warning) is safe: the real DRACO test split, read by the project's
    loader, has no all-penalty task (every task has at least 13 positive criteria)."""
    tasks = load_draco(shared_data / "draco" / "test.jsonl").tasks
    assert len(tasks) == 100
    assert min(sum(c.weight > 0 for c in task.criteria) for task in tasks) >= 13


# --- question sets (`bench run qa --questions FILE`) ---------------------------------------

_QUESTION = "What is the capital of Australia?"
_URL = "https://en.wikipedia.org/wiki/Canberra"


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        (
            "questions.jsonl",
            json.dumps({"question": "What is the capital\x00 of Australia?", "gold_answer": "x"}),
            ["line 1: field 'question' contains a NUL byte"],
        ),
        (
            "questions.csv",
            f"question,gold_answer\n{_QUESTION},Canberra\x00\n",
            ["line 2: field 'gold_answer' contains a NUL byte"],
        ),
        (
            "questions.jsonl",
            json.dumps(
                {
                    "question": _QUESTION,
                    "gold_answer": "Canberra",
                    "gold_urls": [_URL, "javascript:alert(document.cookie)"],
                }
            ),
            ["line 1: field 'gold_urls[1]' must be an absolute http(s) URL", "javascript:"],
        ),
        (
            "questions.csv",
            f"question,gold_answer,gold_urls\n{_QUESTION},Canberra,{_URL} javascript:alert(1)\n",
            ["line 2: field 'gold_urls' must be an absolute http(s) URL", "javascript:"],
        ),
        (
            "questions.jsonl",
            json.dumps(
                {
                    "question": _QUESTION,
                    "gold_answer": "Canberra",
                    "gold_urls": ["file:///etc/passwd"],
                }
            ),
            ["line 1: field 'gold_urls[0]' must be an absolute http(s) URL"],
        ),
        (
            "questions.jsonl",
            json.dumps(
                {"question": _QUESTION, "gold_answer": "Canberra", "gold_urls": ["/wiki/Canberra"]}
            ),
            ["line 1: field 'gold_urls[0]' must be an absolute http(s) URL"],
        ),
        (
            "questions.jsonl",
            json.dumps({"question": _QUESTION + " " + "x" * MAX_TEXT_BYTES, "gold_answer": "x"}),
            ["line 1: field 'question' is 1,048,610 bytes, over the limit of 1,048,576 bytes"],
        ),
    ],
    ids=[
        "nul-question",
        "nul-csv-answer",
        "javascript-url",
        "javascript-csv",
        "file-url",
        "relative-url",
        "oversized",
    ],
)
def test_a_bad_question_set_is_refused_before_any_event(tmp_path, name, content, expected):
    """bcb0fc2: every one of these was accepted and run."""
    questions = tmp_path / name
    questions.write_text(f"{content}\n", encoding="utf-8")
    home = tmp_path / "home"
    proc = bench(home, "run", "qa", "--questions", str(questions), "--no-score", cwd=tmp_path)
    assert_refused(proc, f"{name}: ", *expected)
    assert event_ids(home) == []


def test_a_good_question_set_with_http_gold_urls_still_runs(tmp_path):
    questions = tmp_path / "questions.csv"
    questions.write_text(
        f"question,gold_answer,gold_urls\n{_QUESTION},Canberra,{_URL} http://example.org/a\n",
        encoding="utf-8",
    )
    home = tmp_path / "home"
    proc = bench(home, "run", "qa", "--questions", str(questions), "--no-score", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert event_ids(home)


# --- a damaged DuckDB file -------------------------------------------------------------------


@pytest.fixture(scope="module")
def built_home(tmp_path_factory) -> Path:
    """A real data root: one DRACO run ingested, built and published (warehouse.duckdb and
    serve.duckdb), then a second run left unloaded so `bench ingest` has events to load."""
    work = tmp_path_factory.mktemp("built")
    home = work / "home"
    for task_id, score in (("first-task", []), ("second-task", ["--no-score"])):
        tasks = write_jsonl(work / f"{task_id}.jsonl", json.dumps(rubric_row(task_id)))
        proc = bench(home, *DRACO_RUN, "--tasks", str(tasks), *score, cwd=work)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (home / "warehouse.duckdb").is_file() and (home / "serve.duckdb").is_file()
    return home


def damage(path: Path, how: str) -> None:
    size = path.stat().st_size
    if how == "overwritten":  # every block after DuckDB's three 4 KiB headers: a query's are hit
        with path.open("r+b") as file:
            file.seek(3 * 4096)
            file.write(b"\xde\xad\xbe\xef" * ((size - 3 * 4096) // 4))
    else:
        os.truncate(path, size // 2)


_REMEDY = {
    "warehouse.duckdb": "`bench rebuild` builds a fresh one from the log",
    "serve.duckdb": "`bench publish` writes a new one from the warehouse",
}
_MART = "fct_draco_verdict_samples"


@pytest.mark.slow
@pytest.mark.parametrize("how", ["overwritten", "truncated"])
@pytest.mark.parametrize(
    ("db", "command"),
    [
        ("warehouse.duckdb", ["ingest"]),
        ("warehouse.duckdb", ["build"]),
        ("serve.duckdb", ["sql", f"select * from marts.{_MART}"]),
        ("serve.duckdb", ["export", _MART]),
    ],
    ids=["ingest", "build", "sql", "export"],
)
def test_a_corrupt_duckdb_file_is_named_with_its_remedy(built_home, tmp_path, db, command, how):
    """bcb0fc2: `_duckdb.IOException` traceback, exit 1."""
    home = tmp_path / "home"
    shutil.copytree(built_home, home)
    damage(home / db, how)
    proc = bench(home, *command, cwd=tmp_path)
    assert_refused(proc, f"{home / db} is corrupt or truncated", _REMEDY[db])


@pytest.mark.slow
@pytest.mark.parametrize("db", ["warehouse.duckdb", "serve.duckdb"])
def test_status_names_a_corrupt_duckdb_file_and_its_remedy(built_home, tmp_path, db):
    """bcb0fc2: a truncated serve.duckdb was a traceback; a corrupt warehouse.duckdb was
    "another bench process may be writing"."""
    home = tmp_path / "home"
    shutil.copytree(built_home, home)
    damage(home / db, "truncated")
    proc = bench(home, "status", cwd=tmp_path)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-3000:]
    assert "Traceback" not in output and "another bench process" not in output, output[-3000:]
    cells = " ".join(output.replace("│", " ").split())  # a long cell wraps inside the table
    assert f"{home / db} is corrupt or truncated" in cells, output[-3000:]
    assert _REMEDY[db] in cells, output[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("db", ["warehouse.duckdb", "serve.duckdb"])
def test_the_suggested_command_replaces_the_corrupt_file(built_home, tmp_path, db):
    """The remedy the message names works on the damaged data root."""
    home = tmp_path / "home"
    shutil.copytree(built_home, home)
    damage(home / db, "overwritten")
    remedy = ["rebuild"] if db == "warehouse.duckdb" else ["publish"]
    fixed = bench(home, *remedy, cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout[-3000:] + fixed.stderr[-3000:]
    query = bench(home, "sql", f"select count(*) as n from marts.{_MART}", cwd=tmp_path)
    assert query.returncode == 0, query.stdout[-3000:] + query.stderr[-3000:]
    assert "1 row(s)" in query.stdout


def test_sql_on_a_small_corrupt_snapshot_names_it_and_its_remedy(tmp_path):
    """A small snapshot overwritten in the middle: DuckDB's checksum error names no file, and
    `bench sql` said "a DuckDB file in the data root is corrupt" and suggested `bench rebuild`.
    It names serve.duckdb and `bench publish` now (the full-size snapshot above was named only
    because its damage hit a read that names the file)."""
    home = tmp_path / "home"
    home.mkdir()
    with duckdb.connect(str(home / "serve.duckdb")) as con:
        con.execute("create schema marts")
        con.execute(
            "create table marts.dim_runs as select range as run_id, md5(range::varchar) as x "
            "from range(2000)"
        )
    size = (home / "serve.duckdb").stat().st_size
    with (home / "serve.duckdb").open("r+b") as file:
        file.seek(size // 2)
        file.write(b"\xff" * 8192)  # the table's data blocks, not the header
    proc = bench(home, "sql", "select count(*), max(x) from marts.dim_runs", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert f"{home / 'serve.duckdb'} is corrupt or truncated" in proc.stderr, proc.stderr
    assert _REMEDY["serve.duckdb"] in proc.stderr, proc.stderr
