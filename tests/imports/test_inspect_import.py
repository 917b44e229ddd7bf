"""`bench import qa-results LOG --format inspect`: inspect_ai eval logs, written here by inspect_ai
itself (real SimpleQA questions, its mock model `mockllm/model` answering from a table, a
`.eval` log scored by inspect's own `match()` and a `.json` log scored the way inspect_evals'
original SimpleQA scorer scores: a grader model's A/B/C letter as a dict value), imported
through the real CLI. The accuracy and latency computed here from the logs (read back with
inspect's own reader, and inspect's own `accuracy` metric) equal what the published marts show;
the answering model's usage lands on the imported answers; the regime is the scorer and its
grader model. Needs the `inspect` extra (scripts/setup.sh installs it)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import duckdb
import pytest
from inspect_log_file import write_inspect_log

from collectors.imports.qa_results import import_qa_results
from collectors.imports.source_file import ImportFormatError
from collectors.qa.simpleqa import load_simpleqa
from tests.bench_cli import BenchResult, run_bench
from warehouse.canonical import sha256_hex
from warehouse.log import EventLog

REPO = Path(__file__).resolve().parents[2]
SIMPLEQA = REPO / ".." / "shared" / "data" / "simpleqa" / "simple_qa_test_set.csv"
N = 6
# USD per million (input, output) tokens: the answering model's, and the grader's, which is not
# the answer's cost and must not be counted in it
PRICES = {"mockllm/model": (2.0, 8.0), "mockllm/grader": (100.0, 100.0)}


def bench(home: Path, *args: str) -> BenchResult:
    return run_bench(home, *args, env={"COLUMNS": "200"}, cwd=REPO, check=False)


def quantile_cont(values: list[float], q: float) -> float:
    """DuckDB's quantile_cont (linear interpolation between closest ranks), written plainly."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@pytest.fixture(scope="module")
def questions():
    return load_simpleqa(SIMPLEQA).questions[:N]


@pytest.fixture(scope="module")
def logs(tmp_path_factory, questions):
    directory = tmp_path_factory.mktemp("inspect")
    return {
        "match": write_inspect_log(directory / "match", questions, scorer="match"),
        "simpleqa": write_inspect_log(
            directory / "simpleqa",
            questions,
            scorer="simpleqa",
            log_format="json",
            prices=PRICES,
        ),
    }


def expected_from(path: Path):
    """(accuracy over the landed samples, latencies in ms, usage per question) read back with
    inspect's own reader: the oracle the marts are held to."""
    from inspect_ai.event import ModelEvent
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(path))
    landed = [s for s in log.samples if s.error is None]
    correct = 0
    for sample in landed:
        value = next(iter(sample.scores.values())).value
        correct += value == "C" if isinstance(value, str) else value["correct"] == 1.0
    latencies, usage = [], {}
    for sample in landed:
        calls = [e for e in sample.events if isinstance(e, ModelEvent) and e.role is None]
        latencies.append(sum(e.working_time for e in calls) * 1000)
        usage[sample.input] = (
            calls[0].output.usage.input_tokens,
            calls[0].output.usage.output_tokens,
        )
    metrics = log.results.scores[0].metrics  # inspect's own figure: accuracy(), or correct
    inspect_accuracy = metrics["accuracy" if "accuracy" in metrics else "correct"].value
    return correct / len(landed), latencies, usage, inspect_accuracy, len(log.samples) - len(landed)


@pytest.mark.slow  # runs inspect_ai twice and `dbt build` through `bench import ... --score`
def test_inspect_logs_import_and_the_marts_reproduce_their_accuracy(tmp_path, logs):
    home = tmp_path / "home"
    first = bench(
        home, "import", "qa-results", str(logs["match"]), "--format", "inspect",
        "--lane", "inspect_match", "--no-score",
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert "unmatched" not in first.stderr
    second = bench(
        home, "import", "qa-results", str(logs["simpleqa"]), "--format", "inspect",
        "--lane", "inspect_simpleqa",
    )  # fmt: skip
    assert second.returncode == 0, second.stderr

    with duckdb.connect(str(home / "serve.duckdb"), read_only=True) as con:
        board = {
            lane: rest
            for lane, *rest in con.execute(
                "select lane, grader_id, n_landed, n_failed, strict_accuracy, latency_p50_ms, "
                "latency_p95_ms, latency_source, mrr from marts.qa_leaderboard"
            ).fetchall()
        }
    assert set(board) == {"inspect_match", "inspect_simpleqa"}
    regimes = {
        "inspect_match": "imported:inspect:match",
        "inspect_simpleqa": "imported:inspect:simpleqa_scorer:mockllm/grader",
    }
    for lane, name in (("inspect_match", "match"), ("inspect_simpleqa", "simpleqa")):
        accuracy, latencies, _, inspect_accuracy, failed = expected_from(logs[name])
        grader, landed, n_failed, strict, p50, p95, source, mrr = board[lane]
        assert grader == regimes[lane]
        assert (landed, n_failed) == (len(latencies), failed) == (N - 1, 1)
        assert strict == pytest.approx(accuracy)
        assert strict == pytest.approx(inspect_accuracy)
        assert 0 < accuracy < 1
        assert p50 == pytest.approx(quantile_cont(latencies, 0.5))
        assert p95 == pytest.approx(quantile_cont(latencies, 0.95))
        assert source == "imported"
        assert mrr is None  # an inspect log records no retrieval: no URL metrics, not zeros

    # the log's own metric beside our recomputation (qa_published_figures): inspect's accuracy()
    # for match(), the `correct` metric of the SimpleQA scorer, both read back here from the logs
    with duckdb.connect(str(home / "serve.duckdb"), read_only=True) as con:
        published = con.execute(
            "select lane, metric, published_as, published_value, recomputed_value, matches_4dp, "
            "n_questions from marts.qa_published_figures order by lane"
        ).fetchall()
    expected = []
    for lane, name, path in (
        ("inspect_match", "match", "$.metrics.accuracy"),
        ("inspect_simpleqa", "simpleqa", "$.metrics.correct"),
    ):
        accuracy, _, _, inspect_accuracy, _ = expected_from(logs[name])
        metric = "strict_accuracy" if name == "match" else "is_correct"
        expected.append(
            (lane, metric, path, pytest.approx(inspect_accuracy), pytest.approx(accuracy), True, N)
        )
    assert published == expected

    # the answering model's usage is on the imported answers (not the grader's: 9 in, 1 out)
    _, _, usage, _, _ = expected_from(logs["simpleqa"])
    stored = {}
    for _, event in EventLog(home / "log").read():
        payload = event["payload"]
        if event["event_type"] == "answer_synthesized" and payload["lane"] == "inspect_simpleqa":
            llm = payload["llm"] or {}
            stored[llm.get("prompt_sha256")] = (llm.get("input_tokens"), llm.get("output_tokens"))
    assert stored.pop(None) == (None, None)  # the failed sample: no call on record
    assert stored == {sha256_hex(question.encode()): tokens for question, tokens in usage.items()}
    assert all(tokens_in == len(question) for question, (tokens_in, _) in usage.items())

    # the cost inspect computed for the answering calls: each row's cost and the lane's price,
    # held to the log's token counts x the prices the eval ran with (the grader's calls and the
    # failed sample, which made no call, cost the answer nothing)
    price_in, price_out = PRICES["mockllm/model"]
    costs = {q: (i * price_in + o * price_out) / 1e6 for q, (i, o) in usage.items()}
    from inspect_ai.log import read_eval_log

    stated = {
        s.input: s.model_usage["mockllm/model"].total_cost
        for s in read_eval_log(str(logs["simpleqa"])).samples
        if s.error is None
    }
    assert stated == {q: pytest.approx(c) for q, c in costs.items()}
    with duckdb.connect(str(home / "serve.duckdb"), read_only=True) as con:
        prices = {
            lane: rest
            for lane, *rest in con.execute(
                "select lane, usd_per_1k, run_cost_usd, price_basis from marts.qa_leaderboard"
            ).fetchall()
        }
        row_costs = dict(
            con.execute(
                "select problem, cost_usd from marts.fct_qa_answers "
                "where lane = 'inspect_simpleqa' and cost_basis = 'imported'"
            ).fetchall()
        )
    assert row_costs == {q: pytest.approx(c) for q, c in costs.items()}
    assert prices["inspect_simpleqa"] == [
        pytest.approx(1000 * sum(costs.values()) / len(costs)),
        pytest.approx(sum(costs.values())),
        "imported",
    ]
    assert prices["inspect_match"] == [None, None, None]  # a log without prices states no cost


def test_a_json_and_an_eval_log_both_import(tmp_path, logs, questions):
    dataset = load_simpleqa(SIMPLEQA)
    log = EventLog(tmp_path / "log")
    for name, lane in (("match", "a"), ("simpleqa", "b")):
        summary = import_qa_results(log, logs[name], fmt="inspect", lane=lane, dataset=dataset)
        assert (summary.completed, summary.failed, summary.unmatched_ids) == (N - 1, 1, [])
        assert summary.header["task"] == f"simpleqa_{name}"
        again = import_qa_results(log, logs[name], fmt="inspect", lane=lane, dataset=dataset)
        assert again.already_imported and again.run_id == summary.run_id
    assert {logs["match"].suffix, logs["simpleqa"].suffix} == {".eval", ".json"}


def test_a_missing_extra_says_how_to_install_it(tmp_path, logs, monkeypatch):
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # as if inspect_ai were absent
    with pytest.raises(ImportFormatError, match=r"pip install 'bench-warehouse\[inspect\]'"):
        import_qa_results(
            EventLog(tmp_path / "log"), logs["match"], fmt="inspect", lane="l",
            dataset=load_simpleqa(SIMPLEQA),
        )  # fmt: skip


def test_a_file_that_is_not_an_inspect_log_is_refused(tmp_path):
    path = tmp_path / "results.eval"
    path.write_bytes(b"not a zip")
    with pytest.raises(ImportFormatError, match=r"results.eval: not an inspect eval log"):
        import_qa_results(
            EventLog(tmp_path / "log"), path, fmt="inspect", lane="l",
            dataset=load_simpleqa(SIMPLEQA),
        )  # fmt: skip


def test_a_log_whose_every_sample_failed_says_so(tmp_path, questions):
    path = write_inspect_log(tmp_path / "logs", questions[:1])  # its one sample's solver fails
    with pytest.raises(
        ImportFormatError, match=r"field results.scores: no sample was scored: all 1 failed"
    ):
        import_qa_results(
            EventLog(tmp_path / "log"), path, fmt="inspect", lane="l",
            dataset=load_simpleqa(SIMPLEQA),
        )  # fmt: skip


@pytest.mark.parametrize(
    ("value", "grade"),
    [
        ("C", "A"),
        ("I", "B"),
        ("N", "C"),
        ("correct", "A"),
        ({"correct": 0.0, "incorrect": 0.0, "not_attempted": 1.0}, "C"),
        ({"correct": 1.0, "incorrect": 0.0, "not_attempted": 0.0}, "A"),
        (1, "A"),
        (0.0, "B"),
        (float("nan"), None),
    ],
)
def test_inspect_score_values(value, grade):
    from collectors.imports.inspect_log import inspect_grade

    assert inspect_grade(value) == grade


@pytest.mark.parametrize("value", ["P", 0.5, {"correct": 0.5, "incorrect": 0.5}, None])
def test_inspect_score_values_that_are_no_simpleqa_grade(value):
    from collectors.imports.inspect_log import inspect_grade

    with pytest.raises(ValueError, match=r"expected a grade C / I / N|SimpleQA dict"):
        inspect_grade(value)


def test_docs_show_the_inspect_command():
    doc = " ".join((REPO / "docs" / "imports.md").read_text().split())
    assert "--format inspect --lane" in doc
    assert "pip install 'bench-warehouse[inspect]'" in doc
