"""`bench plan|run draco`, `bench run rubric` and `bench rejudge`: rubric-judged deep research."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from bench import preflight_view
from bench.options import HomeOption, PlanJsonOption, ScoreOption, ShardOption
from bench.qa_cli import _base_url_overrides
from bench.settings import shared_data_dir
from collectors.draco.judge_defaults import DEFAULT_JUDGE_SPEC
from collectors.runs.shard import Shard, parse_shard
from warehouse.paths import BenchPaths

console = Console(stderr=True)
out = Console()

DRACO_FILE = Path("draco") / "test.jsonl"

SystemsOption = Annotated[
    str,
    typer.Option(
        "--systems",
        help="Comma-separated research systems (offline: local-rag; vendors need keys). "
        "`bench plan draco --list-systems` names them all.",
    ),
]
TasksOption = Annotated[
    str,
    typer.Option(
        help="'draco' (the pinned DRACO test split), 'demo' (the project's own offline tasks) "
        "or a rubric-task JSONL in DRACO's format."
    ),
]
DatasetFileOption = Annotated[
    Path | None, typer.Option(help="Local copy of DRACO's test.jsonl (verified by sha256).")
]
LimitOption = Annotated[
    int | None, typer.Option(min=1, help="Only the first N tasks (file order).")
]
ItemsOption = Annotated[
    str | None, typer.Option(help="Comma-separated upstream task ids (UUIDs) to run.")
]
JudgeOption = Annotated[
    str,
    typer.Option(
        help="offline (labelled, not an LLM) | anthropic:<model> | openai:<model> | "
        "openai-compatible:<model>@<base url>"
    ),
]
SamplesOption = Annotated[int, typer.Option(min=1, help="Independent judge samples per criterion.")]
CorpusOption = Annotated[
    str, typer.Option(help="Corpus for local-rag: 'demo', a corpus directory or a .jsonl.")
]


def _task_set(paths: BenchPaths, tasks: str, dataset_file: Path | None):
    from collectors.demo.draco_tasks import demo_task_set
    from collectors.draco.dataset import load_draco, load_rubric_tasks

    if tasks == "demo":
        return "rubric", demo_task_set()
    if tasks == "draco":
        if dataset_file is None and (shared_data_dir() / DRACO_FILE).exists():
            dataset_file = shared_data_dir() / DRACO_FILE
        return "draco", load_draco(dataset_file, cache_dir=paths.cache_dir)
    return "rubric", load_rubric_tasks(Path(tasks))


def _item_ids(items: str | None) -> list[str] | None:
    return [i.strip() for i in items.split(",") if i.strip()] if items else None


def _run_plan(
    paths: BenchPaths,
    tasks: str,
    systems: str,
    limit: int | None,
    items: str | None,
    dataset_file: Path | None,
    corpus: str,
    *,
    planning: bool = False,
):
    """(task set, the run's plan): one plan for `bench plan draco` and `bench run draco`, so
    the plan shows the id of the run the same options start or resume."""
    from collectors.draco.dataset import dataset_ref
    from collectors.draco.plan import select_tasks
    from collectors.draco.prompts import RESEARCH_INSTRUCTION_ID, load_prompt
    from collectors.draco.runner import plan_draco_run

    benchmark, task_set = _task_set(paths, tasks, dataset_file)
    run = plan_draco_run(
        benchmark=benchmark,
        dataset=dataset_ref(task_set),
        tasks=select_tasks(task_set, limit=limit, item_ids=_item_ids(items)),
        lanes=_lanes(_system_names(systems), corpus, paths, planning=planning),
        instruction=load_prompt(RESEARCH_INSTRUCTION_ID),
    )
    return task_set, run


def _system_names(spec: str) -> list[str]:
    from collectors.draco.systems import LANES

    names = [n.strip() for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in LANES]
    if unknown:
        raise ValueError(
            f"--systems: unknown {', '.join(unknown)}; available: {', '.join(sorted(LANES))}"
        )
    if not names:
        raise ValueError("--systems: name at least one research system")
    return names


def _lanes(names: list[str], corpus: str, paths: BenchPaths, *, planning: bool = False):
    from collectors.draco.systems import make_lane

    environ = dict(os.environ)
    if planning:
        # A plan calls nothing, so it must not need keys: the user wants the cost first.
        from collectors.draco.systems import LANES

        for name in names:
            key_env = getattr(LANES[name], "key_env", None)
            if key_env:
                environ.setdefault(key_env, "not-needed-for-a-plan")
    from collectors.draco.systems.local_rag import VARIANTS

    local = _corpus(corpus, paths) if any(name in VARIANTS for name in names) else None
    return [
        make_lane(
            name,
            base_urls=_base_url_overrides(environ),
            environ=environ,
            corpus=local if name in VARIANTS else None,
        )
        for name in names
    ]


def _corpus(corpus: str, paths: BenchPaths):
    from collectors.local_corpus import from_extraction_corpus, load_local_corpus

    if corpus == "demo":
        from collectors.demo.extraction_corpus import ensure_demo_corpus

        return from_extraction_corpus(ensure_demo_corpus(paths.corpora_dir / "demo"))
    return load_local_corpus(Path(corpus))


def _print_summary(summary) -> None:
    table = Table(title=f"run {summary.run_id}")
    table.add_column("what")
    table.add_column("value", overflow="fold")
    for what, value in (
        ("status", summary.status),
        ("judge regime", summary.judge_id),
        ("units (task x system)", summary.planned),
        ("already done", summary.skipped_existing),
        ("research completed / failed", f"{summary.researched} / {summary.research_failed}"),
        ("reports normalised", summary.normalized),
        ("verdict samples (flagged)", f"{summary.verdicts} ({summary.flagged})"),
        ("seconds", f"{summary.duration_s:.1f}"),
    ):
        table.add_row(what, str(value))
    console.print(table)
    for lane, reason in summary.aborted_lanes.items():
        console.print(f"[red]system {lane} aborted:[/red] {reason}")


def _preflight(lanes, judge) -> None:
    """Before any research is paid for: every system's key and endpoint, and one judge call (a
    refused judge key would otherwise surface only after every system has run)."""
    from collectors.draco.judge import preflight_judge
    from collectors.draco.runner import preflight_lanes

    with console.status("preflight: one cheap call per system"):
        results = preflight_lanes(lanes)
    if judge.official:
        with console.status(f"preflight: one call to the judge {judge.judge_id}"):
            preflight_judge(judge)
        results.append(("judge", "ok", judge.judge_id))
    table = Table(title="preflight")
    for column in ("component", "verdict", "detail"):
        table.add_column(column, overflow="fold")
    for component, status, text in results:
        table.add_row(
            component, preflight_view.verdict(status), preflight_view.detail(status, text)
        )
    console.print(table)


def run_rubric(
    paths: BenchPaths,
    *,
    tasks: str,
    systems: str,
    judge,  # a --judge spec, or a built judge (the demo's seeded offline judge)
    samples: int,
    limit: int | None = None,
    items: str | None = None,
    dataset_file: Path | None = None,
    corpus: str = "demo",
    max_attempts: int = 3,
    judge_concurrency: int = 4,
    preflight: bool = True,
    shard: Shard | None = None,
):
    from bench import run_report
    from collectors.draco.judge import build_judge
    from collectors.draco.normalize import NORMALIZER
    from collectors.draco.runner import run_draco
    from transform import pipeline

    task_set, plan = _run_plan(paths, tasks, systems, limit, items, dataset_file, corpus)
    plan = plan.for_shard(shard)
    the_judge = build_judge(judge, samples=samples) if isinstance(judge, str) else judge
    if preflight:
        _preflight(plan.lanes, the_judge)
    with run_report.unit_progress(console, f"{task_set.name}: research + judging") as on_progress:
        summary = run_draco(
            pipeline.event_log(paths),
            plan,
            the_judge,
            NORMALIZER,
            max_research_attempts=max_attempts,
            judge_concurrency=judge_concurrency,
            argv=sys.argv[1:],
            on_progress=on_progress,
        )
    _print_summary(summary)
    return summary


# The demo compares systems that differ in one known way: local-rag at three depths and the
# closed-book control (collectors/draco/systems/local_rag.py), judged by the offline judge with
# three seeded samples, so borderline criteria can disagree between samples.
DEMO_SYSTEMS = ("closed-book-research", "local-rag-shallow", "local-rag", "local-rag-deep")
DEMO_JUDGE_SAMPLES = 3
DEMO_JUDGE_SEED = 7


def run_demo(paths: BenchPaths) -> str:
    """The demo's rubric-judged run: the project's own tasks, the offline systems (demo-priced),
    the offline judge with seeded samples (labelled non-official)."""
    from collectors.draco.offline_judge import OfflineJudge
    from transform import pipeline

    summary = run_rubric(
        paths,
        tasks="demo",
        systems=",".join(DEMO_SYSTEMS),
        judge=OfflineJudge(DEMO_JUDGE_SAMPLES, seed=DEMO_JUDGE_SEED),
        samples=DEMO_JUDGE_SAMPLES,
    )
    # A second regime on the same reports (the plain rule, one sample), as `bench rejudge RUN
    # --judge offline --samples 1` adds one: judges can then be compared on the same criteria.
    from collectors.draco.normalize import NORMALIZER
    from collectors.draco.runner import rejudge

    rejudge(
        pipeline.event_log(paths), summary.run_id, OfflineJudge(1), NORMALIZER, argv=sys.argv[1:]
    )
    tasks = summary.planned // len(DEMO_SYSTEMS)
    return (
        f"rubric-judged research: {', '.join(DEMO_SYSTEMS)} on {tasks} demo tasks (offline "
        f"judge, {DEMO_JUDGE_SAMPLES} seeded samples, re-judged with 1 plain sample; demo prices)"
    )


def import_demo_results(paths: BenchPaths) -> str:
    """The demo's import: the plain offline rule's verdicts on local-rag's demo reports (the
    demo run's second regime), written as a valyu grading file (docs/examples/
    demo_local-rag.eval.json is this file) and imported through the real `bench import
    draco-results --format valyu` code: the import page then checks the file's own figures and
    sets the imported regime beside ours. Importing it again is a no-op (its sha256 names the
    run)."""
    from collectors.demo import draco_tasks as demo_tasks
    from collectors.draco.offline_judge import OfflineJudge
    from collectors.imports.draco_results import import_draco_results
    from transform import pipeline

    log = pipeline.event_log(paths)
    regime = OfflineJudge(1).judge_id + "|"
    verdicts: dict[tuple[str, str], bool] = {}
    for _raw, event in log.read():
        payload = event["payload"]
        if (
            event["event_type"] == "judge_verdict"
            and payload["lane"] == demo_tasks.DEMO_IMPORT_SYSTEM
            and payload["judge_id"].startswith(regime)
            and payload["item_id"] in demo_tasks.DEMO_TOPICS
        ):
            verdicts[(payload["item_id"], payload["criterion_id"])] = payload["met"]
    path = paths.cache_dir / "demo" / demo_tasks.DEMO_IMPORT_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(demo_tasks.demo_import_eval_json(verdicts))
    (summary,) = import_draco_results(
        log,
        path,
        fmt="valyu",
        system=demo_tasks.DEMO_IMPORT_SYSTEM,
        task_set=demo_tasks.demo_task_set(),
        judge_label=None,
        argv=sys.argv[1:],
    )
    return (
        f"imported {path.name} ({summary.completed} tasks graded by "
        f"{demo_tasks.DEMO_IMPORT_JUDGE_MODEL!r})"
    )


def register(app: typer.Typer, run_app: typer.Typer, plan_app: typer.Typer, paths_for) -> None:
    @plan_app.command("draco")
    def plan_draco_cmd(
        systems: SystemsOption = "local-rag",
        tasks: TasksOption = "draco",
        dataset_file: DatasetFileOption = None,
        limit: LimitOption = None,
        items: ItemsOption = None,
        judge: JudgeOption = DEFAULT_JUDGE_SPEC,
        samples: SamplesOption = 3,
        corpus: CorpusOption = "demo",
        list_systems: Annotated[
            bool, typer.Option("--list-systems", help="List the research systems and exit.")
        ] = False,
        as_json: PlanJsonOption = False,
        home: HomeOption = None,
    ) -> None:
        """The run id, tasks, criteria, judge calls (criteria × samples × systems) and cost of
        `bench run draco` with the same options, calling nothing (no key needed)."""
        from collectors.draco.plan import plan_draco
        from collectors.draco.systems import LANES, price_for

        if list_systems:
            table = Table(title="research systems")
            for column in ("system", "provider", "usd/task", "basis"):
                table.add_column(column)
            for name in sorted(LANES):
                price, basis, _snapshot = price_for(name)
                table.add_row(
                    name, LANES[name].provider, "?" if price is None else f"{price:g}", basis or ""
                )
            out.print(table)
            return
        paths = paths_for(home)
        task_set, run = _run_plan(
            paths, tasks, systems, limit, items, dataset_file, corpus, planning=True
        )
        plan = plan_draco(
            task_set,
            lanes=_system_names(systems),
            samples=samples,
            limit=limit,
            item_ids=_item_ids(items),
            judge_model=judge,
            price_lookup=price_for,
            run_id=run.run_id,
        )
        summary = plan.to_json()
        if as_json:
            out.print_json(json.dumps(summary, default=str))
            return
        table = Table(title=f"plan: {summary['dataset']['name']}, run {run.run_id}")
        for column in ("system", "tasks", "judge calls", "est. cost USD", "basis"):
            table.add_column(column)
        for system in summary["systems"]:
            cost = system.get("est_cost_usd")
            table.add_row(
                system["lane"],
                str(system["tasks"]),
                str(system["judge_calls"]),
                "unknown" if cost is None else f"{cost:.2f}",
                str(system.get("cost_basis") or ""),
            )
        out.print(table)

    @run_app.command("draco")
    def run_draco_cmd(
        systems: SystemsOption = "local-rag",
        tasks: TasksOption = "draco",
        dataset_file: DatasetFileOption = None,
        limit: LimitOption = None,
        items: ItemsOption = None,
        judge: JudgeOption = DEFAULT_JUDGE_SPEC,
        samples: SamplesOption = 3,
        corpus: CorpusOption = "demo",
        max_attempts: Annotated[
            int, typer.Option(min=1, help="Research attempts per task and system, in total.")
        ] = 3,
        judge_concurrency: Annotated[int, typer.Option(min=1, help="Judge calls in flight.")] = 4,
        preflight: Annotated[
            bool, typer.Option(help="One judge call before any research (catches a bad key).")
        ] = True,
        score: ScoreOption = True,
        shard: ShardOption = None,
        home: HomeOption = None,
    ) -> None:
        """Run research systems on rubric tasks and judge every criterion (resumable)."""
        from bench import run_report

        paths = paths_for(home)
        summary = run_rubric(
            paths,
            tasks=tasks,
            systems=systems,
            judge=judge,
            samples=samples,
            limit=limit,
            items=items,
            dataset_file=dataset_file,
            corpus=corpus,
            max_attempts=max_attempts,
            judge_concurrency=judge_concurrency,
            preflight=preflight,
            shard=parse_shard(shard),
        )
        run_report.after_collecting(paths, console, [summary.run_id], score=score)
        if summary.aborted_lanes:
            raise typer.Exit(1)

    @app.command("rejudge")
    def rejudge_cmd(
        run_id: Annotated[str, typer.Argument(help="The run whose stored reports to judge.")],
        judge: JudgeOption = DEFAULT_JUDGE_SPEC,
        samples: SamplesOption = 3,
        judge_concurrency: Annotated[int, typer.Option(min=1, help="Judge calls in flight.")] = 4,
        score: ScoreOption = True,
        home: HomeOption = None,
    ) -> None:
        """Judge a run's stored reports again (another judge, prompt or sample count).

        Appends verdicts under a new judge regime; calls no research system. Both regimes stay
        queryable side by side and never share a leaderboard row."""
        from bench import run_report
        from collectors.draco.judge import build_judge
        from collectors.draco.normalize import NORMALIZER
        from collectors.draco.runner import rejudge
        from transform import pipeline

        paths = paths_for(home)
        with run_report.unit_progress(console, f"rejudging {run_id}") as on_progress:
            summary = rejudge(
                pipeline.event_log(paths),
                run_id,
                build_judge(judge, samples=samples),
                NORMALIZER,
                judge_concurrency=judge_concurrency,
                argv=sys.argv[1:],
                on_progress=on_progress,
            )
        _print_summary(summary)
        run_report.after_collecting(paths, console, [summary.run_id], score=score)
