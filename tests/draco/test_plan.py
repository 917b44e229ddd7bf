"""The run plan on the real DRACO file: selection, judge calls, cost per system."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collectors.draco.dataset import SHA256, load_draco
from collectors.draco.model import RubricTaskSet
from collectors.draco.plan import PlanError, plan_draco, select_tasks


@pytest.fixture(scope="module")
def draco(shared_data: Path) -> RubricTaskSet:
    return load_draco(shared_data / "draco" / "test.jsonl")


PRICES = {
    "exa_agent_high": (0.5, "list_price", "2026-07-29"),
    "nimble_x_high": (2.0, "list_price", "2026-07-29"),
}


def prices(lane: str):
    return PRICES.get(lane, (None, None, None))


def test_full_run_two_systems(draco):
    plan = plan_draco(
        draco,
        lanes=["exa_agent_high", "nimble_x_high"],
        samples=3,
        judge_model="anthropic:claude-sonnet-5",
        price_lookup=prices,
    )
    document = plan.to_json()
    json.dumps(document)  # serialisable as printed by --json
    assert document["dataset"]["sha256"] == SHA256 and document["dataset"]["name"] == "draco"
    assert document["dataset"]["revision"] == "ce076749809027649ebd331bcb70f42bf720d387"
    assert len(document["tasks"]) == 100
    assert document["tasks"][0] == {
        "item_id": "0c2c668a-c3bf-41af-93c9-b5614ff63508",
        "position": 0,
        "domain": "Academic",
        "criteria": 53,
        "positive_weight": 401,
    }
    assert document["totals"] == {
        "tasks": 100,
        "criteria": 3934,
        "negative_criteria": 415,
        "positive_weight": 30724,
        "systems": 2,
        "judge_calls": 23604,
    }
    assert document["systems"] == [
        {
            "lane": "exa_agent_high",
            "tasks": 100,
            "judge_calls": 11802,
            "est_cost_usd": 50.0,
            "cost_basis": "list_price",
            "price_snapshot": "2026-07-29",
        },
        {
            "lane": "nimble_x_high",
            "tasks": 100,
            "judge_calls": 11802,
            "est_cost_usd": 200.0,
            "cost_basis": "list_price",
            "price_snapshot": "2026-07-29",
        },
    ]
    assert document["judge"]["calls_per_system"] == 11802
    assert document["judge"]["calls_total"] == 23604
    assert document["judge"]["model"] == "anthropic:claude-sonnet-5"


def test_limit_takes_the_first_tasks_in_file_order(draco):
    plan = plan_draco(draco, lanes=["local-rag"], samples=1, limit=10, judge_model="offline")
    assert [t.position for t in plan.tasks] == list(range(10))
    first_ten = sum(len(t.criteria) for t in draco.tasks[:10])
    assert plan.criteria == first_ten and plan.to_json()["totals"]["criteria"] == first_ten
    system = plan.to_json()["systems"][0]
    assert system["judge_calls"] == first_ten and system["est_cost_usd"] is None
    assert plan.to_json()["selection"] == {"limit": 10, "item_ids": None, "order": "file order"}
    assert len(select_tasks(draco, limit=1000)) == 100


def test_item_ids_select_in_file_order_then_limit(draco):
    wanted = ["f0bed5aa-f7c4-4013-8d0c-10ffebeaf300", "0c2c668a-c3bf-41af-93c9-b5614ff63508"]
    tasks = select_tasks(draco, item_ids=wanted)
    assert [t.item_id for t in tasks] == wanted[::-1]  # file order, not argument order
    plan = plan_draco(draco, lanes=["a"], samples=3, item_ids=wanted, judge_model="m")
    assert plan.judge_calls_per_system == (53 + 49) * 3
    assert [t.item_id for t in select_tasks(draco, item_ids=wanted, limit=1)] == [wanted[1]]


def test_errors_name_the_problem(draco):
    with pytest.raises(PlanError, match=r"unknown item id.*not-a-task, nor-this"):
        select_tasks(
            draco, item_ids=["0c2c668a-c3bf-41af-93c9-b5614ff63508", "not-a-task", "nor-this"]
        )
    with pytest.raises(PlanError, match="--limit"):
        select_tasks(draco, limit=0)
    with pytest.raises(PlanError, match="at least one lane"):
        plan_draco(draco, lanes=[], samples=3, judge_model="m")
    with pytest.raises(PlanError, match="named twice: a"):
        plan_draco(draco, lanes=["a", "b", "a"], samples=3, judge_model="m")
    with pytest.raises(PlanError, match="--samples"):
        plan_draco(draco, lanes=["a"], samples=0, judge_model="m")
