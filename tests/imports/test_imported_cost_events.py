"""The imported cost on the event contract: `imported_file_registered.item_figures[].cost_usd` (a
QA row's cost as the file states it) and `research_completed.cost_basis = imported` (a DRACO
report's cost from a file) are additive: events written before them read unchanged at the same
schema version (no upcaster), and a per-row file's cost column lands in the figures as stated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from collectors.imports.qa_results import import_qa_results
from collectors.qa.simpleqa import load_simpleqa
from warehouse.events import (
    PAYLOAD_MODELS,
    ImportedFileRegistered,
    ImportedItemFigure,
    ResearchCompleted,
)
from warehouse.log import EventLog
from warehouse.upcasters import upcast

REPO = Path(__file__).resolve().parents[2]
SIMPLEQA = REPO / ".." / "shared" / "data" / "simpleqa" / "simple_qa_test_set.csv"
SHA = "0" * 64


def _file_event(figures: list[ImportedItemFigure]) -> ImportedFileRegistered:
    return ImportedFileRegistered(
        benchmark="simpleqa",
        kind="qa_results",
        format="csv",
        lane="l",
        file_name="f.csv",
        file_sha256=SHA,
        file_bytes=1,
        item_figures=figures,
    )


def test_a_figure_written_before_cost_usd_reads_unchanged_at_version_1():
    written = _file_event([ImportedItemFigure(item_id="q1", latency_s=1.5)]).model_dump(mode="json")
    for figure in written["item_figures"]:
        del figure["cost_usd"]  # the shape the previous code wrote
    assert ImportedFileRegistered.schema_version == 1
    event = {"event_type": "imported_file_registered", "schema_version": 1, "payload": written}
    assert upcast(event) is event  # no upcaster: nothing to lift
    model = PAYLOAD_MODELS["imported_file_registered"].model_validate(written)
    assert model.item_figures[0].cost_usd is None
    assert model.item_figures[0].latency_s == 1.5


def test_cost_usd_is_a_non_negative_number():
    assert ImportedItemFigure(item_id="q", cost_usd=0.0042).cost_usd == 0.0042
    with pytest.raises(ValidationError):
        ImportedItemFigure(item_id="q", cost_usd=-0.01)


def _research(basis: str | None) -> dict:
    return dict(
        lane="s",
        provider="s",
        item_id="t1",
        attempt=1,
        raw_output="# Report",
        instruction_sha256=SHA,
        submitted_at="2026-01-01T00:00:00Z",
        finished_at="2026-01-01T00:00:00Z",
        wall_clock_ms=10.0,
        cost_usd=None if basis is None else 0.04,
        cost_basis=basis,
    )


def test_research_cost_basis_imported_is_accepted_and_billed_still_reads():
    assert ResearchCompleted.schema_version == 1
    for basis in ("billed", "list_price", "estimate", "imported", None):
        assert ResearchCompleted(**_research(basis)).cost_basis == basis
    with pytest.raises(ValidationError):
        ResearchCompleted(**_research("guessed"))


def test_a_per_row_cost_lands_in_the_item_figures_as_stated(tmp_path):
    dataset = load_simpleqa(SIMPLEQA)
    questions = dataset.questions[:4]
    costs = [0.0042, None, 0.0, 0.125]
    path = tmp_path / "rows.jsonl"
    path.write_text(
        "".join(
            json.dumps({"q": q.problem, "a": q.gold_answer, "g": "A", "usd": c}) + "\n"
            for q, c in zip(questions, costs, strict=True)
        )
    )
    log = EventLog(tmp_path / "log")
    import_qa_results(
        log,
        path,
        fmt="jsonl",
        lane="l",
        dataset=dataset,
        column_map="question=q,answer=a,grade=g,cost_usd=usd",
    )
    (registered,) = [
        event["payload"]
        for _, event in log.read()
        if event["event_type"] == "imported_file_registered"
    ]
    by_item = {f["item_id"]: f["cost_usd"] for f in registered["item_figures"]}
    assert [by_item[q.item_id] for q in questions] == costs
