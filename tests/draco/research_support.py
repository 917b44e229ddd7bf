"""Shared bits of the research-system tests: a real DRACO task, the instruction, canary keys
and an `emit` that records payloads and returns their deterministic event ids."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from collectors.draco.dataset import parse_rubric_jsonl
from collectors.draco.model import RubricTask
from collectors.draco.systems import VENDOR_KEY_ENVS
from warehouse.events import Payload, parse_payload
from warehouse.ids import event_id_for

RUN_ID = "run-research-tests"
TASK_ID = "0c2c668a-c3bf-41af-93c9-b5614ff63508"  # Academic, methodology §1.1 fixture
CANARY_KEYS = {name: f"sk-canary-{name.lower()}-Q9+/z=4e1" for name in VENDOR_KEY_ENVS}


def draco_task(shared_data: Path) -> RubricTask:
    path = shared_data / "draco" / "test.jsonl"
    tasks = parse_rubric_jsonl(path.read_bytes(), path)
    return next(task for task in tasks if task.item_id == TASK_ID)


def instruction_for(task: RubricTask) -> str:
    return (
        "Write a thorough, well-structured research report that answers the question below. "
        f"Cite your sources.\n\nQuestion:\n{task.problem}"
    )


@dataclass
class Recorder:
    payloads: list[Payload] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)

    async def __call__(self, payload: Payload) -> str:
        as_json = payload.model_dump(mode="json")
        assert parse_payload(payload.event_type, as_json) == payload
        event_id = event_id_for(payload.event_type, RUN_ID, *payload.natural_key_values())
        self.payloads.append(payload)
        self.ids.append(event_id)
        return event_id

    @property
    def stages(self) -> list[str]:
        return [p.stage for p in self.payloads]

    def dump(self) -> str:
        return json.dumps([p.model_dump(mode="json") for p in self.payloads])


def assert_terminal_valid(payload: Payload) -> None:
    as_json = payload.model_dump(mode="json")
    assert parse_payload(payload.event_type, as_json) == payload


def assert_no_keys(text: str) -> None:
    for key in CANARY_KEYS.values():
        assert key not in text
