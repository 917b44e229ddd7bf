"""`bench init [DIR]`: commented, runnable templates for the three inputs a user writes.

Each template is valid as written (a test loads them with the real loaders), so a user can run
it first and edit second. Formats: docs/input-formats.md.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

QUESTIONS_CSV = """\
# Your own questions for `bench run qa --questions questions.csv --lanes ...`.
# Lines starting with # are comments. One header row, then one question per row.
#   question      required: the question as asked to every lane
#   gold_answer   required: the reference answer the grader compares against
#   gold_urls     optional: URLs that hold the answer, separated by spaces (URL recall/precision)
#   topic         optional: a label for breakdowns in the app
# The file's sha256 names the dataset: editing it (comments too) makes a new dataset.
question,gold_answer,gold_urls,topic
Which Python library does this project use to load events into DuckDB?,dlt,https://dlthub.com/docs/intro,tools
What is the capital of Australia?,Canberra,https://en.wikipedia.org/wiki/Canberra,geography
"""

_RUBRIC_TASK = {
    "id": "my-task-1",
    "domain": "technology",
    "problem": "Compare two open-source HTML-to-text extractors for a news archive.",
    "answer": {
        "id": "my-task-1-rubric",
        "sections": [
            {
                "id": "factual-accuracy",
                "title": "Factual accuracy",
                "criteria": [
                    {
                        "id": "names-two-tools",
                        "weight": 10,
                        "requirement": "Names two specific open-source extractors.",
                    },
                    {
                        "id": "invents-benchmarks",
                        "weight": -20,
                        "requirement": "States benchmark numbers without a source.",
                    },
                ],
            },
            {
                "id": "citation-quality",
                "title": "Citation quality",
                "criteria": [
                    {
                        "id": "cites-docs",
                        "weight": 5,
                        "requirement": "Cites each tool's own documentation.",
                    }
                ],
            },
        ],
    },
}

RUBRIC_JSONL = (
    """\
# Your own rubric tasks for `bench run draco --tasks rubric_tasks.jsonl --systems ...`
# (DRACO's shape). Lines starting with # are comments; every other line is one JSON object:
#   id        required: a task id, unique in the file
#   domain    required: a label (the app's domain x system heatmap groups by it)
#   problem   required: the research question sent to every system
#   answer    required: the rubric, an object (or, as DRACO ships it, a JSON string) with
#             id and sections: [{id, title, criteria: [{id, weight, requirement}]}]
#   weight    a non-zero integer: positive = credit when MET, negative = penalty when MET
# The judge rules each criterion MET / UNMET; scores are in docs/warehouse-contract.md.
"""
    + json.dumps(_RUBRIC_TASK, ensure_ascii=False)
    + "\n"
)

# The live-URL loader (collectors/extraction/live/corpus.py) takes a plain CSV, no comment
# lines: the columns are explained where `bench init` prints and in docs/input-formats.md.
URLS_CSV = """\
url,vertical,render
https://en.wikipedia.org/wiki/Web_scraping,reference,auto
https://docs.python.org/3/library/html.parser.html,docs,fast
"""
URLS_HELP = (
    "urls.csv: url (absolute http(s)), vertical (a label the leaderboard groups by), "
    "render (auto | fast | full, empty = the run's --render)"
)

TEMPLATES = {
    "questions.csv": QUESTIONS_CSV,
    "rubric_tasks.jsonl": RUBRIC_JSONL,
    "urls.csv": URLS_CSV,
}


def write_templates(directory: Path, *, force: bool = False) -> list[Path]:
    """Writes every template; refuses (writing nothing) if any exists, unless `force`."""
    directory.mkdir(parents=True, exist_ok=True)
    targets = [directory / name for name in TEMPLATES]
    existing = [t for t in targets if t.exists()]
    if existing and not force:
        raise FileExistsError(
            f"{', '.join(map(str, existing))} already exist(s); nothing written "
            "(--force overwrites)"
        )
    for target in targets:
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_text(TEMPLATES[target.name], encoding="utf-8")
        tmp.replace(target)
    return targets


def next_commands(directory: Path) -> str:
    """The three runs on the templates just written, with paths that work from here."""

    def path(name: str) -> str:
        return shlex.quote(str(directory / name))

    return (
        f"next: bench run qa --questions {path('questions.csv')} "
        "--lanes local-bm25,closed-book | "
        f"bench run draco --tasks {path('rubric_tasks.jsonl')} --systems local-rag --judge "
        f"offline | bench run extraction --urls {path('urls.csv')}  "
        "(formats: docs/input-formats.md)"
    )


def register(app: typer.Typer) -> None:
    @app.command("init")
    def init_cmd(
        directory: Annotated[
            Path, typer.Argument(help="Where to write the templates (created if missing).")
        ] = Path("."),
        force: Annotated[bool, typer.Option(help="Overwrite existing template files.")] = False,
        lake: Annotated[
            bool,
            typer.Option(
                help="Instead: create the lake BENCH_WAREHOUSE names, once, before any machine "
                "loads into it (docs/team.md)."
            ),
        ] = False,
    ) -> None:
        """Write templates: a commented question CSV and rubric-task JSONL, and a URL list CSV."""
        console = Console()
        if lake:
            _init_lake(console)
            return
        for path in write_templates(directory, force=force):
            console.print(f"wrote {path}")
        console.print(URLS_HELP)
        console.print(next_commands(directory), soft_wrap=True, highlight=False)


def _init_lake(console: Console) -> None:
    from warehouse.lake import LakeError, create_lake, lake_target

    target = lake_target()
    if target is None:
        raise LakeError(
            "bench init --lake: BENCH_WAREHOUSE names no lake; set it first, e.g. "
            "BENCH_WAREHOUSE=ducklake:postgres:postgresql://bench@db.internal/bench and "
            "BENCH_LAKE_DATA=s3://bucket/bench (docs/team.md)"
        )
    ready = create_lake(target)
    said = "created" if ready.created else f"already there ({ready.tables} tables)"
    console.print(
        f"lake {target.public_name}, data {target.data_path}: {said}, "
        f"snapshot {ready.snapshot_id}; next: bench ingest on each machine",
        soft_wrap=True,
        highlight=False,
    )
