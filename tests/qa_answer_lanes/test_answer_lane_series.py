"""Acceptance: a series of 3 runs over four vendor answer lanes against the loopback answer
fake (Nimble's fake remembers questions between runs) shows the per-run curve, the noise band
and the run-1 view, per vertical. Questions: 30 real SimpleQA rows, 10 from each of 3 topics,
as a user question set with a `vertical` column; grader: the offline normalized-match grader
(the run's one grader for every lane)."""

from __future__ import annotations

import csv
from pathlib import Path

import duckdb
import pytest
from dbt_harness import NO_UNIT_TESTS, run_dbt

from collectors.qa.answer_lanes import ANSWER_LANES
from collectors.qa.lane_registry import build_lanes
from collectors.qa.offline import ExtractiveSynthesizer, NormalizedMatchGrader
from collectors.qa.question_sets import load_question_set
from collectors.qa.runner import run_qa
from collectors.qa.simpleqa import load_simpleqa
from ingest.pipeline import ingest_log
from tests.fakes.answer_fake import AnswerProductsFake
from warehouse.log import EventLog

SIMPLEQA = (
    Path(__file__).resolve().parents[2]
    / ".."
    / "shared"
    / "data"
    / "simpleqa"
    / "simple_qa_test_set.csv"
)
LANES = ["exa_answer", "nimble_answer", "tavily_answer", "parallel_answer"]
KEYS = {
    "EXA_API_KEY": "k-exa",
    "TAVILY_API_KEY": "k-tav",
    "NIMBLE_API_KEY": "k-nim",
    "PARALLEL_API_KEY": "k-par",
}
SERIES = "vertical-answer-products"
BAND = 0.4


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    work = tmp_path_factory.mktemp("answer_series")
    simpleqa = load_simpleqa(SIMPLEQA)
    topics = ["Science and technology", "Politics", "Art"]
    chosen = [q for t in topics for q in [q for q in simpleqa.questions if q.topic == t][:10]]
    path = work / "verticals.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "gold_answer", "vertical"])
        writer.writerows([q.problem, q.gold_answer, q.topic] for q in chosen)
    dataset = load_question_set(path)
    log = EventLog(work / "log")
    summaries = []
    with AnswerProductsFake({q.problem: q.gold_answer for q in chosen}, memory={"nimble"}) as fake:
        for _ in range(3):
            # A loopback fake needs no 1 request/s pacing (90 calls a lane a run).
            lanes = build_lanes(LANES, environ=KEYS, base_urls=fake.base_urls(), rate_per_s=100.0)
            summaries.append(
                run_qa(
                    log,
                    dataset,
                    lanes,
                    limit=None,
                    synthesizer=ExtractiveSynthesizer(),
                    grader=NormalizedMatchGrader(),
                    series=SERIES,
                )
            )
        requests = list(fake.requests)
    db = work / "w.duckdb"
    assert not ingest_log(log, db, work / "dlt").quarantined
    run_dbt(["build", *NO_UNIT_TESTS, "--select", "+series_run1", "+series_summary"], db, work)
    return {"db": db, "summaries": summaries, "requests": requests, "log": log}


def rows(db, sql, params=()):
    with duckdb.connect(str(db), read_only=True) as con:
        cursor = con.execute(sql, list(params))
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]


@pytest.mark.slow  # `built` runs `dbt build`
def test_three_runs_call_each_vendor_answer_endpoint_and_store_its_own_answer(built):
    assert [s.run_id for s in built["summaries"]] and len(
        {s.run_id for s in built["summaries"]}
    ) == 3
    per_vendor = {
        v: sum(1 for vendor, _ in built["requests"] if vendor == v)
        for v in ("exa", "tavily", "nimble", "parallel")
    }
    assert per_vendor == {"exa": 90, "tavily": 90, "nimble": 90, "parallel": 90}
    bodies = [b for vendor, b in built["requests"] if vendor == "tavily"]
    assert all(b["include_answer"] is True for b in bodies)
    answers = [e for _r, e in built["log"].read() if e["event_type"] == "answer_synthesized"]
    assert answers and all(e["payload"]["llm"] is None for e in answers)  # no synthesiser of ours


@pytest.mark.slow  # `built` runs `dbt build`
def test_per_run_curve_noise_band_and_memory(built):
    curve = rows(
        built["db"],
        "select lane, lane_kind, run_index, strict_accuracy, delta_vs_previous, within_noise_band "
        "from marts.fct_series_vertical_accuracy where vertical = '(all)' order by lane, run_index",
    )
    by_lane: dict[str, list[dict]] = {}
    for r in curve:
        by_lane.setdefault(r["lane"], []).append(r)
    assert set(by_lane) == set(LANES)
    assert all(r["lane_kind"] == "vendor_answer" for r in curve)
    nimble = [r["strict_accuracy"] for r in by_lane["nimble_answer"]]
    assert nimble[0] < nimble[1] < nimble[2]  # memory accumulates between runs
    assert not any(r["within_noise_band"] for r in by_lane["nimble_answer"][1:])
    for lane in ("exa_answer", "tavily_answer", "parallel_answer"):  # no memory: flat
        assert len({r["strict_accuracy"] for r in by_lane[lane]}) == 1
        assert all(r["within_noise_band"] for r in by_lane[lane][1:])
    summary = {
        r["lane"]: r
        for r in rows(built["db"], "select * from marts.series_summary where series = ?", [SERIES])
    }
    assert summary["nimble_answer"]["range_points"] == pytest.approx((nimble[2] - nimble[0]) * 100)
    assert summary["nimble_answer"]["noise_band_points"] == BAND
    # the existing series mart agrees with the per-vertical '(all)' rows
    plain = rows(
        built["db"],
        "select lane, run_index, strict_accuracy from marts.fct_series_accuracy order by lane, run_index",
    )
    assert [(r["lane"], r["run_index"], r["strict_accuracy"]) for r in plain] == [
        (r["lane"], r["run_index"], r["strict_accuracy"]) for r in curve
    ]


@pytest.mark.slow  # `built` runs `dbt build`
def test_per_vertical_curves_add_up(built):
    per_vertical = rows(
        built["db"],
        "select lane, run_index, vertical, n_attempted, n_correct from "
        "marts.fct_series_vertical_accuracy where vertical != '(all)'",
    )
    assert {r["vertical"] for r in per_vertical} == {"Science and technology", "Politics", "Art"}
    assert all(r["n_attempted"] == 10 for r in per_vertical)
    totals = rows(
        built["db"],
        "select lane, run_index, n_correct from marts.fct_series_vertical_accuracy "
        "where vertical = '(all)'",
    )
    for total in totals:
        parts = [
            r["n_correct"]
            for r in per_vertical
            if r["lane"] == total["lane"] and r["run_index"] == total["run_index"]
        ]
        assert sum(parts) == total["n_correct"]


@pytest.mark.slow  # `built` runs `dbt build`
def test_run1_view_ranks_within_the_answer_kind_and_states_the_confound(built):
    view = {
        r["lane"]: r
        for r in rows(
            built["db"],
            "select * from marts.series_run1 where vertical = '(all)' and series = ?",
            [SERIES],
        )
    }
    run1 = rows(
        built["db"],
        "select lane, strict_accuracy from marts.fct_series_vertical_accuracy "
        "where vertical = '(all)' and run_index = 1",
    )
    best = max(run1, key=lambda r: r["strict_accuracy"])["lane"]
    assert view[best]["run1_rank"] == 1
    assert view["nimble_answer"]["change_since_run1"] > 0
    assert not view["nimble_answer"]["change_within_noise_band"]
    assert view["exa_answer"]["change_since_run1"] == 0
    assert "confounded with learning" in view["nimble_answer"]["order_confound"]
    assert view["nimble_answer"]["n_runs"] == 3


def test_answer_lanes_are_not_mixed_with_synthesised_lanes_unless_asked():
    from collectors.qa.lane_registry import LaneConfigError

    with pytest.raises(LaneConfigError, match="never ranked with synthesised lanes"):
        build_lanes(["exa_answer", "closed-book"], environ=KEYS)
    lanes = build_lanes(
        ["exa_answer", "closed-book"], environ={**KEYS, "BENCH_MIX_LANE_KINDS": "1"}
    )
    assert [lane.name for lane in lanes] == ["exa_answer", "closed-book"]


def test_an_answer_lanes_rate_is_the_vendors_unless_overridden():
    """The documented rate paces a real key; an override (one value or by lane) reaches the
    throttle and the run's recorded settings, as a search lane's does."""
    default = {lane.name: lane for lane in build_lanes(LANES, environ=KEYS)}
    assert {name: lane.rate_per_s for name, lane in default.items()} == {
        name: ANSWER_LANES[name].rate_per_s for name in LANES
    }
    by_lane = build_lanes(LANES, environ=KEYS, rate_per_s={"exa_answer": 50.0})
    rates = {lane.name: lane.system_ref().settings["rate_per_s"] for lane in by_lane}
    assert rates["exa_answer"] == 50.0
    assert rates["tavily_answer"] == ANSWER_LANES["tavily_answer"].rate_per_s
    (every,) = build_lanes(["nimble_answer"], environ=KEYS, rate_per_s=100.0)
    assert every.system_ref().settings["rate_per_s"] == 100.0


def test_an_answer_lane_needs_its_key():
    from collectors.http import MissingApiKey

    with pytest.raises(MissingApiKey):
        build_lanes(["tavily_answer"], environ={})


def test_the_vendors_sdks_read_the_fake_and_our_lanes_read_what_they_read():
    """Fakes answer to the vendor: exa-py, tavily-python, nimble-python and parallel-web parse
    the fake's responses, and our lanes extract the same answer and citations from the stored
    body."""
    import asyncio

    from exa_py import Exa
    from nimble_python.types.search_response import SearchResponse
    from parallel import Parallel
    from tavily import TavilyClient

    question = "Who wrote the play Hamlet?"
    knowledge = {question: "William Shakespeare"}
    skill = {"exa": 1.0, "tavily": 1.0, "nimble": 1.0, "parallel": 1.0}
    with AnswerProductsFake(knowledge, skill=skill) as fake:
        urls = fake.base_urls()
        exa = Exa(api_key="k", base_url=urls["exa"]).answer(question, text=True)
        tavily = TavilyClient(api_key="tvly-k", api_base_url=urls["tavily"]).search(
            question, include_answer=True, max_results=10
        )
        nimble = SearchResponse.model_validate(fake.respond("nimble", {"query": question}))
        client = Parallel(api_key="k", base_url=urls["parallel"], max_retries=0)
        run = client.task_run.create(input=question, processor="base")
        parallel = client.task_run.result(run.run_id)
        lanes = {lane.name: lane for lane in build_lanes(LANES, environ=KEYS, base_urls=urls)}

        async def ask(lane):
            async with lane:
                found = await lane.search(question, item_id="q1", attempt=1)
            return found[-1] if isinstance(found, tuple) else found  # after Parallel's submit

        calls = {name: asyncio.run(ask(lane)) for name, lane in lanes.items()}
    sdk_view = {
        "exa_answer": (exa.answer, [c.url for c in exa.citations]),
        "tavily_answer": (tavily["answer"], [r["url"] for r in tavily["results"]]),
        "nimble_answer": (
            nimble.answer,
            [nimble.results[c.result_index].url for c in nimble.answer_citations or []],
        ),
        "parallel_answer": (
            parallel.output.content,
            [c.url for basis in parallel.output.basis for c in basis.citations or []],
        ),
    }
    for name, lane in lanes.items():
        call = calls[name]
        assert call.status_code == 200
        assert "k-" not in call.request.model_dump_json()  # the key is redacted
        _outcome, answer = lane.own_answer(call)
        assert (answer, [c.url for c in lane.normalize(call)]) == sdk_view[name]
