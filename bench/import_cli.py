"""`bench import draco-results` / `bench import qa-results` / `bench import regrade-qa` (and
`bench exclude`): other harnesses' published results as events, scored by our models beside
their own figures, and re-synthesised and re-graded by our roles."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from bench.options import HomeOption, ScoreOption
from bench.qa_cli import GraderOption, JudgeOption, SynthOption
from bench.settings import shared_data_dir
from warehouse.paths import BenchPaths

console = Console(stderr=True)

DRACO_FORMATS = "valyu | nimble | csv"
SHOWN_IDS = 10
SimpleqaFileOption = Annotated[
    Path | None, typer.Option(help="Local copy of simple_qa_test_set.csv (verified).")
]


def _after_writing(paths: BenchPaths, *, score: bool, announce: bool = True) -> None:
    """After an import or a correction: push the log when a bucket is set, then with --score
    ingest, build and publish (bench/log_cli.after_writing)."""
    from bench.log_cli import after_writing
    from transform import pipeline

    def refresh() -> None:
        with console.status("loading events, building marts, publishing"):
            pipeline.refresh(paths)
        if announce:
            console.print(f"published {paths.serve_db}")

    after_writing(paths, console, refresh if score else None)


def _ids(ids: list[str]) -> str:
    more = f" … (+{len(ids) - SHOWN_IDS} more)" if len(ids) > SHOWN_IDS else ""
    return ", ".join(ids[:SHOWN_IDS]) + more


def print_unjoined(label: str, ids: list[str], meaning: str) -> None:
    """Every id that did not join is printed (never dropped silently); the full lists are in the
    imported_file_registered event and the marts."""
    if ids:
        console.print(f"[yellow]{len(ids)} {label}[/yellow] ({meaning}): {_ids(ids)}")


def register(
    app: typer.Typer, import_app: typer.Typer, paths_for: Callable[[Path | None], BenchPaths]
) -> None:
    _register_corrections(app, import_app, paths_for)

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
        score: ScoreOption = True,
        home: HomeOption = None,
    ) -> None:
        """Import another harness's DRACO results (verdicts and/or reports) as events.

        Verdicts become an imported judge regime ("imported, not judged here"), never mixed with
        ours; reports become research outputs that `bench rejudge <run>` can judge. Example:
        bench import draco-results valyu_heavy.eval.json --format valyu --system valyu_heavy"""
        from collectors.draco.dataset import load_draco
        from collectors.imports.draco_results import import_draco_results
        from transform import pipeline

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
        _after_writing(paths, score=score)

    @import_app.command("qa-results")
    def import_qa_results_cmd(
        file: Annotated[Path, typer.Argument(help="The per-question results file to import.")],
        format: Annotated[
            str,
            typer.Option(
                "--format",
                help="nimble (dataset_simpleqa_raw_results_<lane>.csv) | simple-evals "
                "(<eval>_allresults.json) | csv (one row per question) | jsonl (one JSON object "
                "per line) | inspect (an inspect_ai .eval or .json log; needs "
                "pip install 'bench-warehouse[inspect]'); csv and jsonl take --map "
                "(docs/imports.md)",
            ),
        ],
        lane: Annotated[str, typer.Option(help="Name of the lane the file is about.")],
        column_map: Annotated[
            str | None,
            typer.Option(
                "--map",
                help="csv / jsonl: FIELD=COLUMN,... naming the file's columns for question, "
                "answer, grade (A/B/C or correct/incorrect/not_attempted) and optional urls, "
                "latency_s or latency_ms (the unit is the field's), cost_usd (US dollars per "
                "row). Unmapped fields are read from "
                "the column of the same name.",
            ),
        ] = None,
        grader_label: Annotated[
            str | None,
            typer.Option(
                help="Names the imported grader regime (the files do not name it; an inspect "
                "log's default is its scorer and grader model)."
            ),
        ] = None,
        questions: Annotated[
            str,
            typer.Option(help="'simpleqa' (the pinned test set), 'demo' or a question-set file."),
        ] = "simpleqa",
        dataset_file: SimpleqaFileOption = None,
        score: ScoreOption = True,
        home: HomeOption = None,
    ) -> None:
        """Import another harness's SimpleQA rows, joined to the questions by text.

        Stored grades become an imported grader regime, never ours. Example:
        bench import qa-results dataset_simpleqa_raw_results_nimble_search.csv --format nimble
        --lane nimble_search --grader-label gpt-4o

        A per-row JSONL in the common SimpleQA shape: bench import qa-results results.jsonl
        --format jsonl --lane mine --grader-label gpt-4o
        --map question=problem,answer=predicted,grade=grade,latency_s=latency

        An inspect_ai log (e.g. inspect_evals/simpleqa): bench import qa-results
        logs/2026-12-05T10-00-00_simpleqa_X.eval --format inspect --lane gpt-4o-mini"""
        from bench.qa_cli import _questions, _simpleqa
        from collectors.imports.qa_results import import_qa_results
        from transform import pipeline

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
            column_map=column_map,
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
        _after_writing(paths, score=score)

    @import_app.command("regrade-qa")
    def regrade_qa_cmd(
        run_id: Annotated[str, typer.Argument(help="The import run (bench import qa-results).")],
        synthesizer: SynthOption = "offline",
        grader: GraderOption = "offline",
        relevance_judge: JudgeOption = "offline",
        questions: Annotated[
            str,
            typer.Option(help="The question set the run was imported against (as for the import)."),
        ] = "simpleqa",
        dataset_file: SimpleqaFileOption = None,
        score: ScoreOption = True,
        home: HomeOption = None,
    ) -> None:
        """Re-synthesise and re-grade an imported QA run's stored chunks with our roles.

        The file's recorded retrieval is replayed (no search call); our synthesizer answers and
        our grader grades in a run of its own, shown beside the file's own regime. Running it
        again finishes what is left and adds nothing twice."""
        from bench.qa_cli import _questions, _roles, _simpleqa
        from collectors.imports.qa_regrade import regrade_imported_qa
        from transform import pipeline

        paths = paths_for(home)
        dataset = (
            _simpleqa(paths, dataset_file) if questions == "simpleqa" else _questions(questions)
        )
        synth, grade, judge = _roles(paths, synthesizer, grader, relevance_judge)
        with console.status(f"re-synthesising and re-grading {run_id}"):
            summary = regrade_imported_qa(
                pipeline.event_log(paths),
                run_id,
                dataset,
                synthesizer=synth,
                grader=grade,
                relevance_judge=judge,
                argv=sys.argv[1:],
            )
        console.print(
            f"run {summary.run_id}: {summary.completed} unit(s) done, {summary.failed} failed "
            f"(as the file records), {summary.skipped_existing} already done"
        )
        _after_writing(paths, score=score)


def _print_corrections(corrections, written: int) -> None:
    table = Table(title="corrections")
    for column in ("event", "target", "effect", "reason"):
        table.add_column(column)
    for c in corrections:
        p = c.payload
        if p.event_type == "item_excluded":
            target = f"{p.benchmark} item {p.item_id}" + (
                f" (run {p.scope_run_id})" if p.scope_run_id else ""
            )
            effect = "excluded" if p.excluded else "reinstated"
        else:
            target, effect = (
                f"{p.superseded_event_type} {p.superseded_event_id}",
                f"-> {p.replacement}",
            )
        table.add_row(p.event_type, target, effect, p.reason)
    console.print(table)
    console.print(
        f"{written} new correction event(s) appended ({len(corrections) - written} already in the log)"
    )


def _register_corrections(
    app: typer.Typer, import_app: typer.Typer, paths_for: Callable[[Path | None], BenchPaths]
) -> None:
    @app.command("exclude")
    def exclude_cmd(
        item_ids: Annotated[
            list[str], typer.Argument(help="Item id(s) to take out of the scores.")
        ],
        benchmark: Annotated[str, typer.Option(help="draco | qa | extraction")],
        reason: Annotated[str, typer.Option(help="Why (stored with the correction).")],
        run: Annotated[
            str | None, typer.Option(help="Only this run (default: every run over the dataset).")
        ] = None,
        dataset_sha256: Annotated[
            str | None, typer.Option(help="The dataset, when the item is in several.")
        ] = None,
        reinstate: Annotated[
            bool, typer.Option(help="Put previously excluded items back instead.")
        ] = False,
        score: ScoreOption = True,
        home: HomeOption = None,
    ) -> None:
        """Exclude items from every score of a family (an item_excluded event; never an edit).

        Example: bench exclude ca0edd2d-c9b8-4b85-9b40-754f4865579a --benchmark draco
        --reason "rubric criterion 12 contradicts the source"
        """
        from collectors.imports.corrections import append_corrections, exclude_items, provenance
        from transform import pipeline

        paths = paths_for(home)
        log = pipeline.event_log(paths)
        corrections = exclude_items(
            log,
            item_ids,
            benchmark=benchmark,
            reason=reason,
            provenance=provenance("cli", sys.argv[1:]),
            scope_run_id=run,
            dataset_sha256=dataset_sha256,
            reinstate=reinstate,
        )
        _print_corrections(corrections, append_corrections(log, corrections))
        _after_writing(paths, score=score, announce=False)

    @app.command("supersede-verdict")
    def supersede_cmd(
        event_ids: Annotated[
            list[str],
            typer.Argument(help="judge_verdict / imported_verdict / answer_graded event ids."),
        ],
        verdict: Annotated[str, typer.Option(help="MET | UNMET (DRACO) or A | B | C (QA grade).")],
        reason: Annotated[str, typer.Option(help="Why (stored with the correction).")],
        score: ScoreOption = True,
        home: HomeOption = None,
    ) -> None:
        """Replace stored verdicts with corrected ones (verdict_superseded events)."""
        from collectors.imports.corrections import (
            append_corrections,
            provenance,
            supersede_verdicts,
        )
        from transform import pipeline

        paths = paths_for(home)
        log = pipeline.event_log(paths)
        corrections = supersede_verdicts(
            log,
            event_ids,
            replacement=verdict,
            reason=reason,
            provenance=provenance("cli", sys.argv[1:]),
        )
        _print_corrections(corrections, append_corrections(log, corrections))
        _after_writing(paths, score=score, announce=False)

    @import_app.command("corrections")
    def import_corrections_cmd(
        file: Annotated[
            Path, typer.Argument(help="CSV: kind,target,reason[,benchmark,replacement,run_id,...]")
        ],
        score: ScoreOption = True,
        home: HomeOption = None,
    ) -> None:
        """Import exclusions and verdict supersessions from a file (docs/imports.md)."""
        from collectors.imports.corrections import append_corrections, parse_corrections_file
        from transform import pipeline

        paths = paths_for(home)
        log = pipeline.event_log(paths)
        corrections = parse_corrections_file(log, file, sys.argv[1:])
        _print_corrections(corrections, append_corrections(log, corrections))
        _after_writing(paths, score=score, announce=False)
