"""DRACO through the real CLI: a vendor lane and an LLM judge on loopback servers, the real
dataset, ingest → dbt → publish; then new weights rescore with both servers gone."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import duckdb
import pytest

from tests.bench_cli import BenchResult, run_bench
from tests.fakes.research_fake import FakeResearchServer
from tests.qa.llm_fake import FakeLlmServer

pytestmark = pytest.mark.slow

EXA_KEY = "sk-canary-draco-e2e-exa-5d1c"
JUDGE_KEY = "sk-canary-draco-e2e-judge-88aa"


def bench(home: Path, *args: str, env: dict[str, str]) -> BenchResult:
    return run_bench(home, *args, env=env)


def verdict(prompt: str) -> str:
    # Every criterion MET: penalties apply, so a penalty cap must raise scores.
    return json.dumps({"verdict": "MET", "justification": "The report states it."})


def item_scores(home: Path) -> dict[tuple[str, str], float]:
    with duckdb.connect(str(home / "serve.duckdb"), read_only=True) as con:
        rows = con.execute("select lane, item_id, score from marts.fct_draco_items").fetchall()
    return {(lane, item): score for lane, item, score in rows}


def log_digest(home: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted((home / "log").rglob("*")):
        if path.is_file():
            digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()


def test_draco_run_then_rescore_with_no_provider_or_judge_call(tmp_path, shared_data):
    home = tmp_path / "home"
    env = {
        **os.environ,
        "EXA_API_KEY": EXA_KEY,
        "OPENAI_COMPATIBLE_API_KEY": JUDGE_KEY,
        "BENCH_DATA_DIR": str(shared_data),
    }
    with (
        FakeResearchServer(polls_to_complete=1, keys={"exa": EXA_KEY}) as vendor,
        FakeLlmServer(verdict) as judge,
    ):
        env["BENCH_BASE_URL_EXA"] = f"{vendor.base_url}/exa"
        # The Medicine task with the -500 safety penalty, and an Academic one.
        items = "0c2c668a-c3bf-41af-93c9-b5614ff63508"
        bench(
            home,
            "run",
            "draco",
            "--systems",
            "exa_agent_high",
            "--items",
            items,
            "--judge",
            f"openai-compatible:judge-e2e@{judge.base_url}/v1",
            "--samples",
            "2",
            env=env,
        )
        calls = (len(vendor.requests), len(judge.state.calls))
    # submit + polls; 53 criteria x 2 samples + the judge preflight call
    assert calls[0] >= 2 and calls[1] == 53 * 2 + 1

    before = item_scores(home)
    assert set(before) == {("exa_agent_high", items)}
    log_before = log_digest(home)
    with duckdb.connect(str(home / "serve.duckdb"), read_only=True) as con:
        row = con.execute(
            "select n_items, n_failed, judge_samples, judge_official, cost_basis "
            "from marts.draco_leaderboard"
        ).fetchone()
    assert row[:4] == (1, 0, 2, True)

    # Both servers are gone: any call would fail the commands below.
    with duckdb.connect(str(home / "serve.duckdb"), read_only=True) as con:
        positive = con.execute(
            "select item_id, criterion_id from marts.dim_rubric_criteria "
            "where registered_weight > 0 order by criterion_position limit 1"
        ).fetchone()
    overrides = tmp_path / "weights.csv"
    overrides.write_text(
        f"item_id,criterion_id,weight,reason\n{positive[0]},{positive[1]},1,test\n"
    )
    bench(
        home,
        "rescore",
        "--draco-penalty-floor",
        "-5",
        "--draco-weights",
        str(overrides),
        env=env,
    )
    rescored = item_scores(home)
    assert rescored[("exa_agent_high", items)] > before[("exa_agent_high", items)]
    with duckdb.connect(str(home / "serve.duckdb"), read_only=True) as con:
        used = dict(
            con.execute("select var_name, var_value from marts.dim_scoring_vars").fetchall()
        )
    assert json.loads(used["draco_penalty_floor"]) == -5
    assert json.loads(used["draco_weight_override_rows"])[0]["criterion_id"] == positive[1]

    bench(home, "rescore", "--reset", env=env)
    assert item_scores(home) == before
    assert log_digest(home) == log_before, "rescoring wrote to the log"

    stored = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    assert EXA_KEY.encode() not in stored and JUDGE_KEY.encode() not in stored
