"""`bench sql` reads the snapshot and nothing else; `bench init` writes templates the real
loaders accept."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import duckdb
import pytest

from bench.export import ExportError, export_mart
from bench.init_cli import TEMPLATES, write_templates
from bench.sql_cli import open_snapshot, run_query
from tests.cli.test_cli_help import _bench


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    with duckdb.connect(str(home / "serve.duckdb")) as con:
        con.execute("create schema marts")
        con.execute(
            "create table marts.extraction_leaderboard as "
            "select * from (values ('trafilatura', 0.91), ('inscriptis', 0.78)) t(system, shingle_f1)"
        )
    return home


def test_sql_formats(snapshot: Path) -> None:
    query = "select system, shingle_f1 from marts.extraction_leaderboard order by 2 desc"
    csv_out = _bench("sql", query, "--format", "csv", home=snapshot)
    assert csv_out.returncode == 0, csv_out.stderr
    assert csv_out.stdout.splitlines() == [
        "system,shingle_f1",
        "trafilatura,0.91",
        "inscriptis,0.78",
    ]
    json_out = _bench("sql", query, "-f", "json", home=snapshot)
    assert [json.loads(line)["system"] for line in json_out.stdout.splitlines()] == [
        "trafilatura",
        "inscriptis",
    ]
    table = _bench("sql", query, home=snapshot)
    assert "trafilatura" in table.stdout and "2 row(s)" in table.stdout


def test_sql_is_read_only_and_cannot_touch_files(snapshot: Path, tmp_path: Path) -> None:
    con = open_snapshot(snapshot / "serve.duckdb")
    for statement in (
        "create table marts.x (a int)",
        "delete from marts.extraction_leaderboard",
        f"copy marts.extraction_leaderboard to '{tmp_path / 'out.csv'}'",
        f"attach '{tmp_path / 'other.duckdb'}' as other",
        "set enable_external_access = true",
    ):
        with pytest.raises(ExportError):
            run_query(con, statement)
    assert not (tmp_path / "out.csv").exists()
    assert not (tmp_path / "other.duckdb").exists()
    assert run_query(con, "select count(*) as n from marts.extraction_leaderboard").to_pylist() == [
        {"n": 2}
    ]


def test_sql_bad_query_and_missing_snapshot(snapshot: Path, tmp_path: Path) -> None:
    bad = _bench("sql", "select nope from marts.extraction_leaderboard", home=snapshot)
    assert bad.returncode == 2 and "query failed" in bad.stderr and "nope" in bad.stderr
    missing = _bench("sql", "select 1", home=tmp_path / "empty")
    assert missing.returncode == 2 and "bench demo" in missing.stderr


def test_sql_without_query_is_an_interactive_prompt(snapshot: Path) -> None:
    session = _bench(
        "sql",
        "-f",
        "csv",
        home=snapshot,
        input=".tables\nselect count(*) as n from marts.extraction_leaderboard\nselect bad\n\n",
    )
    assert session.returncode == 0, session.stderr
    assert "marts.extraction_leaderboard" in session.stdout
    assert "n\n2\n" in session.stdout
    assert "error:" in session.stdout  # a bad query does not end the session


def test_init_templates_load_with_the_real_loaders(tmp_path: Path) -> None:
    from collectors.draco.dataset import load_rubric_tasks
    from collectors.qa.question_sets import load_question_set

    written = write_templates(tmp_path / "mine")
    assert sorted(p.name for p in written) == sorted(TEMPLATES)
    questions = load_question_set(tmp_path / "mine" / "questions.csv")
    assert [q.gold_answer for q in questions.questions] == ["dlt", "Canberra"]
    tasks = load_rubric_tasks(tmp_path / "mine" / "rubric_tasks.jsonl")
    assert [c.weight for c in tasks.tasks[0].criteria] == [10, -20, 5]
    from collectors.extraction.live.corpus import load_urls

    urls = load_urls(tmp_path / "mine" / "urls.csv")
    assert urls.dataset.item_count == 2
    for name in ("questions.csv", "rubric_tasks.jsonl"):
        assert (tmp_path / "mine" / name).read_text().startswith("#")


def test_init_refuses_to_overwrite(tmp_path: Path) -> None:
    (tmp_path / "urls.csv").write_text("mine\n")
    result = _bench("init", str(tmp_path))
    assert result.returncode == 2 and "already exist" in result.stderr
    assert (tmp_path / "urls.csv").read_text() == "mine\n"
    assert not (tmp_path / "questions.csv").exists()


def test_comment_lines_keep_the_files_own_line_numbers(tmp_path: Path) -> None:
    from collectors.qa.dataset import DatasetError
    from collectors.qa.question_sets import load_question_set

    path = tmp_path / "q.csv"
    path.write_text("# one\n# two\nquestion,gold_answer\n# three\nok?,yes\n,missing\n")
    with pytest.raises(DatasetError, match=r"line 6"):
        load_question_set(path)


def test_export_takes_a_mart_as_bench_sql_names_it(snapshot: Path, tmp_path: Path) -> None:
    for name in ("extraction_leaderboard", "marts.extraction_leaderboard"):
        out = tmp_path / f"{name}.csv"
        export_mart(snapshot / "serve.duckdb", name, "csv", out)
        assert out.read_text().splitlines() == [
            "system,shingle_f1",
            "trafilatura,0.91",
            "inscriptis,0.78",
        ]
    with pytest.raises(ExportError, match=r"unknown mart 'raw\.events'"):
        export_mart(snapshot / "serve.duckdb", "raw.events", "csv", tmp_path / "x.csv")


def test_init_prints_next_commands_whose_paths_exist(tmp_path: Path) -> None:
    """`bench init DIR` run from elsewhere: each printed path is the file it wrote."""
    target = tmp_path / "my sets"
    result = _bench("init", str(target))
    assert result.returncode == 0, result.stderr
    next_line = next(line for line in result.stdout.splitlines() if line.startswith("next:"))
    for command in next_line.removeprefix("next:").split("|"):
        words = shlex.split(command.split("(formats")[0])
        for flag in ("--questions", "--tasks", "--urls"):
            if flag in words:
                assert Path(words[words.index(flag) + 1]).is_file(), command


@pytest.fixture
def precise_snapshot(snapshot: Path) -> Path:
    """A mart whose doubles carry 16 digits, as an avg() over verdicts does."""
    with duckdb.connect(str(snapshot / "serve.duckdb")) as con:
        con.execute(
            "create table marts.draco_leaderboard as select * from (values "
            "('local-rag', 0.6651234567890123::double, 2.5e-07::double), "
            "('closed-book', 69.0::double, null::double)) t(system, score, p_value)"
        )
    return snapshot


def test_sql_table_rounds_floats_but_csv_and_json_keep_every_digit(precise_snapshot) -> None:
    query = "select system, score, p_value from marts.draco_leaderboard order by system desc"
    table = _bench("sql", query, home=precise_snapshot)
    assert table.returncode == 0, table.stderr
    assert "0.6651" in table.stdout and "0.66512" not in table.stdout
    assert "69.0" in table.stdout
    assert "2.5e-07" in table.stdout  # a tiny value keeps its digits, it does not read as 0
    csv_out = _bench("sql", query, "-f", "csv", home=precise_snapshot)
    assert csv_out.stdout.splitlines()[1] == "local-rag,0.6651234567890123,2.5e-07"
    json_out = _bench("sql", query, "-f", "json", home=precise_snapshot)
    # (pandas' JSON writer keeps 10 significant digits; the display's 4 decimals never apply)
    assert json.loads(json_out.stdout.splitlines()[0])["score"] == pytest.approx(
        0.6651234567890123, abs=1e-10
    )


def test_sql_shows_every_statements_result(snapshot: Path) -> None:
    query = (
        "select count(*) as n from marts.extraction_leaderboard; "
        "select system from marts.extraction_leaderboard where shingle_f1 > 0.9;"
    )
    table = _bench("sql", query, home=snapshot)
    assert table.returncode == 0, table.stderr
    assert "┃ n" in table.stdout and "trafilatura" in table.stdout
    assert table.stdout.count("row(s)") == 2
    csv_out = _bench("sql", query, "-f", "csv", home=snapshot)
    assert csv_out.stdout.splitlines() == ["n", "2", "", "system", "trafilatura"]
    # A failing statement names which one failed, and nothing is half-shown.
    bad = _bench("sql", "select 1 as one; select nope", "-f", "csv", home=snapshot)
    assert bad.returncode == 2 and "statement 2 of 2" in bad.stderr
    assert bad.stdout == ""


def test_sql_prompt_has_help_quit_and_tables(snapshot: Path) -> None:
    session = _bench(
        "sql",
        "-f",
        "csv",
        home=snapshot,
        input=".help\n.tables\n.frobnicate\nselect 1 as a; select 2 as b\n.quit\nselect 3 as c\n",
    )
    assert session.returncode == 0, session.stderr
    out = session.stdout
    for command in (".tables", ".help", ".quit"):
        assert command in out.split("sql> ")[1]  # .help lists each command
    assert "marts.extraction_leaderboard" in out
    assert "unknown command .frobnicate; .help lists them" in out
    assert "a\n1\n\nb\n2\n" in out  # both statements of one line
    assert "c\n3" not in out  # .quit left before the next line ran


def test_init_lake_without_a_lake_set_names_the_setting_and_writes_nothing(tmp_path: Path) -> None:
    unset = {"BENCH_WAREHOUSE": "", "BENCH_LAKE_DATA": ""}
    refused = _bench("init", "--lake", str(tmp_path / "t"), env=unset, home=tmp_path / "home")
    assert refused.returncode == 2, refused.output
    said = " ".join(refused.output.split())
    assert "BENCH_WAREHOUSE names no lake; set it first" in said and "docs/team.md" in said
    assert not (tmp_path / "t").exists()
