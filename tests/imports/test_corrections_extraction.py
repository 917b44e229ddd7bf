"""item_excluded honoured by the extraction marts: a page excluded from an imported predictions
run of the real article-extraction-benchmark leaves fct_extraction_pages and the leaderboard."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from dbt_harness import NO_UNIT_TESTS, run_dbt

from collectors.extraction.article_benchmark import load_article_benchmark
from collectors.extraction.predictions import import_predictions
from collectors.imports.corrections import append_corrections, exclude_items, provenance
from ingest.pipeline import ingest_log
from warehouse.log import EventLog

pytestmark = pytest.mark.slow  # runs `dbt build`

DATA = (
    Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "article-extraction-benchmark"
)


def test_excluded_page_leaves_the_extraction_marts(tmp_path):
    corpus = load_article_benchmark(DATA, cache_dir=tmp_path / "cache")
    truth = json.loads((DATA / "ground-truth.json").read_text())
    predictions = {
        item.item_id: {"articleBody": truth[item.item_id]["articleBody"]} for item in corpus.items
    }
    path = tmp_path / "perfect.json"
    path.write_text(json.dumps(predictions))
    log = EventLog(tmp_path / "log")
    summary = import_predictions(log, path, "perfect", "1", corpus)
    excluded = corpus.items[0].item_id
    append_corrections(
        log,
        exclude_items(
            log,
            [excluded],
            benchmark="extraction",
            reason="page changed upstream",
            provenance=provenance("cli"),
        ),
    )
    db = tmp_path / "w.duckdb"
    assert not ingest_log(log, db, tmp_path / "dlt").quarantined
    run_dbt(
        ["build", *NO_UNIT_TESTS, "--select", "+extraction_leaderboard", "+fct_extraction_pages"],
        db,
        tmp_path,
    )
    with duckdb.connect(str(db), read_only=True) as con:
        pages = {
            r[0]
            for r in con.execute(
                "select item_id from marts.fct_extraction_pages where run_id = ?", [summary.run_id]
            ).fetchall()
        }
        (n_items,) = con.execute(
            "select n_items from marts.extraction_leaderboard where run_id = ?", [summary.run_id]
        ).fetchone()
    assert excluded not in pages and len(pages) == len(corpus.items) - 1
    assert n_items == len(corpus.items) - 1
