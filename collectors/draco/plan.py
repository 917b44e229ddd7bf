"""What a DRACO (or rubric task set) run would do, before anything is called.

`bench plan draco --json` prints it: the run id `bench run draco` would write to (or resume)
with the same options (the CLI builds the run's own plan, collectors.draco.runner.plan_draco_run,
and passes its id here), the selected tasks, their criteria, judge calls (criteria × samples per
system; a re-ask adds at most one call per sample, not counted) and the estimated research cost
per system from the lane's list price.

Selection: `item_ids` picks tasks by upstream id (any unknown id is an error naming it) and
keeps them in file order; `limit` then takes the first N tasks in file order (no sampling:
DRACO has no upstream sampler, and file order keeps `--limit 10` the same 10 tasks on every
run). A limit above the number of tasks takes them all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from collectors.draco.model import RubricTask, RubricTaskSet

# lane -> (list price per task in USD or None, cost basis, price snapshot date), e.g.
# (0.5, "list_price", "2026-07-29"); supplied by the lane registry.
PriceLookup = Callable[[str], tuple[float | None, str | None, str | None]]


class PlanError(ValueError):
    """The run cannot be planned as asked (unknown item id, bad limit, no lanes ...)."""


def select_tasks(
    task_set: RubricTaskSet,
    *,
    limit: int | None = None,
    item_ids: Sequence[str] | None = None,
) -> tuple[RubricTask, ...]:
    tasks = task_set.tasks
    if item_ids:
        known = {task.item_id for task in tasks}
        unknown = [item_id for item_id in dict.fromkeys(item_ids) if item_id not in known]
        if unknown:
            raise PlanError(
                f"unknown item id(s) in {task_set.name} ({task_set.sha256[:12]}): "
                f"{', '.join(unknown)}"
            )
        wanted = set(item_ids)
        tasks = tuple(task for task in tasks if task.item_id in wanted)
    if limit is not None:
        if limit < 1:
            raise PlanError(f"--limit must be a positive number of tasks, got {limit}")
        tasks = tasks[:limit]
    return tasks


@dataclass(frozen=True)
class LanePlan:
    lane: str
    tasks: int
    judge_calls: int
    est_cost_usd: float | None
    cost_basis: str | None
    price_snapshot: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "lane": self.lane,
            "tasks": self.tasks,
            "judge_calls": self.judge_calls,
            "est_cost_usd": self.est_cost_usd,
            "cost_basis": self.cost_basis,
            "price_snapshot": self.price_snapshot,
        }


@dataclass(frozen=True)
class DracoPlan:
    task_set: RubricTaskSet
    tasks: tuple[RubricTask, ...]
    lanes: tuple[LanePlan, ...]
    samples: int
    judge_model: str
    limit: int | None
    item_ids: tuple[str, ...] | None
    run_id: str | None = None  # the run's id, when the plan was made from the run's own plan

    @property
    def criteria(self) -> int:
        return sum(len(task.criteria) for task in self.tasks)

    @property
    def judge_calls_per_system(self) -> int:
        return self.criteria * self.samples

    def to_json(self) -> dict[str, Any]:
        criteria = [c for task in self.tasks for c in task.criteria]
        return {
            "run_id": self.run_id,
            "dataset": {
                "name": self.task_set.name,
                "uri": self.task_set.uri,
                "sha256": self.task_set.sha256,
                "revision": self.task_set.revision,
                "tasks_in_file": len(self.task_set.tasks),
            },
            "selection": {
                "limit": self.limit,
                "item_ids": list(self.item_ids) if self.item_ids else None,
                "order": "file order",
            },
            "tasks": [
                {
                    "item_id": task.item_id,
                    "position": task.position,
                    "domain": task.domain,
                    "criteria": len(task.criteria),
                    "positive_weight": task.positive_weight,
                }
                for task in self.tasks
            ],
            "totals": {
                "tasks": len(self.tasks),
                "criteria": len(criteria),
                "negative_criteria": sum(c.weight < 0 for c in criteria),
                "positive_weight": sum(task.positive_weight for task in self.tasks),
                "systems": len(self.lanes),
                "judge_calls": self.judge_calls_per_system * len(self.lanes),
            },
            "systems": [lane.to_json() for lane in self.lanes],
            "judge": {
                "model": self.judge_model,
                "samples": self.samples,
                "calls_per_system": self.judge_calls_per_system,
                "calls_total": self.judge_calls_per_system * len(self.lanes),
                "note": "one call per criterion per sample; a re-ask adds at most one per sample",
            },
        }


def plan_draco(
    task_set: RubricTaskSet,
    *,
    lanes: Sequence[str],
    samples: int,
    limit: int | None = None,
    item_ids: Sequence[str] | None = None,
    judge_model: str,
    price_lookup: PriceLookup | None = None,
    run_id: str | None = None,
) -> DracoPlan:
    if not lanes:
        raise PlanError("no systems to run: name at least one lane")
    duplicates = sorted({lane for lane in lanes if list(lanes).count(lane) > 1})
    if duplicates:
        raise PlanError(f"lane(s) named twice: {', '.join(duplicates)}")
    if samples < 1:
        raise PlanError(f"--samples must be >= 1, got {samples}")
    tasks = select_tasks(task_set, limit=limit, item_ids=item_ids)
    judge_calls = sum(len(task.criteria) for task in tasks) * samples
    lane_plans = []
    for lane in lanes:
        price, basis, snapshot = price_lookup(lane) if price_lookup else (None, None, None)
        lane_plans.append(
            LanePlan(
                lane=lane,
                tasks=len(tasks),
                judge_calls=judge_calls,
                est_cost_usd=None if price is None else round(price * len(tasks), 4),
                cost_basis=basis,
                price_snapshot=snapshot,
            )
        )
    return DracoPlan(
        task_set=task_set,
        tasks=tasks,
        lanes=tuple(lane_plans),
        samples=samples,
        judge_model=judge_model,
        limit=limit,
        item_ids=tuple(item_ids) if item_ids else None,
        run_id=run_id,
    )
