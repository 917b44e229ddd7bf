"""`bench import draco-results` / `bench import qa-results` (and `bench exclude`): other
harnesses' published results as events, scored by our models beside their own figures."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from bench import pipeline
from bench.options import HomeOption
from bench.settings import shared_data_dir
from warehouse.paths import BenchPaths

console = Console(stderr=True)

DRACO_FORMATS = "valyu | nimble | csv"
SHOWN_IDS = 10


def _ids(ids: list[str]) -> str:
    more = f" … (+{len(ids) - SHOWN_IDS} more)" if len(ids) > SHOWN_IDS else ""
    return ", ".join(ids[:SHOWN_IDS]) + more


def print_unjoined(label: str, ids: list[str], meaning: str) -> None:
    """Every id that did not join is printed (never dropped silently); the full lists are in the
    imported_file_registered event and the marts."""
    if ids:
        console.print(f"[yellow]{len(ids)} {label}[/yellow] ({meaning}): {_ids(ids)}")


def register(import_app: typer.Typer, paths_for: Callable[[Path | None], BenchPaths]) -> None:
    @import_app.command("draco-results")
    def import_draco_results_cmd(
        file: Annotated[Path, typer.Argument(help="The results file to import.")],
        format: Annotated[
            str,
            typer.Option(
                "--format",
                help=f"{DRACO_FORMATS}: valyu grading .eval.json or inference .jsonl, Nimble "
                "results/<system>.jsonl, or the long CSV of docs/imports.md.",
            ),
        ],
        system: Annotated[str, typer.Option(help="Name of the system the file is about.")],
        judge_label: Annotated[
            str | None,
            typer.Option(
                help="Names the imported judge regime (default: the file's judge model; "
                "required for nimble and csv, whose files do not name it)."
            ),
        ] = None,
        dataset_file: Annotated[
            Path | None, typer.Option(help="Local copy of DRACO's test.jsonl (verified).")
        ] = None,
        score: Annotated[bool, typer.Option(help="Ingest, build and publish afterwards.")] = True,
        home: HomeOption = None,
    ) -> None:
        """Import another harness's DRACO results (verdicts and/or reports) as events.

        Verdicts become an imported judge regime ("imported, not judged here"), never mixed with
        ours; reports become research outputs that `bench rejudge <run>` can judge. Example:
        bench import draco-results valyu_heavy.eval.json --format valyu --system valyu_heavy"""
        from collectors.draco.dataset import load_draco
        from collectors.imports.draco_results import import_draco_results

        paths = paths_for(home)
        if dataset_file is None and (shared_data_dir() / "draco" / "test.jsonl").exists():
            dataset_file = shared_data_dir() / "draco" / "test.jsonl"
        task_set = load_draco(dataset_file, cache_dir=paths.cache_dir)
        summaries = import_draco_results(
            pipeline.event_log(paths),
            file,
            fmt=format,
            system=system,
            task_set=task_set,
            judge_label=judge_label,
            argv=sys.argv[1:],
        )
        table = Table(title=f"imported {file.name}")
        for column in ("run", "kind", "regime", "items in file", "completed", "failed"):
            table.add_column(column)
        for s in summaries:
            table.add_row(
                s.run_id,
                s.kind,
                s.judge_id or "-",
                str(s.items_in_file),
                str(s.completed),
                str(s.failed),
            )
        console.print(table)
        for s in summaries:
            if s.already_imported:
                console.print(f"[green]{s.kind} run {s.run_id} was already imported; nothing to do")
        first = summaries[0]
        print_unjoined("unmatched ids", first.unmatched_ids, "in the file, not DRACO tasks")
        print_unjoined("absent tasks", first.absent_ids, "DRACO tasks the file has no record for")
        print_unjoined("duplicate ids", first.duplicate_ids, "repeated in the file")
        for s in summaries:
            if s.kind == "inference" and not s.already_imported:
                console.print(
                    f"re-judge its reports with: bench rejudge {s.run_id} --judge offline"
                )
        if score:
            with console.status("loading events, building marts, publishing"):
                pipeline.refresh(paths)
            console.print(f"published {paths.serve_db}")

    @import_app.command("qa-results")
    def import_qa_results_cmd(
        file: Annotated[Path, typer.Argument(help="The per-question results file to import.")],
        format: Annotated[
            str,
            typer.Option(
                "--format",
                help="nimble (dataset_simpleqa_raw_results_<lane>.csv) | simple-evals "
                "(<eval>_allresults.json) | csv (question,answer,grade; docs/imports.md)",
            ),
        ],
        lane: Annotated[str, typer.Option(help="Name of the lane the file is about.")],
        grader_label: Annotated[
            str | None,
            typer.Option(help="Names the imported grader regime (the files do not name it)."),
        ] = None,
        questions: Annotated[
            str,
            typer.Option(help="'simpleqa' (the pinned test set), 'demo' or a question-set file."),
        ] = "simpleqa",
        dataset_file: Annotated[
            Path | None, typer.Option(help="Local copy of simple_qa_test_set.csv (verified).")
        ] = None,
        score: Annotated[bool, typer.Option(help="Ingest, build and publish afterwards.")] = True,
        home: HomeOption = None,
    ) -> None:
        """Import another harness's SimpleQA rows, joined to the questions by text.

        Stored grades become an imported grader regime, never ours. Example:
        bench import qa-results dataset_simpleqa_raw_results_nimble_search.csv --format nimble
        --lane nimble_search --grader-label gpt-4o"""
        from bench.qa_cli import _questions, _simpleqa
        from collectors.imports.qa_results import import_qa_results

        paths = paths_for(home)
        dataset = (
            _simpleqa(paths, dataset_file) if questions == "simpleqa" else _questions(questions)
        )
        summary = import_qa_results(
            pipeline.event_log(paths),
            file,
            fmt=format,
            lane=lane,
            dataset=dataset,
            grader_label=grader_label,
            argv=sys.argv[1:],
        )
        table = Table(title=f"imported {file.name}")
        for column in ("run", "grader regime", "rows", "landed", "failed"):
            table.add_column(column)
        table.add_row(
            summary.run_id,
            summary.judge_id or "-",
            str(summary.items_in_file),
            str(summary.completed),
            str(summary.failed),
        )
        console.print(table)
        if summary.already_imported:
            console.print(f"[green]run {summary.run_id} was already imported; nothing to do")
        print_unjoined(
            "unmatched rows", summary.unmatched_ids, "no SimpleQA question has that text"
        )
        if score:
            with console.status("loading events, building marts, publishing"):
                pipeline.refresh(paths)
            console.print(f"published {paths.serve_db}")
