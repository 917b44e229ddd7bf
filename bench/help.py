"""What `bench … --help` adds to the docstrings: `--version`, and one runnable example per command.

The examples live here, keyed by command path, so command modules stay as they are and a test
can hold every registered command to having one (tests/cli/test_help.py).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Annotated

import typer

PACKAGE = "bench-warehouse"

MAIN_EPILOG = (
    "Start here: bench demo (offline; then open the app), bench init (templates for your own "
    "questions, rubric tasks and URLs), bench sql (query the published marts)."
)

EXAMPLES: dict[str, list[str]] = {
    "demo": ["bench demo --no-serve", "bench demo --port 8502"],
    "init": ["bench init my-benchmark", "bench init --lake"],
    "sql": [
        'bench sql "select * from marts.extraction_leaderboard"',
        'bench sql "select count(*) from marts.fct_draco_verdict_samples" --format csv',
        "bench sql",
    ],
    "run": ["bench run extraction --limit 5", "bench run draco --tasks demo --judge offline"],
    "run extraction": [
        "bench run extraction --limit 20",
        "bench run extraction --urls urls.csv",
        "bench run extraction --engines trafilatura,resiliparse --corpus demo",
        "bench run extraction --shard 1/3",
    ],
    "run simpleqa": [
        "bench run simpleqa --limit 20 --lanes local-bm25,closed-book",
        "bench run simpleqa --dataset-file simple_qa_test_set.csv --lanes local-bm25",
    ],
    "run qa": [
        "bench run qa --questions questions.csv --lanes local-bm25,closed-book",
        "bench run qa --questions verticals.csv --series v1 "
        "--lanes exa_answer,tavily_answer,nimble_answer,parallel_answer",
    ],
    "run draco": [
        "bench run draco --tasks demo --systems local-rag --judge offline",
        "bench run draco --tasks rubric_tasks.jsonl --systems local-rag --judge offline",
        "bench run draco --tasks draco --systems valyu_max --shard 1/2",
    ],
    "plan": ["bench plan simpleqa --limit 500 --json"],
    "plan simpleqa": ["bench plan simpleqa --limit 500 --random-state 0 --lanes brave_search"],
    "plan qa": ["bench plan qa --questions questions.csv --lanes local-bm25"],
    "plan extraction": ["bench plan extraction --urls urls.csv"],
    "plan draco": ["bench plan draco --list-systems", "bench plan draco --samples 3 --json"],
    "import": ["bench import extraction-predictions preds.json --system mine --version 1"],
    "import draco-results": [
        "bench import draco-results exa_deep_reasoning.eval.json --format valyu --system exa",
        "bench import draco-results results.csv --format csv --system mine --judge-label gpt-5",
    ],
    "import qa-results": [
        "bench import qa-results dataset_simpleqa_raw_results_exa.csv --format nimble --lane exa",
        "bench import qa-results grades.csv --format csv --lane mine --grader-label gpt-4.1",
        "bench import qa-results results.jsonl --format jsonl --lane mine --grader-label gpt-4o "
        "--map question=problem,answer=predicted,grade=grade,latency_s=latency,cost_usd=cost",
        "bench import qa-results logs/2026-12-05_simpleqa.eval --format inspect --lane gpt-4o-mini",
    ],
    "import corrections": ["bench import corrections corrections.csv"],
    "import regrade-qa": [
        "bench import regrade-qa RUN_ID --synthesizer offline --grader offline",
        "bench import regrade-qa RUN_ID --questions my-questions.csv --grader openai:gpt-4.1",
    ],
    "exclude": [
        'bench exclude ITEM_ID --benchmark draco --reason "rubric criterion is wrong"',
        'bench exclude ITEM_ID --benchmark qa --reason "gold answer fixed" --reinstate',
    ],
    "supersede-verdict": [
        'bench supersede-verdict EVENT_ID --verdict MET --reason "judge misread the report"',
    ],
    "import extraction-predictions": [
        "bench import extraction-predictions preds.json --system mine --version 1"
    ],
    "preflight": ["bench preflight --lanes brave_search,tavily_search_basic"],
    "rejudge": ["bench rejudge RUN_ID --judge offline --samples 1"],
    "ingest": ["bench ingest", "bench ingest --full"],
    "build": ["bench build"],
    "test": ["bench test"],
    "publish": ["bench publish"],
    "pull": [
        "bench pull",
        "BENCH_WAREHOUSE=ducklake:postgres:postgresql://bench@db.internal/bench "
        "BENCH_LAKE_DATA=s3://bucket/bench bench pull && bench app",
    ],
    "rebuild": ["bench rebuild"],
    "rescore": [
        "bench rescore --weights completeness=0.3,success=0.3,shingle_f1=0.4",
        "bench rescore --draco-penalty-floor -100",
        "bench rescore --umbrela-threshold 3 --lane-prices brave_search=4.5",
        "bench rescore --reset",
    ],
    "verify": ["bench verify", "bench verify --public-key ~/.bench-keys/signing.pub"],
    "log": ["bench log push"],
    "log push": [
        "BENCH_LOG_BUCKET=s3://team-bucket/bench-log bench log push",
        "bench log push --bucket /mnt/team/bench-log",
    ],
    "keygen": ["bench keygen ~/.bench-keys/signing"],
    "status": ["bench status"],
    "export": ["bench export --list", "bench export extraction_leaderboard --format json"],
    "report": ["bench report --out site", "bench report --out site --force --home ~/bench-data"],
    "app": ["bench app", "bench app --port 8502"],
    "scorecard": ["bench scorecard", "bench scorecard --home ~/bench-data"],
}


def package_version() -> str:
    try:
        return version(PACKAGE)
    except PackageNotFoundError:  # a checkout on sys.path without an install
        return "0+unknown"


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"bench {package_version()}")
        raise typer.Exit()


VersionOption = Annotated[
    bool,
    typer.Option(
        "--version",
        "-V",
        callback=_print_version,
        is_eager=True,
        help="Print the version and exit.",
    ),
]


def walk(command, path: str = ""):
    """(path, command) for every command and group under `command`, root excluded.

    Duck-typed on `.commands`: typer ships its own copy of click, so click.Group is not it."""
    for name, sub in getattr(command, "commands", {}).items():
        sub_path = f"{path} {name}".strip()
        yield sub_path, sub
        yield from walk(sub, sub_path)


def add_examples(root):
    """Each command's examples as its epilog (the end of --help), and option type labels that
    say something: a flag shows none (not `<bool>`), a text option its own name."""
    for path, command in [("", root), *walk(root)]:
        lines = EXAMPLES.get(path)
        if lines:
            # typer's help joins an epilog's paragraphs: one paragraph per line keeps them apart.
            command.epilog = "\n\n".join(["Examples:", *(f"  $ {line}" for line in lines)])
        _label_help_option(command)
        for param in getattr(command, "params", []):
            if getattr(param, "metavar", "set") is not None:
                continue
            if getattr(param, "is_flag", False):
                param.metavar = ""
            elif param.param_type_name == "option" and _bare_type(param) == "str":
                param.metavar = (param.name or "value").upper()
    return root


def _label_help_option(command) -> None:
    """click adds --help when help is rendered, not as a param: label it as the flag it is."""
    make_help_option = command.get_help_option

    def get_help_option(ctx):
        option = make_help_option(ctx)
        if option is not None:
            option.metavar = ""
        return option

    command.get_help_option = get_help_option


def _bare_type(param) -> str | None:
    try:
        return param.bare_type()
    except (AttributeError, AssertionError):
        return None
