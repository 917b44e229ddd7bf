"""The invariants of issue #25, checked against a data root between two commands.

Each check returns a list of problems (empty = holds). The checks read the log with
`EventLog` and the DuckDB files read-only; none of them writes to the data root. The one that
needs a build (`marts_equal_rebuild`) runs `bench rebuild` in a separate data root holding a
copy of the log, so the sequence under test is never disturbed.
"""

from __future__ import annotations

import json
import random
import shutil
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import duckdb
import yaml

from collectors.runs.shard import Shard
from tests.cli.test_report import csvs_against_marts
from tests.sequences.runner import Outcome, kill_bench, run_bench
from warehouse.log import EventLog
from warehouse.publish import parts_dir, snapshot_parts, table_checksums

COMMAND_EXITS_0 = "a valid command exits 0"
RAW_ONCE = "every log event is in raw.events exactly once"
STAGING_UNIQUE = "every staging model is unique on its event id"
ONE_TERMINAL = "every unit has exactly one terminal event"
SNAPSHOT_IS_LAST_BUILD = "the snapshot is the last successful build"
MARTS_EQUAL_REBUILD = "the incremental marts equal a fresh rebuild's"
VERIFY_PASSES = "bench verify passes"
EXPORT_IS_SNAPSHOT = "an export holds exactly the snapshot's rows"
REPORT_IS_SNAPSHOT = "a report's figures and log head are the snapshot's"
SQL_IS_SNAPSHOT = "bench sql counts the snapshot's rows"
STATUS_IS_DATA_ROOT = "bench status reports the warehouse's events and the data root's bytes"
PLAN_NAMES_THE_RUN = "bench plan draco names the run bench run draco wrote"
STORED_COMPRESSED = "an ingest that ran to the end leaves every sealed segment compressed"
ID_INDEX_IS_SEGMENT = "a compressed segment's id index holds exactly the ids of its lines"
BUCKET_HOLDS_SEALED = (
    "after a push the bucket holds every sealed segment byte for byte and a prefix of the "
    "MANIFEST, and a builder loads from it exactly the sealed segments' events"
)
PUSHED_BY_ITSELF = (
    "a command that wrote to the log with BENCH_LOG_BUCKET set leaves every sealed segment in "
    "the bucket byte for byte, and a prefix of the MANIFEST"
)
KEPT_COPY_BY_RULE = (
    "of one fact stated on two machines (the same whole run executed on both), raw.events "
    "holds the copy with the smallest content_sha256, whatever the order the logs came in"
)

Checksums = dict[str, tuple[int, str]]


@dataclass
class LogView:
    """What the checks need from the log: every line's envelope, in log order."""

    events: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def read(cls, log_dir: Path) -> LogView:
        return cls([event for _raw, event in EventLog(log_dir).read()])

    def ids(self) -> Counter[str]:
        return Counter(e["event_id"] for e in self.events)

    def of_type(self, *event_types: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["event_type"] in event_types]


# --- raw.events ------------------------------------------------------------------------------


def raw_event_ids(warehouse_db: Path) -> Counter[str] | None:
    """event_id -> rows in raw.events; None when there is no warehouse or no raw.events yet."""
    if not warehouse_db.exists():
        return None
    with duckdb.connect(str(warehouse_db), read_only=True) as con:
        if not _has_table(con, "raw", "events"):
            return None
        return Counter(
            dict(con.execute("select event_id, count(*) from raw.events group by 1").fetchall())
        )


def raw_content(warehouse_db: Path) -> tuple[int, int] | None:
    """(rows, a digest of their content hashes) of raw.events; None without it."""
    with duckdb.connect(str(warehouse_db), read_only=True) as con:
        if not _has_table(con, "raw", "events"):
            return None
        rows, digest = con.execute(
            "select count(*), coalesce(sum(hash(event_id, content_sha256)), 0) from raw.events"
        ).fetchone()
    return int(rows), int(digest)


def raw_events_once(log: LogView, raw: Counter[str] | None, *, all_loaded: bool) -> list[str]:
    """No id twice in the log or in raw.events, nothing in raw.events the log lacks, and, once
    an ingest has finished (`all_loaded`), every log event loaded."""
    problems = []
    in_log = log.ids()
    repeated_in_log = [i for i, n in in_log.items() if n > 1]
    if repeated_in_log:
        problems.append(
            f"{len(repeated_in_log)} event id(s) on more than one log line, e.g. {repeated_in_log[0]}"
        )
    raw = raw or Counter()
    twice = {i: n for i, n in raw.items() if n > 1}
    if twice:
        example = next(iter(twice))
        problems.append(
            f"{len(twice)} event id(s) in raw.events more than once "
            f"({sum(twice.values()) - len(twice)} extra rows), e.g. {example} x{twice[example]}"
        )
    foreign = set(raw) - set(in_log)
    if foreign:
        problems.append(f"{len(foreign)} event id(s) in raw.events are not in the log")
    if all_loaded:
        missing = set(in_log) - set(raw)
        if missing:
            kinds = Counter(e["event_type"] for e in log.events if e["event_id"] in missing)
            problems.append(
                f"{len(missing)} of {len(in_log)} log events not in raw.events after a finished "
                f"ingest ({', '.join(f'{k} {n}' for k, n in kinds.most_common(4))})"
            )
    return problems


# --- staging ---------------------------------------------------------------------------------


STAGING_YML = Path(__file__).resolve().parents[2] / "dbt_project" / "models" / "staging"


@cache
def staging_event_keys() -> dict[str, tuple[str, ...]]:
    """model -> its event key as the dbt project declares it (`staging/<model>.yml`): the column
    ending in `event_id` with a `unique` test (`verdict_event_id` of judge_verdict), else a
    `unique_combination` holding one (`chunks_event_id, chunk_rank`: a row per chunk)."""
    keys: dict[str, tuple[str, ...]] = {}
    for yml in sorted(STAGING_YML.glob("*.yml")):
        for model in (yaml.safe_load(yml.read_text()) or {}).get("models") or []:
            unique_columns = [
                c["name"]
                for c in model.get("columns") or []
                if c["name"].endswith("event_id")
                and any(_test_name(t) == "unique" for t in c.get("data_tests") or [])
            ]
            combinations = [
                tuple(t["unique_combination"]["arguments"]["combination_of_columns"])
                for t in model.get("data_tests") or []
                if _test_name(t) == "unique_combination"
            ]
            with_event_id = [k for k in combinations if any(c.endswith("event_id") for c in k)]
            if unique_columns:
                keys[model["name"]] = (unique_columns[0],)
            elif with_event_id:
                keys[model["name"]] = with_event_id[0]
    return keys


def _test_name(test: Any) -> str:
    return test if isinstance(test, str) else next(iter(test))


def staging_duplicates(warehouse_db: Path) -> list[str]:
    """Every model of the staging schema, on its event key (`staging_event_keys`); a model the
    YAML gives none: on its first column (in column order) whose name ends in `event_id`
    (references to other events, `source_event_id`, come after it)."""
    if not warehouse_db.exists():
        return []
    declared = staging_event_keys()
    problems = []
    with duckdb.connect(str(warehouse_db), read_only=True) as con:
        models = con.execute(
            "select table_name, list(column_name order by ordinal_position) "
            "from information_schema.columns where table_schema = 'staging' "
            "and table_catalog = current_database() group by 1 order by 1"
        ).fetchall()
        for model, columns in models:
            key = declared.get(model)
            if key is None:
                first = next((c for c in columns if c.endswith("event_id")), None)
                if first is None:
                    problems.append(
                        f"staging.{model}: no event key declared, no column ending in event_id"
                    )
                    continue
                key = (first,)
            row_key = ", ".join(f'"{c}"' for c in key)
            rows, distinct = con.execute(
                f'select count(*), count(distinct ({row_key})) from staging."{model}"'
            ).fetchone()
            if rows != distinct:
                problems.append(
                    f"staging.{model}: {rows} rows for {distinct} distinct ({', '.join(key)}) "
                    f"({rows - distinct} re-appended)"
                )
    return problems


# --- terminal events -------------------------------------------------------------------------

# benchmark -> (the registration of its items, the event types that end a unit's attempt)
FAMILIES = {
    "extraction": ("item_registered", ("extraction_completed", "extraction_failed")),
    "qa": ("question_registered", ("answer_synthesized",)),
    "rubric": ("rubric_task_registered", ("research_completed", "research_failed")),
    "draco": ("rubric_task_registered", ("research_completed", "research_failed")),
}
UNIT_SYSTEM = ("system", "lane")  # the payload field naming the system under test


def terminal_units(log: LogView) -> list[str]:
    """A unit is (run, item, system) and is attempted one or more times: no attempt ends
    twice (two terminal lines, of one type or of two), and a run the log says finished has a
    terminal event for every (item of its spec, system of its spec). Imported grading runs
    hold verdicts, not per-unit outcomes, and have no such unit."""
    ends: Counter[tuple[str, str, str, int]] = Counter()
    examples: dict[tuple[str, str, str, int], list[str]] = defaultdict(list)
    terminal_types = {t for _reg, types in FAMILIES.values() for t in types}
    for event in log.events:
        if event["event_type"] not in terminal_types:
            continue
        payload = event["payload"]
        system = next(payload[f] for f in UNIT_SYSTEM if f in payload)
        key = (event["run_id"], payload["item_id"], system, payload.get("attempt", 1))
        ends[key] += 1
        examples[key].append(event["event_type"])
    problems = [
        f"run {run[:8]} item {item[:12]} {system} attempt {attempt}: "
        f"{n} terminal events ({', '.join(examples[(run, item, system, attempt)])})"
        for (run, item, system, attempt), n in ends.items()
        if n > 1
    ]
    done = {(run, item, system) for run, item, system, _attempt in ends}
    # a whole run's finish covers every item; a shard's (`--shard K/N`) covers its slice
    finished: dict[str, set[Shard | None]] = defaultdict(set)
    for end in log.of_type("run_finished"):
        shard, shards = end["payload"].get("shard"), end["payload"].get("shards")
        finished[end["run_id"]].add(None if shard is None else Shard(shard, shards))
    registered: dict[str, list[str]] = defaultdict(list)
    for event in log.events:
        if event["event_type"] in (
            "item_registered",
            "question_registered",
            "rubric_task_registered",
        ):
            registered[event["run_id"]].append(event["payload"]["item_id"])
    for start in log.of_type("run_started"):
        run, payload = start["run_id"], start["payload"]
        spec = payload.get("spec") or {}
        if run not in finished or payload["benchmark"] not in FAMILIES:
            continue
        if spec.get("kind") == "grading":
            continue
        items = (
            spec.get("item_ids") or (spec.get("selection") or {}).get("item_ids") or registered[run]
        )
        systems = [s["name"] for s in payload["systems"]]
        for shard in finished[run]:
            slice_ = items if shard is None else shard.take(items, key=str)
            missing = [(i, s) for i in slice_ for s in systems if (run, i, s) not in done]
            if missing:
                item, system = missing[0]
                problems.append(
                    f"run {run[:8]} ({payload['benchmark']}, {payload['source']}) is finished "
                    f"{'' if shard is None else f'as shard {shard} '}but {len(missing)} of "
                    f"{len(slice_) * len(systems)} units have no terminal event, "
                    f"e.g. item {item[:12]} {system}"
                )
    return problems


# --- snapshot --------------------------------------------------------------------------------


def mart_checksums(db: Path) -> Checksums | None:
    if not db.exists():
        return None
    return table_checksums(db)


def differing_marts(expected: Checksums, actual: Checksums) -> list[str]:
    """Names (with row counts expected -> actual) of the marts that differ, missing included."""
    out = []
    for table in sorted(set(expected) | set(actual)):
        want, got = expected.get(table), actual.get(table)
        if want != got:
            rows = lambda sums: "absent" if sums is None else f"{sums[0]} rows"  # noqa: E731
            out.append(f"{table} ({rows(want)} -> {rows(got)})")
    return out


def export_problems(serve_db: Path, mart: str, exported: Path, fmt: str) -> list[str]:
    """`bench export MART` wrote the snapshot's table: the same rows (a parquet file, compared
    row for row both ways) or at least as many rows and the same columns (csv, json lines)."""
    if not exported.exists():
        return [f"bench export {mart} exited 0 but wrote no {exported.name}"]
    with duckdb.connect(str(serve_db), read_only=True) as con:
        table = f'marts."{mart}"'
        (want,) = con.execute(f"select count(*) from {table}").fetchone()
        columns = [r[0] for r in con.execute(f"describe {table}").fetchall()]
        if fmt == "json" and want == 0:  # JSON lines have no header: no rows, no columns
            text = exported.read_text(encoding="utf-8").strip()
            return [f"{mart}: the snapshot is empty, the export is not"] if text else []
        reader = {"parquet": "read_parquet", "csv": "read_csv", "json": "read_json"}[fmt]
        # every column as text: a csv's inferred types are not the snapshot's
        source = f"{reader}('{exported}'" + (", all_varchar = true)" if fmt == "csv" else ")")
        got_columns = [r[0] for r in con.execute(f"describe select * from {source}").fetchall()]
        (got,) = con.execute(f"select count(*) from {source}").fetchone()
        problems = []
        if got_columns != columns:
            problems.append(f"{mart}: exported columns {got_columns} != snapshot {columns}")
        if got != want:
            problems.append(f"{mart}: exported {got} rows, the snapshot holds {want}")
        if fmt == "parquet" and not problems:
            (differ,) = con.execute(
                f"select count(*) from ((select * from {table} except all select * from {source})"
                f" union all (select * from {source} except all select * from {table}))"
            ).fetchone()
            if differ:
                problems.append(f"{mart}: {differ} row(s) differ between export and snapshot")
    return problems


def sql_problems(serve_db: Path, mart: str, output: str) -> list[str]:
    """`bench sql "select count(*) as n from marts.MART" --format json` printed the snapshot's
    row count of that mart, once."""
    counts = [json.loads(line)["n"] for line in output.splitlines() if line.startswith('{"n":')]
    with duckdb.connect(str(serve_db), read_only=True) as con:
        (want,) = con.execute(f'select count(*) from marts."{mart}"').fetchone()
    return [] if counts == [want] else [f"bench sql counted {counts} rows of {mart}, not [{want}]"]


def _bytes(path: Path) -> int:
    files = [path] if path.is_file() else path.rglob("*") if path.exists() else []
    return sum(f.stat().st_size for f in files if f.is_file())


def status_problems(home: Path, output: str) -> list[str]:
    """`bench status` (run on an idle data root) said how many events the warehouse loaded and
    how many bytes the log and the snapshot (serve.duckdb with its Parquet parts) take."""
    text = " ".join(output.replace("│", " ").split())  # a long cell wraps inside the table
    problems = []
    warehouse = home / "warehouse.duckdb"
    if warehouse.exists():
        with duckdb.connect(str(warehouse), read_only=True) as con:
            (events,) = con.execute("select count(*) from raw.events").fetchone()
        if f"{events} events loaded" not in text:
            problems.append(f"status does not say '{events} events loaded'")
    snapshot = _bytes(home / "serve.duckdb") + _bytes(parts_dir(home / "serve.duckdb"))
    for part, n in (("log", _bytes(home / "log")), ("snapshot", snapshot)):
        if f"{part} {n / 1e6:,.1f} MB" not in text:
            problems.append(f"status does not say '{part} {n / 1e6:,.1f} MB'")
    return problems


def report_problems(serve_db: Path, out: Path) -> list[str]:
    """`bench report --out DIR` wrote the snapshot: report.json names the log head of the
    snapshot's newest publish, and every CSV value is its mart's (tests/cli/test_report.py's
    recount, keyed by each mart's row key)."""
    manifest = out / "report.json"
    if not manifest.exists():
        return [f"bench report exited 0 but wrote no {manifest}"]
    with duckdb.connect(str(serve_db), read_only=True) as con:
        (metadata,) = con.execute(
            "select metadata from main._publish order by published_at desc limit 1"
        ).fetchone()
    head = json.loads(metadata).get("log_head")
    want = f"{head['size']}:{head['root']}" if head else None
    got = json.loads(manifest.read_text(encoding="utf-8")).get("log_head")
    problems = [] if got == want else [f"report.json log head {got}, the snapshot's {want}"]
    try:
        csvs_against_marts(out, serve_db)
    except AssertionError as exc:
        problems.append(f"a report CSV differs from its mart: {exc}")
    return problems


def snapshot_problems(
    serve_db: Path, builds: list[Checksums], published_last_build: bool
) -> list[str]:
    return snapshot_problems_of(mart_checksums(serve_db), builds, published_last_build)


def snapshot_problems_of(
    snapshot: Checksums | None, builds: list[Checksums], published_last_build: bool
) -> list[str]:
    """`builds` = the warehouse's marts after each successful build, oldest first. After a
    publish of the last of them the snapshot is exactly it; before, it is one of them (a
    snapshot no successful build produced was published from a failed or killed one)."""
    if snapshot is None:
        return (
            ["the last successful build was published but there is no snapshot"]
            if (published_last_build and builds)
            else []
        )
    if not builds:
        return ["a snapshot exists but no build has succeeded"]
    if published_last_build:
        diff = differing_marts(builds[-1], snapshot)
        return (
            [f"snapshot differs from the last successful build: {', '.join(diff[:6])}"]
            if diff
            else []
        )
    if snapshot not in builds:
        closest = min(builds, key=lambda b: len(differing_marts(b, snapshot)))
        diff = differing_marts(closest, snapshot)
        return [
            f"the snapshot is no successful build's marts (closest differs in {', '.join(diff[:6])})"
        ]
    return []


# --- fresh rebuild ---------------------------------------------------------------------------

COPIED = ("log", "heads.jsonl", "scoring.json")


def rebuild_copy(
    home: Path, oracle_home: Path, cwd: Path, env: dict[str, str] | None = None
) -> tuple[Outcome, Checksums | None]:
    """`bench rebuild` in `oracle_home` from a copy of `home`'s log, its recorded heads and
    scoring vars: the marts a fresh warehouse builds from the same log with the same vars (and,
    with BENCH_LOG_BUCKET in `env`, the other writers' logs in the bucket)."""
    oracle_home.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        target = oracle_home / name
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink(missing_ok=True)
        source = home / name
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("locks"))
        elif source.exists():
            shutil.copy2(source, target)
    outcome = run_bench(oracle_home, ["rebuild"], cwd, env=env)
    sums = mart_checksums(oracle_home / "warehouse.duckdb") if outcome.ok else None
    return outcome, sums


# --- helpers ---------------------------------------------------------------------------------


def _has_table(con: duckdb.DuckDBPyConnection, schema: str, table: str) -> bool:
    return bool(
        con.execute(
            "select count(*) from information_schema.tables where table_schema = ? "
            "and table_name = ? and table_catalog = current_database()",
            [schema, table],
        ).fetchone()[0]
    )


# --- plan -----------------------------------------------------------------------------------


def plan_problems(plan_output: str, log: LogView) -> list[str]:
    """`bench plan draco --json` with a run's options must name a run the log started (the
    plan builds the run's own plan, so it names the same spec's id)."""
    try:
        run_id = json.loads(plan_output[plan_output.index("{") :])["run_id"]
    except (ValueError, KeyError) as exc:
        return [f"bench plan draco --json printed no run id ({exc})"]
    started = {e["run_id"] for e in log.of_type("run_started")}
    if run_id not in started:
        return [f"the plan names run {run_id}, which the log never started"]
    return []


def plain_sealed_segments(log_dir: Path) -> list[str]:
    """Sealed segments still stored plain: after an intact ingest that ran to the end, none
    (transform.pipeline.compress_verified; no sequence tampers, so every verification is)."""
    log = EventLog(log_dir)
    sealed = log.manifest()
    return [s.name for s in log.segments() if s.name in sealed and not log.is_compressed(s)]


def id_index_problems(log_dir: Path) -> list[str]:
    """Every compressed segment has an id index its `compress` record vouches for, holding
    the event and run ids of its lines, read here by parsing each line (not the writer's own
    byte scan): a writer trusts the index to never write an event twice."""
    log = EventLog(log_dir)
    records = log.compressions(log.manifest_records())
    problems: list[str] = []
    for segment in log.segments():
        if not log.is_compressed(segment):
            continue
        indexed = log.id_index(segment, records.get(segment.name))
        if indexed is None:
            problems.append(f"{segment.name}: no id index its compress record vouches for")
            continue
        events = [json.loads(line) for line in log.segment_bytes(segment).splitlines() if line]
        ids = {event["event_id"] for event in events}
        runs = {event["run_id"] for event in events if event.get("run_id")}
        if indexed != (ids, runs):
            problems.append(
                f"{segment.name}: the index has {len(indexed[0])} ids and {len(indexed[1])} runs, "
                f"the lines {len(ids)} and {len(runs)}"
            )
    return problems


def dim_event_parts(serve_db: Path) -> int:
    """How many Parquet parts the snapshot's dim_events reads (0: no snapshot, or a table)."""
    return len(snapshot_parts(serve_db).get("marts.dim_events", []))


# --- the log bucket ----------------------------------------------------------------------------


def bucket_copy_problems(home: Path, bucket: Path) -> tuple[list[str], Counter[str]]:
    """What a push promises (`bench log push`, or a collecting command with BENCH_LOG_BUCKET
    set; warehouse/log_bucket.py), checked against the folder bucket: this writer's prefix holds
    each sealed segment, decompressing to the local bytes, and a MANIFEST the local one
    extends. Also returns the sealed segments' event ids."""
    from warehouse.log_bucket import writer_id
    from warehouse.paths import BenchPaths

    log = EventLog(home / "log")
    prefix = bucket / writer_id(BenchPaths(home))
    problems = []
    pushed = (
        (prefix / "MANIFEST.jsonl").read_bytes() if (prefix / "MANIFEST.jsonl").exists() else b""
    )
    manifest = log.manifest_path.read_bytes() if log.manifest_path.exists() else b""
    if not manifest.startswith(pushed):
        problems.append("the bucket's MANIFEST is not a prefix of the log's")
    sealed_ids: Counter[str] = Counter()
    for name in log.manifest():
        stored = prefix / f"{name}.zst"
        if not stored.exists():
            problems.append(f"sealed segment {name} is not in the bucket")
            continue
        with log.open_segment(log.log_dir / name) as handle:
            local = handle.read()
        with EventLog(prefix).open_segment(prefix / name) as handle:
            if handle.read() != local:
                problems.append(f"the bucket's {name} differs from the log's")
        sealed_ids.update(json.loads(line)["event_id"] for line in local.splitlines())
    return problems, sealed_ids


def bucket_problems(home: Path, bucket: Path, builder: Path, cwd: Path) -> list[str]:
    """The bucket holds what was pushed (bucket_copy_problems); a data root that collected
    nothing then loads from the bucket, its load killed once and run again, exactly the events
    of those segments, each once."""
    problems, sealed_ids = bucket_copy_problems(home, bucket)
    # The builder's load is killed first, at a moment drawn from the log's size (the copy,
    # the verification or dlt's load), then run again: it must still load every event once.
    from_bucket = {"BENCH_LOG_BUCKET": str(bucket)}
    kill_after_s = random.Random(len(sealed_ids)).uniform(0.5, 4.0)
    kill_bench(builder, ["ingest"], cwd, kill_after_s, env=from_bucket)
    loaded = run_bench(builder, ["ingest"], cwd, env=from_bucket)
    if not loaded.ok:
        return [
            *problems,
            f"a builder's ingest from the bucket: rc {loaded.returncode}: {loaded.tail(4)}",
        ]
    raw = raw_event_ids(builder / "warehouse.duckdb") or Counter()
    doubled = sorted(event_id for event_id, rows in raw.items() if rows > 1)
    if doubled:
        problems.append(f"the builder loaded {len(doubled)} events twice, e.g. {doubled[0]}")
    if set(raw) != set(sealed_ids):
        missing, extra = set(sealed_ids) - set(raw), set(raw) - set(sealed_ids)
        problems.append(
            f"the builder holds {len(raw)} events, the sealed segments {len(sealed_ids)}: "
            f"{len(missing)} missing, {len(extra)} not sealed"
        )
    return problems


def kept_copy_problems(home: Path, other_home: Path) -> list[str]:
    """Every id both logs hold (the same facts, written on two machines) is in raw.events as
    the copy with the smallest content_sha256 (ingest/copies.py)."""

    def copies(log_dir: Path) -> dict[str, str]:
        view = LogView.read(log_dir)
        return {event["event_id"]: event["content_sha256"] for event in view.events}

    mine, theirs = copies(home / "log"), copies(other_home / "log")
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        kept = dict(con.execute("select event_id, content_sha256 from raw.events").fetchall())
    both = mine.keys() & theirs.keys()
    if not both:
        return ["the other machine's log holds none of this log's ids"]
    wrong = sorted(i for i in both if kept.get(i) != min(mine[i], theirs[i]))
    extra = sorted(theirs.keys() - mine.keys())
    problems = []
    if wrong:
        problems.append(f"{len(wrong)} of {len(both)} ids keep the other copy, e.g. {wrong[0]}")
    if extra:
        problems.append(f"the other machine wrote {len(extra)} ids this log lacks, e.g. {extra[0]}")
    return problems
