"""`bench plan|run simpleqa`, `bench plan|run qa`, `bench preflight`: the question-answering family."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from bench import preflight_view
from bench.options import HomeOption, PlanJsonOption, ScoreOption, SeriesOption, ShardOption
from bench.settings import shared_data_dir
from collectors.runs.shard import parse_shard
from warehouse.paths import BenchPaths

console = Console(stderr=True)
out = Console()

SIMPLEQA_FILE = Path("simpleqa") / "simple_qa_test_set.csv"

# One word for a system under test across the CLI: --systems (the old --lanes still works).
LanesOption = Annotated[
    str,
    typer.Option(
        "--systems",
        "--lanes",
        help="Comma-separated systems under test, i.e. QA lanes (offline: local-bm25, "
        "closed-book; vendors need keys; the vendors' own answer products, run apart: "
        "exa_answer, tavily_answer, nimble_answer, parallel_answer). Alias: --lanes.",
    ),
]
LimitOption = Annotated[
    int | None, typer.Option(min=1, help="Sample N questions (simple-evals sampler).")
]
SeedOption = Annotated[int, typer.Option("--random-state", help="Sampler seed (simple-evals: 0).")]
CorpusOption = Annotated[
    str,
    typer.Option(help="Corpus for local-bm25: 'demo', a corpus directory or a documents .jsonl."),
]
SynthOption = Annotated[
    str,
    typer.Option(
        help="offline | anthropic:<model> | openai:<model> | openai-compatible:<model>@<url>"
    ),
]
GraderOption = Annotated[
    str,
    typer.Option(help="offline (labelled non-official) | openai:<model> (official template) | ..."),
]
JudgeOption = Annotated[
    str, typer.Option(help="UMBRELA relevance judge: offline | none | <llm spec>.")
]
RetryFailedOption = Annotated[bool, typer.Option(help="Retry units whose outcome was 'failed'.")]
SimpleqaFileOption = Annotated[Path | None, typer.Option(help="Local copy of the SimpleQA CSV.")]
QuestionsOption = Annotated[str, typer.Option(help="Question set CSV/JSONL, or 'demo'.")]


def _roles(paths: BenchPaths, synthesizer: str, grader: str, relevance_judge: str):
    from collectors.qa.role_specs import build_grader, build_relevance_judge, build_synthesizer

    judge = None if relevance_judge == "none" else build_relevance_judge(relevance_judge)
    return build_synthesizer(synthesizer), build_grader(grader, cache_dir=paths.cache_dir), judge


def _lanes(names: str, corpus: str, paths: BenchPaths, *, planning: bool = False):
    import os

    from collectors.local_corpus import from_extraction_corpus, load_local_corpus
    from collectors.qa.lane_registry import build_lanes

    lane_names = [n.strip() for n in names.split(",") if n.strip()]
    local = None
    if "local-bm25" in lane_names:
        if corpus == "demo":
            from collectors.demo.extraction_corpus import ensure_demo_corpus

            local = from_extraction_corpus(ensure_demo_corpus(paths.corpora_dir / "demo"))
        else:
            local = load_local_corpus(Path(corpus))
    environ = dict(os.environ)
    if planning:
        # A plan calls nothing, so it must not need keys: the user wants the cost first.
        from collectors.qa.answer_lanes import ANSWER_LANES
        from collectors.search import LANES

        for name in lane_names:
            spec = LANES.get(name) or ANSWER_LANES.get(name)
            if spec is not None:
                environ.setdefault(spec.key_env, "not-needed-for-a-plan")
    return build_lanes(
        lane_names, corpus=local, environ=environ, base_urls=_base_url_overrides(environ)
    )


def _base_url_overrides(environ) -> dict[str, str]:
    """BENCH_BASE_URL_<PROVIDER or LANE>=http://host:port: a proxy, a self-hosted gateway or the
    loopback fake server, without touching code. E.g. BENCH_BASE_URL_BRAVE=http://127.0.0.1:9000."""
    prefix = "BENCH_BASE_URL_"
    return {
        key[len(prefix) :].lower(): value
        for key, value in environ.items()
        if key.startswith(prefix) and value
    }


def _simpleqa(paths: BenchPaths, dataset_file: Path | None):
    from collectors.qa.simpleqa import load_simpleqa

    if dataset_file is None and (shared_data_dir() / SIMPLEQA_FILE).exists():
        dataset_file = shared_data_dir() / SIMPLEQA_FILE
    return load_simpleqa(dataset_file, cache_dir=paths.cache_dir)


def _questions(spec: str):
    from collectors.qa.question_sets import DEMO_QUESTION_SET, load_question_set

    return load_question_set(DEMO_QUESTION_SET if spec == "demo" else Path(spec))


def _plan(paths, dataset, lanes, limit, random_state, roles, series, as_json: bool) -> None:
    from collectors.qa.plan import plan_qa
    from transform import pipeline

    synthesizer, grader, judge = roles
    plan = plan_qa(
        dataset,
        lanes,
        limit=limit,
        random_state=random_state,
        synthesizer=synthesizer,
        grader=grader,
        relevance_judge=judge,
        series=series,
        log=pipeline.event_log(paths),
    )
    summary = plan.as_dict()
    if as_json:
        out.print_json(json.dumps(summary, default=str))
        return
    table = Table(title=f"plan: run {summary.get('run_id', plan.run_id)}")
    table.add_column("what")
    table.add_column("value")
    for key, value in summary.items():
        if isinstance(value, list | dict):
            value = f"{len(value)} entries (see --json)"
        table.add_row(str(key), str(value))
    out.print(table)


def _run(
    paths, dataset, lanes, limit, random_state, roles, series, retry_failed, score, shard
) -> None:
    from bench import run_report
    from collectors.qa.runner import run_qa
    from transform import pipeline

    synthesizer, grader, judge = roles
    with run_report.unit_progress(console, f"{dataset.dataset.name}") as on_progress:
        summary = run_qa(
            pipeline.event_log(paths),
            dataset,
            lanes,
            limit=limit,
            random_state=random_state,
            synthesizer=synthesizer,
            grader=grader,
            relevance_judge=judge,
            series=series,
            retry_failed=retry_failed,
            argv=sys.argv[1:],
            on_progress=on_progress,
            shard=parse_shard(shard),
        )
    console.print(run_table(summary))
    run_report.after_collecting(paths, console, [summary.run_id], score=score)
    if summary.aborted_lanes:
        for lane, reason in dict(summary.aborted_lanes).items():
            console.print(f"[red]lane {lane} aborted:[/red] {reason}")
        raise typer.Exit(1)


# The SimpleQA grader's letters (simple-evals' template): A correct, B incorrect, C not attempted.
GRADE_WORDS = {"A": "correct", "B": "incorrect", "C": "not attempted"}


def run_table(summary) -> Table:
    """Per lane: units by outcome and answers by grade, in words; accuracy is the marts' job."""
    table = Table(title=f"run {summary.run_id} ({summary.status})")
    for column in ("lane", "outcomes", *GRADE_WORDS.values(), "other grades"):
        table.add_column(column, justify="left" if column in ("lane", "outcomes") else "right")
    for lane in sorted(set(summary.outcomes) | set(summary.grades)):
        outcomes = summary.outcomes.get(lane, {})
        grades = dict(summary.grades.get(lane, {}))
        counts = [str(grades.pop(letter, 0)) for letter in GRADE_WORDS]
        other = ", ".join(f"{k} {v}" for k, v in sorted(grades.items())) or "–"
        table.add_row(
            lane, ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())) or "–", *counts, other
        )
    return table


DEMO_LANES = "local-bm25,closed-book"
# A repeat-run series of the same configuration (methodology 3): the offline lanes are
# deterministic, so the series shows what run-to-run noise 0 looks like.
DEMO_SERIES = "demo-repeat"
DEMO_SERIES_RUNS = 3


def _run_demo_config(paths: BenchPaths, series: str | None):
    dataset = _questions("demo")
    _run(
        paths,
        dataset,
        _lanes(DEMO_LANES, "demo", paths),
        None,
        0,
        _roles(paths, "offline", "offline", "offline"),
        series,
        False,
        False,
        None,
    )
    return dataset


def run_demo(paths: BenchPaths) -> str:
    """The demo's QA run: the demo question set over the demo corpus, offline lanes and roles
    (every verdict labelled non-official). Scoring is left to the caller's one refresh."""
    dataset = _run_demo_config(paths, None)
    return f"QA lanes local-bm25 + closed-book on {dataset.dataset.item_count} demo questions"


def run_demo_series(paths: BenchPaths) -> str:
    """The same configuration as a repeat-run series (DEMO_SERIES) until it has
    DEMO_SERIES_RUNS finished runs: a rerun of the demo adds none."""
    from collectors.qa.run_state import read_series
    from transform import pipeline

    done = sum(run.finished for run in read_series(pipeline.event_log(paths), DEMO_SERIES))
    for _ in range(max(0, DEMO_SERIES_RUNS - done)):
        _run_demo_config(paths, DEMO_SERIES)
    return f"{DEMO_SERIES_RUNS} repeat runs of it (series {DEMO_SERIES})"


def register(app: typer.Typer, run_app: typer.Typer, paths_for) -> typer.Typer:
    """Adds the QA commands; returns the `plan` group so other families can join it."""
    plan_app = typer.Typer(
        help="Show what a run would do (questions, calls, cost) without calling anything."
    )
    app.add_typer(plan_app, name="plan")

    @plan_app.command("simpleqa")
    def plan_simpleqa(
        lanes: LanesOption = "local-bm25,closed-book",
        limit: LimitOption = None,
        random_state: SeedOption = 0,
        dataset_file: SimpleqaFileOption = None,
        corpus: CorpusOption = "demo",
        synthesizer: SynthOption = "offline",
        grader: GraderOption = "offline",
        relevance_judge: JudgeOption = "offline",
        series: SeriesOption = None,
        as_json: PlanJsonOption = False,
        home: HomeOption = None,
    ) -> None:
        """Plan a SimpleQA run: sampled row positions, questions, calls per lane, estimated cost."""
        paths = paths_for(home)
        _plan(
            paths,
            _simpleqa(paths, dataset_file),
            _lanes(lanes, corpus, paths, planning=True),
            limit,
            random_state,
            _roles(paths, synthesizer, grader, relevance_judge),
            series,
            as_json,
        )

    @plan_app.command("qa")
    def plan_qa_cmd(
        questions: QuestionsOption = "demo",
        lanes: LanesOption = "local-bm25,closed-book",
        limit: LimitOption = None,
        random_state: SeedOption = 0,
        corpus: CorpusOption = "demo",
        synthesizer: SynthOption = "offline",
        grader: GraderOption = "offline",
        relevance_judge: JudgeOption = "offline",
        series: SeriesOption = None,
        as_json: PlanJsonOption = False,
        home: HomeOption = None,
    ) -> None:
        """Plan a run over your own question set."""
        paths = paths_for(home)
        _plan(
            paths,
            _questions(questions),
            _lanes(lanes, corpus, paths, planning=True),
            limit,
            random_state,
            _roles(paths, synthesizer, grader, relevance_judge),
            series,
            as_json,
        )

    @run_app.command("simpleqa")
    def run_simpleqa(
        lanes: LanesOption = "local-bm25,closed-book",
        limit: LimitOption = None,
        random_state: SeedOption = 0,
        dataset_file: SimpleqaFileOption = None,
        corpus: CorpusOption = "demo",
        synthesizer: SynthOption = "offline",
        grader: GraderOption = "offline",
        relevance_judge: JudgeOption = "offline",
        series: SeriesOption = None,
        retry_failed: RetryFailedOption = False,
        score: ScoreOption = True,
        shard: ShardOption = None,
        home: HomeOption = None,
    ) -> None:
        """Run SimpleQA lanes: search → chunks → one synthesizer → grader → URL metrics + relevance."""
        paths = paths_for(home)
        _run(
            paths,
            _simpleqa(paths, dataset_file),
            _lanes(lanes, corpus, paths),
            limit,
            random_state,
            _roles(paths, synthesizer, grader, relevance_judge),
            series,
            retry_failed,
            score,
            shard,
        )

    @run_app.command("qa")
    def run_qa_cmd(
        questions: QuestionsOption = "demo",
        lanes: LanesOption = "local-bm25,closed-book",
        limit: LimitOption = None,
        random_state: SeedOption = 0,
        corpus: CorpusOption = "demo",
        synthesizer: SynthOption = "offline",
        grader: GraderOption = "offline",
        relevance_judge: JudgeOption = "offline",
        series: SeriesOption = None,
        retry_failed: RetryFailedOption = False,
        score: ScoreOption = True,
        shard: ShardOption = None,
        home: HomeOption = None,
    ) -> None:
        """Run your own question set (question, gold_answer[, gold_urls, topic]) through the lanes."""
        paths = paths_for(home)
        _run(
            paths,
            _questions(questions),
            _lanes(lanes, corpus, paths),
            limit,
            random_state,
            _roles(paths, synthesizer, grader, relevance_judge),
            series,
            retry_failed,
            score,
            shard,
        )

    @app.command()
    def preflight(
        lanes: LanesOption = "local-bm25,closed-book",
        corpus: CorpusOption = "demo",
        synthesizer: SynthOption = "offline",
        grader: GraderOption = "offline",
        relevance_judge: JudgeOption = "offline",
        home: HomeOption = None,
    ) -> None:
        """One minimal call per lane and LLM role: which keys work, before any spend."""
        from collectors.qa.preflight import preflight_qa

        paths = paths_for(home)
        synth, grade, judge = _roles(paths, synthesizer, grader, relevance_judge)
        checks = preflight_qa(
            _lanes(lanes, corpus, paths), synthesizer=synth, grader=grade, relevance_judge=judge
        )
        table = Table(title="preflight")
        for column in ("component", "verdict", "detail"):
            table.add_column(column)
        for check in checks:
            table.add_row(
                check.component,
                preflight_view.verdict(
                    check.status if check.ok or check.status != "ok" else "error"
                ),
                preflight_view.detail(check.status, check.detail),
            )
        out.print(table)
        if not all(check.ok for check in checks):
            raise typer.Exit(1)

    return plan_app
