"""Sizes are checked before anything is appended: an oversized import or event is a clear
error naming what and how big, and the log stays intact."""

from __future__ import annotations

import pytest

import warehouse.log as log_module
from collectors.extraction.predictions import PredictionsError, parse_predictions
from warehouse.events import ItemRegistered, make_event
from warehouse.log import EventLog, EventTooLarge
from warehouse.provenance import producer_for
from warehouse.verify import verify_log


def test_an_import_over_the_size_limit_is_refused_before_reading(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCH_MAX_IMPORT_BYTES", "1000")
    big = tmp_path / "predictions.json"
    big.write_text('{"a": {"articleBody": "' + "x" * 5000 + '"}}')
    with pytest.raises(
        PredictionsError, match=r"predictions.json: 5,0\d\d bytes, over the import limit"
    ):
        parse_predictions(big, corpus=None)


def test_deeply_nested_predictions_are_a_clear_error(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(PredictionsError, match=r"deep\.json"):
        parse_predictions(deep, corpus=None)


def test_an_event_over_the_line_limit_is_refused_and_the_log_stays_intact(tmp_path, monkeypatch):
    monkeypatch.setattr(log_module, "MAX_EVENT_BYTES", 2000)
    producer = producer_for({"test": "limits"})

    def event(i: int, text: str):
        return make_event(
            ItemRegistered(
                item_id=f"item-{i}",
                dataset_sha256="0" * 64,
                position=i,
                ground_truth_text=text,
                anchors=[],
                anchor_rule_version="1",
            ),
            run_id="run-limits",
            producer=producer,
        )

    log = EventLog(tmp_path / "log")
    with log.writer() as writer:
        writer.append([event(0, "small")])
        with pytest.raises(EventTooLarge, match=r"item_registered\) is [\d,]+ bytes"):
            writer.append([event(1, "x" * 5000)])
        writer.append([event(2, "small again")])
    assert verify_log(log).intact
    assert len(list(log.read())) == 2


def test_a_csv_field_over_the_csv_limit_is_a_clear_error(tmp_path):
    import csv

    from collectors.qa.dataset import DatasetError
    from collectors.qa.question_sets import load_question_set
    from collectors.qa.simpleqa import HEADER, parse_simpleqa_csv

    huge = "x" * (csv.field_size_limit() + 10)
    data = (",".join(HEADER) + "\n" + f'"{{}}","{huge}",answer\n').encode()
    with pytest.raises(DatasetError, match=r"simple_qa_test_set.csv: line 2: not a CSV record"):
        parse_simpleqa_csv(data, "simple_qa_test_set.csv")
    mine = tmp_path / "mine.csv"
    mine.write_text(f'question,gold_answer\n"{huge}",a\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"mine\.csv: line 2: not a CSV record"):
        load_question_set(mine)
