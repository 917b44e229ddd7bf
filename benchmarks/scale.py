"""The warehouse at real size: ingest, build, incremental build, rescore and a bare-query reference.

    python benchmarks/scale.py --verdicts 10000 [--verdicts 100000 ...] [--keep DIR] [--demo]

For each N it writes a DRACO-shaped log through the project's own event models and LogWriter
(real DRACO tasks and criteria, 9 systems x tasks x criteria x 3 samples per run, as many runs as
N needs), plus the demo's extraction run and QA run beside it (the real offline runners), then
times, each `bench` command in its own process under /usr/bin/time (peak RSS = max over the
process and its children, i.e. dbt):

  ingest, full build, +1,000 events (a rejudge) ingest and build, rescore with a DRACO penalty
  floor, rescore with extraction weights, and the reference: one bare DuckDB query computing the
  same per-item clamped DRACO score and per-system mean from typed verdict rows.

Targets (issue #8) at 1M: build <= 90 s, build after +1,000 events <= 15 s, rescore <= 10x the
bare query, peak RSS <= 4 GB.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
BENCH = Path(sys.executable).with_name("bench")
DRACO_JSONL = REPO.parent / "shared" / "data" / "draco" / "test.jsonl"
# Nine research systems of the registry (seeds/research_prices.csv), weakest first.
SYSTEMS = (
    "parallel_task_lite",
    "parallel_task_core",
    "exa_deep_reasoning",
    "nimble_agent_high",
    "tavily_research_pro",
    "youcom_research_exhaustive",
    "parallel_task_ultra8x",
    "nimble_agent_xhigh",
    "valyu_heavy",
)
SAMPLES = 3
JUDGE = "draco-judge@scale:claude-scale"
REJUDGE = "draco-judge@scale:gemini-scale"
APPENDED = 1000
WEIGHTS = "completeness=0.5,success=0.2,f1=0.2,latency=0.05,throughput=0.05"


# --- generation ------------------------------------------------------------------------------


def _verdict_payloads(run_index, lane, task, report_id, judge_id, samples, rng, skill):
    from warehouse.events import JudgeVerdict, LlmCallRecord

    for criterion in task.criteria:
        negative = criterion.weight < 0
        for sample in range(1, samples + 1):
            roll = rng.random()
            if roll < 0.03:
                outcome, verdict, met = "failed", None, negative
            elif roll < 0.06:
                outcome, verdict, met = "unparsed", None, negative
            else:
                met = rng.random() < (0.2 * (1.2 - skill) if negative else skill)
                outcome, verdict = "parsed", ("MET" if met else "UNMET")
            llm = None
            if outcome != "failed":
                llm = LlmCallRecord(
                    provider="anthropic",
                    model="claude-scale",
                    temperature=1.0,
                    prompt_id="draco-criterion",
                    prompt_sha256="b" * 64,
                    raw_completion=f"{verdict or 'I cannot decide'}: the report "
                    + ("covers" if met else "does not cover")
                    + " the requirement.",
                    input_tokens=1200 + rng.randrange(800),
                    output_tokens=30 + rng.randrange(40),
                    latency_ms=round(rng.uniform(400, 4000), 3),
                )
            yield JudgeVerdict(
                lane=lane,
                item_id=task.item_id,
                attempt=1,
                judge_id=judge_id,
                criterion_id=criterion.criterion_id,
                sample=sample,
                judge_attempt=1,
                polarity="negative" if negative else "positive",
                outcome=outcome,
                verdict=verdict,
                met=met,
                justification="because" if outcome == "parsed" else None,
                reasks=1 if outcome == "unparsed" else 0,
                error_class="timeout" if outcome == "failed" else None,
                error_message="judge timed out" if outcome == "failed" else None,
                source_event_id=report_id,
                llm=llm,
            )


def _regime(judge_id: str, model: str, samples: int, official: bool):
    from warehouse.events import JudgeRegimeRegistered, SystemRef

    return JudgeRegimeRegistered(
        judge_id=judge_id,
        judge=SystemRef(
            name=model, version="1", settings={"provider": "anthropic", "model": model}
        ),
        official=official,
        prompt_id="draco-criterion",
        prompt_sha256="b" * 64,
        samples=samples,
        normalizer_version="1",
    )


def generate_draco(home: Path, n_verdicts: int) -> dict:
    """DRACO runs through LogWriter until about `n_verdicts` judge_verdict events are written."""
    from collectors.draco.dataset import dataset_ref, load_draco, registration_payloads
    from warehouse.events import (
        ReportNormalized,
        ResearchCompleted,
        RunFinished,
        RunStarted,
        SystemRef,
        make_event,
    )
    from warehouse.log import EventLog
    from warehouse.provenance import producer_for

    task_set = load_draco(DRACO_JSONL)
    per_task = [len(t.criteria) * len(SYSTEMS) * SAMPLES for t in task_set.tasks]
    per_run = sum(per_task)
    runs = max(1, math.ceil(n_verdicts / per_run))
    producer = producer_for({"benchmark": "scale"})
    log = EventLog(home / "log")
    written = 0
    rng = random.Random(0)
    started = time.perf_counter()
    with log.writer() as writer:
        for run_index in range(runs):
            budget = n_verdicts - written
            tasks = []
            for task, cost in zip(task_set.tasks, per_task, strict=True):
                if budget <= 0:
                    break
                tasks.append(task)
                budget -= cost
            run_id = f"scale-draco-run-{run_index:02d}"
            batch = []

            def emit(payload, run_id=run_id, batch=batch):
                event = make_event(payload, run_id=run_id, producer=producer)
                batch.append(event)
                if len(batch) >= 5000:
                    writer.append(batch)
                    batch.clear()
                return event

            emit(
                RunStarted(
                    benchmark="draco",
                    spec={"name": f"scale-{run_index}", "lanes": list(SYSTEMS), "judge": JUDGE},
                    spec_sha256=hashlib.sha256(run_id.encode()).hexdigest(),
                    dataset=dataset_ref(task_set),
                    systems=[SystemRef(name=lane, version="1") for lane in SYSTEMS],
                    seed=run_index,
                )
            )
            for payload in registration_payloads(task_set, tuple(tasks)):
                emit(payload)
            emit(_regime(JUDGE, "claude-scale", SAMPLES, True))
            for index, task in enumerate(tasks):
                for skill_rank, lane in enumerate(SYSTEMS):
                    text = f"Report by {lane} on {task.item_id}: " + task.problem[:1500]
                    completed = emit(
                        ResearchCompleted(
                            lane=lane,
                            provider=lane.split("_")[0],
                            item_id=task.item_id,
                            attempt=1,
                            vendor_run_id=f"{run_id}-{lane}-{index}",
                            raw_output=text,
                            raw_citations=[{"url": f"https://example.test/{index}"}],
                            instruction_sha256="a" * 64,
                            submitted_at="2026-11-30T12:00:00.000000Z",
                            finished_at="2026-11-30T12:05:00.000000Z",
                            queue_ms=rng.uniform(0, 2000),
                            wall_clock_ms=round(rng.uniform(30_000, 900_000), 3),
                            poll_interval_s=5.0,
                            polls=rng.randrange(5, 100),
                            usage={"tokens": rng.randrange(1000, 9000)},
                        )
                    )
                    report = emit(
                        ReportNormalized(
                            lane=lane,
                            item_id=task.item_id,
                            attempt=1,
                            normalizer_version="1",
                            source_event_id=completed.event_id,
                            raw_output_sha256=hashlib.sha256(text.encode()).hexdigest(),
                            stripped_bibliography=False,
                            bibliography=[{"number": 1, "url": f"https://example.test/{index}"}],
                            judged_text=text,
                        )
                    )
                    skill = 0.35 + 0.05 * skill_rank
                    for verdict in _verdict_payloads(
                        run_index, lane, task, report.event_id, JUDGE, SAMPLES, rng, skill
                    ):
                        emit(verdict)
                        written += 1
            emit(
                RunFinished(
                    terminal_events=len(tasks) * len(SYSTEMS),
                    completed=len(tasks) * len(SYSTEMS),
                    failed=0,
                    duration_s=1.0,
                )
            )
            writer.append(batch)
    return {
        "runs": runs,
        "verdicts": written,
        "events": sum(1 for _ in log.read()),
        "generate_s": time.perf_counter() - started,
    }


def append_rejudge(home: Path, n_events: int = APPENDED) -> int:
    """`n_events` new verdicts on the first run: a second judge regime reaching a few reports."""
    import duckdb

    from collectors.draco.dataset import load_draco
    from warehouse.events import make_event
    from warehouse.log import EventLog
    from warehouse.provenance import producer_for

    task_set = load_draco(DRACO_JSONL)
    producer = producer_for({"benchmark": "scale"})
    run_id = "scale-draco-run-00"
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        reports = dict(
            con.execute(
                "select payload->>'lane' || '/' || (payload->>'item_id'), event_id from raw.events "
                "where event_type = 'report_normalized' and run_id = ?",
                [run_id],
            ).fetchall()
        )
    events = [
        make_event(_regime(REJUDGE, "gemini-scale", 1, False), run_id=run_id, producer=producer)
    ]
    rng = random.Random(1)
    by_id = {t.item_id: t for t in task_set.tasks}
    for key in sorted(reports):
        lane, item_id = key.split("/", 1)
        for verdict in _verdict_payloads(
            0, lane, by_id[item_id], reports[key], REJUDGE, 1, rng, 0.5
        ):
            if len(events) >= n_events:
                break
            events.append(make_event(verdict, run_id=run_id, producer=producer))
        if len(events) >= n_events:
            break
    with EventLog(home / "log").writer() as writer:
        writer.append(events)
    return len(events)


def generate_beside(home: Path) -> None:
    """The demo's extraction run (every local engine) and QA run, through the real runners."""
    from bench import qa_cli
    from bench.corpora import resolve_corpus
    from collectors.extraction.engines import ENGINES
    from collectors.extraction.runner import run_extraction
    from warehouse.log import EventLog
    from warehouse.paths import BenchPaths

    paths = BenchPaths.from_env(home).ensure()
    corpus = resolve_corpus("demo", paths)
    run_extraction(EventLog(paths.log_dir), corpus, sorted(ENGINES), argv=["scale"])
    qa_cli.run_demo(paths)


# --- measuring -------------------------------------------------------------------------------


def timed(home: Path, *args: str) -> tuple[float, float, float]:
    """(wall seconds, peak RSS MB of the process and its descendants, their CPU seconds) of one
    command. CPU seconds move less than wall time when other work shares the cores."""
    out = home / "time.out"
    env = {**os.environ, "BENCH_HOME": str(home)}
    proc = subprocess.run(
        ["/usr/bin/time", "-f", "%e %M %U %S", "-o", str(out), *args],
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    elapsed, rss_kb, user, system = out.read_text().split()[-4:]
    return float(elapsed), int(rss_kb) / 1024, float(user) + float(system)


def bare_query(home: Path, floor: float = -100.0) -> tuple[float, int]:
    """The reference: per-item clamped DRACO score and per-system mean from typed verdict rows.

    The typed rows (one per verdict, columns already cast, like the staging table) and the
    criteria weights are made first, untimed; the timed query resolves judge retries, averages
    samples, applies the floor, clamps raw / positive mass to [0, 1] and means per system."""
    import duckdb

    con = duckdb.connect()
    con.execute(f"attach '{home / 'warehouse.duckdb'}' as wh (read_only)")
    con.execute(
        """
        create table verdicts as
        select run_id, payload->>'lane' as lane, payload->>'item_id' as item_id,
               payload->>'judge_id' as judge_id, payload->>'criterion_id' as criterion_id,
               cast(payload->>'sample' as bigint) as sample,
               cast(payload->>'judge_attempt' as bigint) as judge_attempt,
               cast(payload->>'met' as boolean) as met
        from wh.raw.events where event_type = 'judge_verdict'
        """
    )
    con.execute(
        """
        create table criteria as
        select distinct run_id, payload->>'item_id' as item_id,
               payload->>'criterion_id' as criterion_id, cast(payload->>'weight' as double) as weight
        from wh.raw.events where event_type = 'rubric_criterion_registered'
        """
    )
    query = f"""
        with samples as (
            select run_id, lane, judge_id, item_id, criterion_id, sample,
                   arg_max(met, judge_attempt) as met
            from verdicts group by all
        ),
        per_criterion as (
            select run_id, lane, judge_id, item_id, criterion_id, avg(met::int) as v
            from samples group by all
        ),
        items as (
            select p.run_id, p.lane, p.judge_id, p.item_id,
                   sum(greatest(c.weight, {floor}) * p.v) as raw,
                   sum(c.weight) filter (where c.weight > 0) as positive
            from per_criterion p join criteria c using (run_id, item_id, criterion_id)
            group by all
        )
        select run_id, lane, judge_id,
               avg(case when positive is null or positive <= 0 then 0
                        else least(1, greatest(0, raw / positive)) end) as score
        from items group by all
    """
    best = math.inf
    rows = 0
    for _ in range(3):
        started = time.perf_counter()
        rows = len(con.execute(query).fetchall())
        best = min(best, time.perf_counter() - started)
    con.close()
    return best, rows


def app_pages(home: Path) -> dict[str, float]:
    """Seconds from switching to each page of the app to the end of its first render (its
    tables drawn), on the published snapshot, each page cold: a new AppTest session."""
    from streamlit.testing.v1 import AppTest

    os.environ["BENCH_HOME"] = str(home)
    entry = REPO / "app" / "streamlit_app.py"
    seconds = {}
    for page in sorted((REPO / "app" / "app_pages").glob("[a-z]*.py")):
        at = AppTest.from_file(str(entry), default_timeout=120).run()
        at.switch_page(f"app_pages/{page.name}")
        started = time.perf_counter()
        at.run()
        seconds[page.stem] = time.perf_counter() - started
        if at.exception:
            raise SystemExit(f"page {page.stem} failed: {[e.value for e in at.exception]}")
    return seconds


def measure(n_verdicts: int, root: Path) -> dict:
    home = root / f"scale-{n_verdicts}"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    py = sys.executable
    script = str(Path(__file__).resolve())
    figures: dict = {"verdicts_asked": n_verdicts}
    started = time.perf_counter()
    subprocess.run([py, script, "--internal-beside", str(home)], check=True)
    info = subprocess.run(
        [py, script, "--internal-generate", str(home), str(n_verdicts)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    figures.update(runs=int(info[0]), verdicts=int(info[1]), events=int(info[2]))
    figures["generate"] = (time.perf_counter() - started, 0.0, 0.0)
    figures["ingest"] = timed(home, str(BENCH), "ingest")
    figures["build"] = timed(home, str(BENCH), "build")
    subprocess.run([py, script, "--internal-append", str(home)], check=True)
    figures["ingest_append"] = timed(home, str(BENCH), "ingest")
    figures["build_append"] = timed(home, str(BENCH), "build")
    figures["rescore_floor"] = timed(home, str(BENCH), "rescore", "--draco-penalty-floor", "-100")
    figures["rescore_weights"] = timed(home, str(BENCH), "rescore", "--weights", WEIGHTS)
    figures["bare_query"] = bare_query(home)
    pages = subprocess.run(
        [py, script, "--internal-app", str(home)], check=True, capture_output=True, text=True
    ).stdout
    figures["app_pages"] = json.loads(pages.strip().splitlines()[-1])
    figures["log_mb"] = (
        sum(f.stat().st_size for f in (home / "log").rglob("*") if f.is_file()) / 2**20
    )
    figures["warehouse_mb"] = (home / "warehouse.duckdb").stat().st_size / 2**20
    return figures


def measure_demo(root: Path) -> dict:
    """`bench rescore` on the demo (target <= 5 s): a penalty floor, then extraction weights."""
    home = root / "demo"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    timed(home, str(BENCH), "demo", "--no-serve")
    return {
        "rescore_floor": timed(home, str(BENCH), "rescore", "--draco-penalty-floor", "-100"),
        "rescore_weights": timed(home, str(BENCH), "rescore", "--weights", WEIGHTS),
    }


STEPS = (
    ("ingest", "bench ingest"),
    ("build", "bench build (full)"),
    ("ingest_append", f"bench ingest (+{APPENDED:,} events)"),
    ("build_append", f"bench build (+{APPENDED:,} events)"),
    ("rescore_floor", "bench rescore --draco-penalty-floor -100"),
    ("rescore_weights", "bench rescore --weights ..."),
)


def report(results: list[dict]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=f"benchmarks/scale.py: wall (CPU), peak RSS; load average {os.getloadavg()[0]:.2f}"
    )
    table.add_column("step")
    for r in results:
        table.add_column(f"{r['verdicts']:,} verdicts", justify="right")
    table.add_row(
        "events in the log", *(f"{r['events']:,} ({r['log_mb']:,.0f} MB)" for r in results)
    )
    for key, label in STEPS:
        table.add_row(
            label,
            *(f"{r[key][0]:.1f} s ({r[key][2]:.0f} s CPU), {r[key][1]:,.0f} MB" for r in results),
        )
    table.add_row(
        "bare query (reference, best of 3)",
        *(f"{r['bare_query'][0]:.3f} s ({r['bare_query'][1]} systems)" for r in results),
    )
    table.add_row(
        "rescore / bare query",
        *(f"{r['rescore_floor'][0] / max(r['bare_query'][0], 1e-6):.0f}x" for r in results),
    )
    table.add_row("warehouse file", *(f"{r['warehouse_mb']:,.0f} MB" for r in results))
    table.add_row(
        "app: slowest page, first render (target <= 2 s)",
        *(
            "{1:.2f} s ({0})".format(*max(r["app_pages"].items(), key=lambda kv: kv[1]))
            for r in results
        ),
    )
    table.add_row(
        "app: median page",
        *(f"{sorted(r['app_pages'].values())[len(r['app_pages']) // 2]:.2f} s" for r in results),
    )
    Console().print(table)
    if len(results) > 1:
        first, last = results[0], results[-1]
        growth = last["verdicts"] / first["verdicts"]
        Console().print(
            f"growth {first['verdicts']:,} -> {last['verdicts']:,} verdicts (x{growth:.0f}): "
            + ", ".join(
                f"{label.split(' (')[0] if key != 'build_append' else 'build +1k'} "
                f"x{last[key][0] / first[key][0]:.1f}"
                for key, label in STEPS
                if key in ("ingest", "build", "build_append", "rescore_floor")
            )
        )


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1].startswith("--internal-"):
        home = Path(sys.argv[2])
        os.environ["BENCH_HOME"] = str(home)
        if sys.argv[1] == "--internal-generate":
            info = generate_draco(home, int(sys.argv[3]))
            print(info["runs"], info["verdicts"], info["events"])
        elif sys.argv[1] == "--internal-append":
            append_rejudge(home)
        elif sys.argv[1] == "--internal-beside":
            generate_beside(home)
        elif sys.argv[1] == "--internal-app":
            print(json.dumps(app_pages(home)))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verdicts", type=int, action="append", required=True)
    parser.add_argument("--keep", type=Path, help="Write the warehouses here and keep them.")
    parser.add_argument(
        "--demo", action="store_true", help="Also time `bench rescore` on the demo."
    )
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-scale-"))
    try:
        results = []
        for n in args.verdicts:
            results.append(measure(n, root))
            print(results[-1], flush=True)
        report(results)
        if args.demo:
            demo = measure_demo(root)
            print(
                "demo: "
                + ", ".join(
                    f"{label} {demo[key][0]:.1f} s ({demo[key][2]:.1f} s CPU)"
                    for key, label in (
                        ("rescore_floor", "bench rescore --draco-penalty-floor -100"),
                        ("rescore_weights", "bench rescore --weights ..."),
                    )
                )
                + "; target <= 5 s",
                flush=True,
            )
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
