"""Plan a QA run: the frozen spec, its id, the selected questions, calls and list-price cost.

The spec holds everything that decides the results: dataset sha256, sampler + limit + seed
and the selected item ids, lanes with their settings, synthesiser / grader / judge settings.
`config_sha256` is that configuration; the spec adds the series name and run index, and the
run id is derived from the spec. A series repeats one configuration: its run index is
1 + its finished runs, an unfinished run of the same configuration is resumed, and any other
configuration under the same series name is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from collectors.qa.dataset import QaDataset, SelectedQuestion, select_questions
from collectors.qa.lanes import QaLane
from collectors.qa.roles import Grader, RelevanceJudge, Synthesizer
from collectors.qa.run_state import read_series
from collectors.runs.shard import Shard, sharded
from warehouse.canonical import canonical_sha256
from warehouse.ids import run_id_for
from warehouse.log import EventLog

RESULTS_PER_QUERY = 10


class QaRunError(ValueError):
    """The run cannot start as asked (bad lanes, series configuration changed, ...)."""


@dataclass(frozen=True)
class QaPlan:
    dataset: QaDataset
    selected: tuple[SelectedQuestion, ...]
    lanes: tuple[QaLane, ...]
    synthesizer: Synthesizer
    grader: Grader
    relevance_judge: RelevanceJudge | None
    limit: int | None
    random_state: int
    spec: dict[str, Any]
    spec_sha256: str
    config_sha256: str
    run_id: str
    series: str | None
    run_index: int | None
    shard: Shard | None = None  # one slice of the run (collectors/runs/shard.py)

    @property
    def units(self) -> list[tuple[str, str]]:
        return [(s.question.item_id, lane.name) for s in self.selected for lane in self.lanes]

    def for_shard(self, shard: Shard | None) -> QaPlan:
        return sharded(self, shard, "selected", key=lambda selected: selected.question.item_id)

    def calls_per_lane(self) -> dict[str, dict[str, int]]:
        n = len(self.selected)
        k = RESULTS_PER_QUERY
        calls = {}
        for lane in self.lanes:
            calls[lane.name] = {
                "search": n if lane.needs_search else 0,
                "synthesize_max": n,
                "grade_max": n,
                "relevance_max": n * k if (lane.needs_search and self.relevance_judge) else 0,
            }
        return calls

    def estimated_cost_usd(self) -> dict[str, float | None]:
        n = len(self.selected)
        return {
            lane.name: (
                None
                if lane.price_per_1k_usd is None
                else round(lane.price_per_1k_usd * n / 1000, 4)
            )
            for lane in self.lanes
        }

    def as_dict(self) -> dict[str, Any]:
        costs = self.estimated_cost_usd()
        return {
            "run_id": self.run_id,
            "benchmark": self.dataset.benchmark,
            "dataset": self.dataset.dataset.model_dump(mode="json"),
            "limit": self.limit,
            "random_state": self.random_state,
            "series": self.series,
            "run_index": self.run_index,
            "questions": [
                {
                    "sample_order": s.sample_order,
                    "row_position": s.question.row_position,
                    "item_id": s.question.item_id,
                    "problem": s.question.problem,
                }
                for s in self.selected
            ],
            "row_positions": [s.question.row_position for s in self.selected],
            "lanes": [
                {
                    "name": lane.name,
                    "provider": lane.provider,
                    "price_per_1k_usd": lane.price_per_1k_usd,
                    "estimated_cost_usd": costs[lane.name],
                    "calls": self.calls_per_lane()[lane.name],
                }
                for lane in self.lanes
            ],
            "estimated_search_cost_usd": round(sum(c for c in costs.values() if c is not None), 4),
            "synthesizer": self.spec["synthesizer"],
            "grader": self.spec["grader"],
            "relevance_judge": self.spec["relevance_judge"],
            "spec_sha256": self.spec_sha256,
            "config_sha256": self.config_sha256,
        }


def plan_qa(
    dataset: QaDataset,
    lanes: Sequence[QaLane],
    *,
    limit: int | None,
    random_state: int = 0,
    synthesizer: Synthesizer,
    grader: Grader,
    relevance_judge: RelevanceJudge | None = None,
    series: str | None = None,
    log: EventLog | None = None,
) -> QaPlan:
    if not lanes:
        raise QaRunError("no lanes selected")
    names = [lane.name for lane in lanes]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise QaRunError(f"lane(s) given twice: {', '.join(duplicates)}")
    ordered = tuple(sorted(lanes, key=lambda lane: lane.name))  # order must not change the run id
    selected = tuple(select_questions(dataset, limit, random_state))
    config = {
        "benchmark": dataset.benchmark,
        "dataset_sha256": dataset.dataset.sha256,
        "selection": {
            "sampler": "random.Random(random_state).sample(rows, limit)",
            "limit": limit,
            "random_state": random_state,
            "item_ids": [s.question.item_id for s in selected],
        },
        "lanes": [lane.system_ref().model_dump(mode="json") for lane in ordered],
        "synthesizer": synthesizer.system_ref().model_dump(mode="json"),
        "grader": {
            **grader.system_ref().model_dump(mode="json"),
            "grader_id": grader.grader_id,
            "official": grader.official,
        },
        "relevance_judge": (
            {
                **relevance_judge.system_ref().model_dump(mode="json"),
                "judge_id": relevance_judge.judge_id,
            }
            if relevance_judge
            else None
        ),
    }
    config_sha256 = canonical_sha256(config)
    run_index = None
    if series is not None:
        if not series.strip():
            raise QaRunError("series name must not be empty")
        if log is None:
            raise QaRunError("a series needs the event log to number its runs")
        run_index = _series_index(log, series, config_sha256)
    spec = {**config, "config_sha256": config_sha256, "series": series, "run_index": run_index}
    spec_sha256 = canonical_sha256(spec)
    return QaPlan(
        dataset=dataset,
        selected=selected,
        lanes=ordered,
        synthesizer=synthesizer,
        grader=grader,
        relevance_judge=relevance_judge,
        limit=limit,
        random_state=random_state,
        spec=spec,
        spec_sha256=spec_sha256,
        config_sha256=config_sha256,
        run_id=run_id_for(spec_sha256),
        series=series,
        run_index=run_index,
    )


def _series_index(log: EventLog, series: str, config_sha256: str) -> int:
    """1 + finished runs of the series; an unfinished run with this config is resumed."""
    runs = read_series(log, series)
    other = [run for run in runs if run.config_sha256 != config_sha256]
    if other:
        raise QaRunError(
            f"series {series!r} was run with a different configuration (config sha256 "
            f"{other[0].config_sha256[:12]}, this one {config_sha256[:12]}): a series repeats the "
            "identical questions, lanes, synthesiser, grader and judge; start a new series name "
            "for the changed configuration"
        )
    unfinished = [run for run in runs if not run.finished]
    if unfinished:
        return unfinished[-1].run_index
    return 1 + sum(run.finished for run in runs)
