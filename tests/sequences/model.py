"""A user's warehouse over months, as a state machine: the rules are what users do, the
invariants of issue #25 are checked after every step.

`World` owns one temporary data root and drives the real `bench` CLI against it, as a user
does (in this process, tests/sequences/runner.py; a killed command as a process of its own):
offline runs of each family on small random subsets; imports of generated files in every
format; corrections; rejudge; rescore; ingest, build, publish, rebuild; a push of the log to a
folder bucket, and another machine executing a run (or an import) this one ran and pushing its log
(`twin_run`: one fact stated on two machines); and a `kill -9` of any of these at a random
moment followed by the same command again.

Choices come from a `Chooser`, so the same rules serve hypothesis (tests/sequences/
test_sequences.py draws through `st.data()`) and the soak driver (`benchmarks/soak.py`, a
seeded `random.Random`). A step never stops the sequence: each broken invariant is recorded
as a `Violation` naming the step, and the sequence goes on (what broke first is what counts;
later steps show what the user lives with afterwards).

The expensive invariant (marts equal a fresh rebuild's: a full dbt build in a copy of the log)
runs only after a step that built successfully while the warehouse held the whole log (or
only once, when the sequence settles: `rebuild_check`), and is cached by (log head, scoring
vars); everything else runs after every step. `settle` ends a sequence as a user would before
looking: ingest and build if the warehouse is behind the log, then that comparison.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar

from tests.imports.inspect_log_file import write_inspect_log
from tests.sequences import files, invariants
from tests.sequences.invariants import Checksums, LogView
from tests.sequences.runner import Outcome, kill_bench, run_bench
from warehouse.log import EventLog

T = TypeVar("T")
REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = REPO.parent / "shared" / "data"
DRACO_JSONL = SHARED_DATA / "draco" / "test.jsonl"

# Engines that take well under a second a page (goose3 and newspaper4k are the slow ones).
ENGINES = [
    "beautifulsoup",
    "html-text",
    "html2text",
    "inscriptis",
    "justext",
    "resiliparse",
    "trafilatura",
]
QA_LANES = ["local-bm25", "closed-book"]
SYSTEM_NAMES = ["acme", "globex", "initech"]
# The offline deep-research systems (the local RAG lane at three depths, the closed-book control).
DRACO_SYSTEMS = ["local-rag", "local-rag-shallow", "local-rag-deep", "closed-book-research"]
JUDGE_LABELS = ["gpt-4o", "claude-sonnet-5"]
# Seconds a command takes here as a process of its own (a kill that lands after the command
# ended refines them): the kill lands at a random fraction of this.
TYPICAL_S = {
    "ingest": 3.0,
    "build": 10.0,
    "publish": 1.5,
    "rebuild": 20.0,
    "rescore": 8.0,
    "scored": 18.0,  # a collecting command that ingests, builds and publishes
    "unscored": 1.5,
}


class Chooser(Protocol):
    def integer(self, low: int, high: int) -> int: ...
    def choice(self, options: Sequence[T]) -> T: ...
    def subset(self, options: Sequence[T], low: int, high: int) -> list[T]: ...
    def fraction(self) -> float: ...
    def chance(self, probability: float) -> bool: ...


class RandomChooser:
    def __init__(self, rng: random.Random):
        self.rng = rng

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def choice(self, options: Sequence[T]) -> T:
        return options[self.rng.randrange(len(options))]

    def subset(self, options: Sequence[T], low: int, high: int) -> list[T]:
        size = self.rng.randint(low, min(high, len(options)))
        return self.rng.sample(list(options), size)

    def fraction(self) -> float:
        return self.rng.random()

    def chance(self, probability: float) -> bool:
        return self.rng.random() < probability


@dataclass
class Command:
    """One `bench` invocation and what it promises when it exits 0."""

    rule: str
    argv: list[str]
    ingests: bool = False  # loads every log line before it ends
    builds: bool = False  # an incremental build of everything loaded
    rescores: bool = False  # a build of what changed vars feed
    publishes: bool = False
    note: str = ""
    env: dict[str, str] = field(default_factory=dict)  # over the sequence's environment

    @property
    def typical_key(self) -> str:
        if self.argv[0] in TYPICAL_S:
            return self.argv[0]
        if self.builds or self.rescores:
            return "scored"
        return "unscored"

    def shell(self) -> str:
        env = "".join(f"{name}={_quote(value)} " for name, value in self.env.items())
        return env + "bench " + " ".join(_quote(a) for a in self.argv)


@dataclass
class Step:
    index: int
    command: Command
    outcome: Outcome
    killed: Outcome | None = None  # the first, killed, try (None: no kill)

    def describe(self) -> str:
        text = f"{self.index:>3}. {self.command.shell()}"
        if self.killed is not None:
            when = f"{self.killed.seconds:.1f} s"
            text += (
                f"   [kill -9 at {when}, then again]"
                if self.killed.returncode is None
                else f"   [kill -9 meant at {when} came after it ended (rc {self.killed.returncode}); again]"
            )
        if self.command.note:
            text += f"   # {self.command.note}"
        return text + f"   -> rc {self.outcome.returncode}, {self.outcome.seconds:.1f} s"


@dataclass(frozen=True)
class Violation:
    step: int
    invariant: str
    detail: str

    def describe(self) -> str:
        return f"step {self.step}: {self.invariant}: {self.detail}"


@cache
def _demo_items() -> list:
    import atexit
    import shutil
    import tempfile

    from collectors.demo.extraction_corpus import ensure_demo_corpus

    where = Path(tempfile.mkdtemp(prefix="seq-corpus-"))
    atexit.register(shutil.rmtree, where, ignore_errors=True)
    return list(ensure_demo_corpus(where / "demo").items)


@cache
def _draco_tasks() -> list:
    from collectors.draco.dataset import load_draco

    return list(load_draco(DRACO_JSONL).tasks)


@cache
def _demo_questions() -> list:
    from collectors.qa.question_sets import DEMO_QUESTION_SET, load_question_set

    return list(load_question_set(DEMO_QUESTION_SET).questions)


class World:
    """One data root, the steps applied to it, the violations found. `weights` override rules'
    weights in the draw (0 leaves a rule out). `rebuild_check`: when the
    marts are compared with a fresh rebuild's: "after-build" (after every successful build
    of the whole log; the default), "at-end" (in `settle` only) or "never". `score_chance`:
    how often a collecting command scores (ingest, build, publish: the CLI's default), not
    `--no-score`; a build is most of a step's time."""

    def __init__(
        self,
        root: Path,
        *,
        rebuild_check: str = "after-build",
        score_chance: float = 0.6,
        weights: dict[str, int] | None = None,
    ):
        self.root = Path(root)
        self.home = self.root / "home"
        self.files_dir = self.root / "files"
        self.oracle_home = self.root / "oracle"
        self.bucket = self.root / "bucket"  # `bench log push` (warehouse/log_bucket.py)
        self.builder_home = self.root / "builder"  # loads only from the bucket
        self.pushed = False  # from the first push on, collecting commands run with the bucket set
        # another machine that executes a whole run this one ran, and pushes its log (twin_run)
        self.twin_home = self.root / "twin"
        self.twin_pushes = 0  # from the first on, ingest and rebuild read the bucket too
        # `bench run` (no --shard) and `bench import` argv that finished: what twin_run repeats
        self.whole_runs: list[list[str]] = []
        self.twin_problems: list[str] = []  # what went wrong on the twin machine itself
        self.files_dir.mkdir(parents=True, exist_ok=True)
        self.rebuild_check = rebuild_check
        self.score_chance = score_chance  # a collecting command ingests, builds and publishes
        self.rotation = rotation({**self.RULES, **(weights or {})})  # `weights`: overrides
        self.steps: list[Step] = []
        self.violations: list[Violation] = []
        self.log = LogView()
        self.typical_s = dict(TYPICAL_S)
        self.imports: list[Command] = []  # import commands given so far (a user repeats one)
        self.file_counter = 0
        self.compressed_checks = 0  # steps after which every sealed segment had to be compressed
        # publishes that added dim_events's new events as one more part (warehouse/publish.py)
        self.event_parts = 0
        self.increments_published = 0
        # what the snapshot invariant remembers: marts after each successful build
        self.good_builds: list[Checksums] = []
        self.published_last_build = False
        # the last full build came after the last change of raw.events
        self.built_current = False
        self.raw_rows: tuple[int, int] | None = None
        self.oracle: dict[tuple[str, str], Checksums] = {}
        self.rebuild_checks = 0
        self.incomparable: list[int] = []  # steps whose comparison saw two dbt projects
        # where the time went: "commands", "checks" (but fresh rebuilds), "fresh rebuilds"
        self.seconds: Counter[str] = Counter()

    # --- what a user can do now -------------------------------------------------------------

    # rule -> weight in the draw. The order is the tour a chooser that always answers its
    # lowest choice takes (`pick_rule`; hypothesis' first sequence): within six steps a run,
    # imports of two families, two corrections, a killed rebuild (the first build: KILL_ORDER)
    # and an import after it, so that `settle` builds new imported events incrementally.
    RULES: ClassVar[dict[str, int]] = {
        "run_draco": 3,
        "import_qa": 3,
        "supersede": 2,
        "exclude": 2,
        "kill": 3,
        "import_draco": 4,
        "rescore": 2,
        "run_extraction": 3,
        "import_extraction": 2,
        "run_qa": 3,
        "reinstate": 1,
        "rejudge": 1,
        "ingest": 2,
        "build": 2,
        "publish": 1,
        "rebuild": 1,
        "read": 1,
        "push": 1,
        "twin_run": 1,
    }
    # What a kill's lowest choice hits first: the commands that write the warehouse. `rebuild`
    # first, so the tour builds twice (the killed rebuild's second try, then `settle`): an
    # incremental model that re-appends what the first build loaded shows on the second.
    KILL_ORDER: ClassVar[tuple[str, ...]] = ("rebuild", "ingest", "build", "publish", "rescore")

    def available(self, rule: str) -> bool:
        if rule in ("exclude",):
            return bool(self._registered())
        if rule == "reinstate":
            return bool(self._excluded())
        if rule == "supersede":
            return bool(self.log.of_type(*VERDICT_REPLACEMENTS))
        if rule == "rejudge":
            return bool(self._runs_with_reports())
        if rule == "build":
            return self._has_raw()
        if rule == "publish":
            return bool(self.good_builds)
        if rule in ("rebuild", "push"):
            return bool(self.log.events)
        if rule == "twin_run":
            return self.pushed and bool(self.whole_runs)
        if rule == "read":
            return (self.home / "serve.duckdb").exists()
        return True

    def _has_raw(self) -> bool:
        try:
            return invariants.raw_event_ids(self.home / "warehouse.duckdb") is not None
        except Exception:
            return True  # a warehouse that cannot be read: building is what a user tries

    def draw(self, rule: str, ch: Chooser) -> Command:
        return getattr(self, f"_draw_{rule}")(ch)

    def perform(self, rule: str, ch: Chooser) -> Step:
        """Draw the rule's command, run it (killing it first when the rule is `kill`), check
        every invariant; returns the step (its violations are in `self.violations`)."""
        if rule == "kill":
            rules = [*self.KILL_ORDER, *(r for r in self.RULES if r not in self.KILL_ORDER)]
            victims = [r for r in rules if r != "kill" and self.available(r)]
            command = self.draw(ch.choice(victims), ch)
            after = round(ch.fraction() * self.typical_s[command.typical_key], 2)
            return self.execute(command, kill_after_s=after)
        return self.execute(self.draw(rule, ch))

    # --- running a step ------------------------------------------------------------------------

    def execute(self, command: Command, *, kill_after_s: float | None = None) -> Step:
        # `bench rebuild` is itself a fresh rebuild: the marts before it are what it must give
        before = self._marts() if command.argv[0] == "rebuild" and self._current() else None
        vars_before = self._scoring_vars()
        killed = None
        started = time.monotonic()
        if kill_after_s is not None:
            killed = kill_bench(
                self.home, command.argv, self.files_dir, kill_after_s, env=command.env
            )
        outcome = run_bench(self.home, command.argv, self.files_dir, env=command.env)
        if command.rescores and outcome.ok and not _changed_vars(vars_before, self._scoring_vars()):
            # vars in effect unchanged since before the step (a killed try counts as part of
            # it): `bench rescore` says "nothing changed" and builds nothing; it publishes only
            # a build a killed try left unpublished, which then is this step's build
            pending = "published the last build" in outcome.output
            said = (
                "nothing changed: published a killed try's build" if pending else "nothing changed"
            )
            note = "; ".join(filter(None, [command.note, said]))
            command = replace(command, rescores=pending, publishes=pending, note=note)
        if killed is not None and killed.ok:
            # the kill came after the command ended: its time as a process of its own (a step
            # runs in this process, without the process's start) is what later kills aim into
            key = command.typical_key
            self.typical_s[key] = round(0.5 * self.typical_s[key] + 0.5 * killed.seconds, 2)
        step = Step(len(self.steps) + 1, command, outcome, killed)
        self.steps.append(step)
        self.seconds["commands"] += time.monotonic() - started
        checked, rebuilding = time.monotonic(), self.seconds["fresh rebuilds"]
        self._check(step, before)
        rebuilt = self.seconds["fresh rebuilds"] - rebuilding
        self.seconds["checks"] += time.monotonic() - checked - rebuilt
        return step

    def _scoring_vars(self) -> dict[str, Any]:
        scoring = self.home / "scoring.json"
        try:
            return json.loads(scoring.read_text()) if scoring.exists() else {}
        except ValueError:
            return {}

    def _violate(self, step: Step, invariant: str, problems: list[str]) -> None:
        self.violations.extend(Violation(step.index, invariant, p) for p in problems)

    def _check(self, step: Step, before: Checksums | None) -> None:
        command, outcome = step.command, step.outcome
        if not outcome.ok:
            self._violate(
                step, invariants.COMMAND_EXITS_0, [f"rc {outcome.returncode}: {outcome.tail(6)}"]
            )
        self.log = LogView.read(self.home / "log")
        try:
            raw = invariants.raw_event_ids(self.home / "warehouse.duckdb")
            raw_problems = invariants.raw_events_once(
                self.log, raw, all_loaded=command.ingests and outcome.ok
            )
            staging = invariants.staging_duplicates(self.home / "warehouse.duckdb")
        except Exception as exc:  # an unreadable warehouse is itself the finding
            raw, raw_problems, staging = None, [f"warehouse unreadable: {exc}"], []
        self._violate(step, invariants.RAW_ONCE, raw_problems)
        self._violate(step, invariants.STAGING_UNIQUE, staging)
        self._violate(step, invariants.ONE_TERMINAL, invariants.terminal_units(self.log))
        if command.ingests and outcome.ok:
            plain = invariants.plain_sealed_segments(self.home / "log")
            self._violate(step, invariants.STORED_COMPRESSED, plain)
            self.compressed_checks += 1
        self._violate(
            step, invariants.ID_INDEX_IS_SEGMENT, invariants.id_index_problems(self.home / "log")
        )
        parts = invariants.dim_event_parts(self.home / "serve.duckdb")
        if parts > self.event_parts:  # a publish added the new events as a part of their own
            self.increments_published += 1
        self.event_parts = parts

        # rows and their content: a copy replaced by the other machine's (twin_run) changes the
        # content, not the count
        raw_rows = invariants.raw_content(self.home / "warehouse.duckdb") if raw else None
        built = outcome.ok and (command.builds or command.argv[0] == "rebuild")
        if built:
            self.built_current = True
        elif raw_rows != self.raw_rows or ((command.builds or command.rescores) and not outcome.ok):
            self.built_current = False
        self.raw_rows = raw_rows
        if outcome.ok and (command.builds or command.rescores):
            self.good_builds.append(self._marts() or {})
            self.published_last_build = command.publishes
        elif outcome.ok and command.publishes:
            self.published_last_build = True
        self._violate(
            step,
            invariants.SNAPSHOT_IS_LAST_BUILD,
            invariants.snapshot_problems(
                self.home / "serve.duckdb", self.good_builds, self.published_last_build
            ),
        )
        if command.argv[0] == "report" and outcome.ok:
            out = Path(command.argv[command.argv.index("--out") + 1])
            self._violate(
                step,
                invariants.REPORT_IS_SNAPSHOT,
                invariants.report_problems(self.home / "serve.duckdb", out),
            )
        if command.argv[0] == "sql" and outcome.ok:
            mart = command.argv[1].split('marts."', 1)[1].rstrip('"')
            self._violate(
                step,
                invariants.SQL_IS_SNAPSHOT,
                invariants.sql_problems(self.home / "serve.duckdb", mart, outcome.output),
            )
        if command.argv[0] == "status" and outcome.ok:
            self._violate(
                step,
                invariants.STATUS_IS_DATA_ROOT,
                invariants.status_problems(self.home, outcome.output),
            )
        if command.argv[0] == "export" and outcome.ok:
            fmt = command.argv[command.argv.index("--format") + 1]
            out = Path(command.argv[command.argv.index("--out") + 1])
            mart = command.argv[1].removeprefix("marts.")
            self._violate(
                step,
                invariants.EXPORT_IS_SNAPSHOT,
                invariants.export_problems(self.home / "serve.duckdb", mart, out, fmt),
            )
        if command.argv[:2] == ["run", "draco"] and outcome.ok:
            # a shard names the same run as the whole: the plan has no --shard
            options = _without_shard([a for a in command.argv[2:] if a != "--no-score"])
            plan = run_bench(self.home, ["plan", "draco", *options, "--json"], self.files_dir)
            self._violate(
                step,
                invariants.PLAN_NAMES_THE_RUN,
                invariants.plan_problems(plan.output, self.log)
                if plan.ok
                else [f"bench plan draco: rc {plan.returncode}: {plan.tail(4)}"],
            )
        # what another machine can do as well (a corrections import names events of this log,
        # which the other machine lacks)
        twinnable = command.argv[0] == "run" or (
            command.argv[0] == "import" and command.argv[1] != "corrections"
        )
        if twinnable and "--shard" not in command.argv and outcome.ok:
            whole = [a for a in command.argv if a != "--no-score"]
            if whole not in self.whole_runs:
                self.whole_runs.append(whole)
        if command.rule == "twin_run":
            failed, self.twin_problems = self.twin_problems, []
            self._violate(step, invariants.COMMAND_EXITS_0, failed)  # on the other machine
            if outcome.ok and not failed:
                self._violate(
                    step,
                    invariants.KEPT_COPY_BY_RULE,
                    invariants.kept_copy_problems(self.home, self.twin_home),
                )
        if "BENCH_LOG_BUCKET" in command.env and outcome.ok:
            self._violate(
                step,
                invariants.PUSHED_BY_ITSELF,
                invariants.bucket_copy_problems(self.home, self.bucket)[0],
            )
        if command.argv[:2] == ["log", "push"] and outcome.ok:
            self.pushed = True
            self._violate(
                step,
                invariants.BUCKET_HOLDS_SEALED,
                invariants.bucket_problems(
                    self.home, self.bucket, self.builder_home, self.files_dir
                ),
            )
        verify = run_bench(self.home, ["verify"], self.files_dir)
        if not verify.ok:
            self._violate(
                step, invariants.VERIFY_PASSES, [f"rc {verify.returncode}: {verify.tail(4)}"]
            )

        if before is not None and outcome.ok:  # `bench rebuild` itself is the fresh rebuild
            diff = invariants.differing_marts(before, self._marts() or {})
            if diff:
                self._violate(
                    step,
                    invariants.MARTS_EQUAL_REBUILD,
                    [f"bench rebuild changed {', '.join(diff[:6])}"],
                )
        elif (
            self.rebuild_check == "after-build"
            and (command.builds or command.rescores)
            and outcome.ok
            and self._current()
        ):
            self._compare_with_rebuild(step)

    def settle(self) -> list[Step]:
        """The end of a sequence: bring the warehouse up to the whole log when it is not
        (`bench ingest`, `bench build`, as steps a user would take), then compare its marts
        with a fresh rebuild's (unless "never"; once per log head and vars)."""
        if not self.log.events:
            return []
        added = []
        if not self._current():
            note = "settle: the warehouse up to the whole log"
            try:
                raw = invariants.raw_event_ids(self.home / "warehouse.duckdb")
            except Exception:
                raw = None
            if raw is None or set(raw) != set(self.log.ids()):
                added.append(
                    self.execute(
                        Command(
                            "ingest",
                            ["ingest"],
                            ingests=True,
                            note=note,
                            env=self._loads_the_bucket(),
                        )
                    )
                )
            added.append(self.execute(Command("build", ["build"], builds=True, note=note)))
        if self.rebuild_check != "never" and self._current():
            self._compare_with_rebuild(self.steps[-1])
        return added

    def _current(self) -> bool:
        """The warehouse holds the whole log and its last full build came after that."""
        if not self.built_current:
            return False
        try:
            raw = invariants.raw_event_ids(self.home / "warehouse.duckdb")
        except Exception:
            return False
        return raw is not None and set(raw) == set(self.log.ids())

    def _marts(self) -> Checksums | None:
        try:
            return invariants.mart_checksums(self.home / "warehouse.duckdb")
        except Exception:
            return None

    def _compare_with_rebuild(self, step: Step) -> None:
        if self.rebuild_check == "never":
            return
        scoring = self.home / "scoring.json"
        project = _project_built(self.home)
        key = (
            EventLog(self.home / "log").head().to_json().__repr__(),
            self.twin_pushes,  # the twin's copies are in what a rebuild reads
            scoring.read_text() if scoring.exists() else "",
            project,
        )
        if key not in self.oracle:
            self.rebuild_checks += 1
            started = time.monotonic()
            outcome, sums = invariants.rebuild_copy(
                self.home, self.oracle_home, self.files_dir, env=self._loads_the_bucket()
            )
            self.seconds["fresh rebuilds"] += time.monotonic() - started
            if sums is None:
                self._violate(
                    step,
                    invariants.MARTS_EQUAL_REBUILD,
                    [
                        f"bench rebuild of a copy of the log failed: rc {outcome.returncode}: "
                        f"{outcome.tail(4)}"
                    ],
                )
                return
            if _project_built(self.oracle_home) != project:
                # the dbt project was edited between the build and its fresh rebuild (a shared
                # checkout): two projects' marts, not comparable
                self.incomparable.append(step.index)
                return
            self.oracle[key] = sums
        diff = invariants.differing_marts(self.oracle[key], self._marts() or {})
        if diff:
            self._violate(
                step,
                invariants.MARTS_EQUAL_REBUILD,
                [f"{len(diff)} mart(s) differ (fresh -> incremental): {', '.join(diff[:6])}"],
            )

    # --- the rules' commands ---------------------------------------------------------------

    def _score(self, ch: Chooser, argv: list[str], rule: str, note: str = "") -> Command:
        """Collecting commands ingest, build and publish afterwards unless --no-score. Once the
        user has pushed to the bucket, BENCH_LOG_BUCKET stays set, as in a team's environment:
        they push their log first (no draw of its own, so the sequences a seed draws stay)."""
        bucket = {"BENCH_LOG_BUCKET": str(self.bucket)} if self.pushed else {}
        if ch.chance(self.score_chance):
            return Command(
                rule, argv, ingests=True, builds=True, publishes=True, note=note, env=bucket
            )
        return Command(rule, [*argv, "--no-score"], note=note, env=bucket)

    def _draw_run_extraction(self, ch: Chooser) -> Command:
        engines = ch.subset(ENGINES, 1, 3)
        argv = ["run", "extraction", "--corpus", "demo", "--engines", ",".join(engines)]
        argv += ["--limit", str(ch.integer(1, 4)), *self._maybe_shard(ch)]
        return self._score(ch, argv, "run_extraction")

    def _draw_run_qa(self, ch: Chooser) -> Command:
        lanes = ",".join(sorted(ch.subset(QA_LANES, 1, 2)))
        common = ["--lanes", lanes, "--limit", str(ch.integer(1, 4))]
        common += ["--random-state", str(ch.integer(0, 2))]
        if ch.chance(0.3):
            return self._score(ch, ["run", "simpleqa", *common], "run_qa")
        return self._score(ch, ["run", "qa", "--questions", "demo", *common], "run_qa")

    def _draw_run_draco(self, ch: Chooser) -> Command:
        systems = ch.subset(DRACO_SYSTEMS, 1, 2)
        argv = ["run", "draco", "--systems", ",".join(systems), "--judge", "offline"]
        argv += ["--samples", str(ch.integer(1, 3))]
        if ch.chance(0.3):  # the pinned DRACO split: ~40 criteria a task
            argv += ["--tasks", "draco", "--limit", "1"]
        else:
            argv += ["--tasks", "demo", "--limit", str(ch.integer(1, 3))]
        return self._score(ch, [*argv, *self._maybe_shard(ch)], "run_draco")

    @staticmethod
    def _maybe_shard(ch: Chooser) -> list[str]:
        """Now and then one shard of the run, as one of several machines would run it."""
        if not ch.chance(0.25):
            return []
        count = ch.integer(2, 3)
        return ["--shard", f"{ch.integer(1, count)}/{count}"]

    def _repeat_import(self, ch: Chooser, kind: str) -> Command | None:
        earlier = [c for c in self.imports if c.argv[1] == kind]
        if earlier and ch.chance(0.15):
            again = ch.choice(earlier)
            return self._score(
                ch, [a for a in again.argv if a != "--no-score"], again.rule, "the same file again"
            )
        return None

    def _new_file(self, name: str) -> Path:
        self.file_counter += 1
        return self.files_dir / f"{self.file_counter:03d}-{name}"

    def _import(self, command: Command) -> Command:
        self.imports.append(command)
        return command

    def _draw_import_extraction(self, ch: Chooser) -> Command:
        repeat = self._repeat_import(ch, "extraction-predictions")
        if repeat:
            return repeat
        items = ch.subset(_demo_items(), 1, 8)
        seed = ch.integer(0, 10**6)
        path = files.extraction_predictions(
            self._new_file("predictions.json"), items, seed, f"v{seed}"
        )
        argv = ["import", "extraction-predictions", str(path), "--system", ch.choice(SYSTEM_NAMES)]
        return self._import(
            self._score(ch, [*argv, "--corpus", "demo"], "import_extraction", f"{len(items)} pages")
        )

    def _draw_import_draco(self, ch: Chooser) -> Command:
        repeat = self._repeat_import(ch, "draco-results")
        if repeat:
            return repeat
        fmt = ch.choice(["valyu-grading", "valyu-inference", "nimble", "csv", "csv-by-id"])
        tasks = ch.subset(_draco_tasks(), 1, 3)
        seed = ch.integer(0, 10**6)
        argv = ["import", "draco-results"]
        if fmt == "valyu-grading":
            path = files.draco_valyu_grading(
                self._new_file("grading.eval.json"), tasks, seed, ch.integer(1, 2)
            )
            argv += [str(path), "--format", "valyu"]
        elif fmt == "valyu-inference":
            path = files.draco_valyu_inference(self._new_file("inference.jsonl"), tasks, seed)
            argv += [str(path), "--format", "valyu"]
        elif fmt == "nimble":
            path = files.draco_nimble(self._new_file("nimble.jsonl"), tasks, seed)
            argv += [str(path), "--format", "nimble", "--judge-label", ch.choice(JUDGE_LABELS)]
        else:
            path = files.draco_long_csv(
                self._new_file("verdicts.csv"),
                tasks,
                seed,
                ch.integer(1, 2),
                by_id=fmt == "csv-by-id",
            )
            argv += [str(path), "--format", "csv", "--judge-label", ch.choice(JUDGE_LABELS)]
        argv += ["--system", ch.choice(SYSTEM_NAMES)]
        return self._import(self._score(ch, argv, "import_draco", f"{fmt}, {len(tasks)} task(s)"))

    def _draw_import_qa(self, ch: Chooser) -> Command:
        repeat = self._repeat_import(ch, "qa-results")
        if repeat:
            return repeat
        fmt = ch.choice(["nimble", "simple-evals", "csv", "csv-with-urls", "jsonl", "inspect"])
        # the inspect log's last sample fails (tests/imports/inspect_log_file.py): two or more,
        # so one is scored (a log of failed samples alone is refused, and says so)
        questions = ch.subset(_demo_questions(), 2 if fmt == "inspect" else 1, 6)
        seed = ch.integer(0, 10**6)
        if fmt == "inspect":  # a log inspect_ai itself writes (its mock model answers)
            path = write_inspect_log(
                self._new_file("inspect-logs"),
                questions,
                scorer=ch.choice(["match", "simpleqa"]),
                log_format=ch.choice(["eval", "json"]),
            )
            argv = ["import", "qa-results", str(path), "--format", "inspect"]
            argv += ["--lane", ch.choice(SYSTEM_NAMES), "--questions", "demo"]
            return self._import(self._score(ch, argv, "import_qa", f"inspect, {len(questions)}"))
        if fmt == "nimble":
            path = files.qa_nimble(self._new_file("raw_results.csv"), questions, seed)
        elif fmt == "simple-evals":
            path = files.qa_simple_evals(self._new_file("allresults.json"), questions, seed)
        elif fmt == "jsonl":
            path = files.qa_mapped_jsonl(self._new_file("results.jsonl"), questions, seed)
        else:
            path = files.qa_long_csv(
                self._new_file("qa.csv"), questions, seed, fmt == "csv-with-urls"
            )
        argv = ["import", "qa-results", str(path), "--format", fmt.removesuffix("-with-urls")]
        argv += ["--map", files.QA_JSONL_MAP] if fmt == "jsonl" else []
        argv += ["--lane", ch.choice(SYSTEM_NAMES), "--grader-label", ch.choice(JUDGE_LABELS)]
        argv += ["--questions", "demo"]
        return self._import(
            self._score(ch, argv, "import_qa", f"{fmt}, {len(questions)} question(s)")
        )

    def _registered(self) -> list[tuple[str, str, str, str]]:
        """(family, item, run, dataset sha256) of every registered item."""
        return [
            (family, e["payload"]["item_id"], e["run_id"], e["payload"].get("dataset_sha256") or "")
            for family, event_type in REGISTRATIONS.items()
            for e in self.log.of_type(event_type)
        ]

    def _excluded(self) -> list[dict[str, Any]]:
        return [e["payload"] for e in self.log.of_type("item_excluded") if e["payload"]["excluded"]]

    def _runs_with_reports(self) -> list[str]:
        return sorted({e["run_id"] for e in self.log.of_type("research_completed")})

    def _draw_exclude(self, ch: Chooser) -> Command:
        family, item, run, sha = ch.choice(self._registered())
        datasets = {s for f, i, _r, s in self._registered() if (f, i) == (family, item)}
        scope = run if ch.chance(0.3) else None
        return self._correction(
            ch, "exclude", family, item, scope, sha if len(datasets) > 1 else None, False
        )

    def _draw_reinstate(self, ch: Chooser) -> Command:
        p = ch.choice(self._excluded())
        return self._correction(
            ch,
            "reinstate",
            p["benchmark"],
            p["item_id"],
            p["scope_run_id"],
            p["dataset_sha256"],
            True,
        )

    def _correction(self, ch, rule, family, item, scope, sha, reinstate) -> Command:
        reason = f"{rule} {ch.integer(1, 10**6)}"
        if ch.chance(0.3):
            row = {"kind": "exclude", "target": item, "reason": reason, "benchmark": family}
            row |= {
                "run_id": scope or "",
                "dataset_sha256": sha or "",
                "reinstate": "yes" if reinstate else "",
            }
            path = files.corrections_csv(self._new_file("corrections.csv"), [row])
            return self._score(ch, ["import", "corrections", str(path)], rule)
        argv = ["exclude", item, "--benchmark", family, "--reason", reason]
        argv += ["--run", scope] if scope else []
        argv += ["--dataset-sha256", sha] if sha else []
        argv += ["--reinstate"] if reinstate else []
        return self._score(ch, argv, rule)

    def _draw_supersede(self, ch: Chooser) -> Command:
        kind = ch.choice(sorted({e["event_type"] for e in self.log.of_type(*VERDICT_REPLACEMENTS)}))
        targets = ch.subset([e["event_id"] for e in self.log.of_type(kind)], 1, 2)
        replacement = ch.choice(VERDICT_REPLACEMENTS[kind])
        reason = f"supersede {ch.integer(1, 10**6)}"
        if ch.chance(0.3):
            rows = [
                {"kind": "supersede", "target": t, "reason": reason, "replacement": replacement}
                for t in targets
            ]
            path = files.corrections_csv(self._new_file("corrections.csv"), rows)
            return self._score(ch, ["import", "corrections", str(path)], "supersede", kind)
        argv = ["supersede-verdict", *targets, "--verdict", replacement, "--reason", reason]
        return self._score(ch, argv, "supersede", kind)

    def _draw_rejudge(self, ch: Chooser) -> Command:
        run = ch.choice(self._runs_with_reports())
        argv = ["rejudge", run, "--judge", "offline", "--samples", str(ch.integer(1, 3))]
        return self._score(ch, argv, "rejudge")

    def _draw_rescore(self, ch: Chooser) -> Command:
        builds = self._has_raw()  # on a data root without events it only saves the vars
        note = "" if builds else "no events yet: saves the vars"
        if ch.chance(0.15):
            return Command(
                "rescore", ["rescore", "--reset"], rescores=builds, publishes=builds, note=note
            )
        argv = ["rescore"]
        options = ch.subset(
            ["weights", "threshold", "penalty-floor", "umbrela", "lane-prices", "reset-var"], 1, 2
        )
        if "weights" in options:
            argv += ["--weights", _weights(ch)]
        if "threshold" in options:
            argv += ["--threshold", f"{ch.integer(0, 20) / 20:g}"]
        if "penalty-floor" in options:
            argv += ["--draco-penalty-floor", str(-ch.integer(1, 500))]
        if "umbrela" in options:
            argv += ["--umbrela-threshold", str(ch.integer(0, 3))]
        if "lane-prices" in options:
            argv += ["--lane-prices", f"{ch.choice(QA_LANES)}={ch.integer(0, 40) / 4:g}"]
        if "reset-var" in options:  # one var the other options set, back to its default
            argv += ["--reset-var", ch.choice(RESETTABLE_VARS)]
        if ch.chance(0.2):
            argv.append("--reset")  # back to defaults, then these
        return Command("rescore", argv, rescores=builds, publishes=builds, note=note)

    def _loads_the_bucket(self) -> dict[str, str]:
        """Once another machine pushed, the commands that load read its log too: a team's
        environment has BENCH_LOG_BUCKET set."""
        return {"BENCH_LOG_BUCKET": str(self.bucket)} if self.twin_pushes else {}

    def _draw_ingest(self, ch: Chooser) -> Command:
        full = ["--full"] if ch.chance(0.2) else []
        return Command("ingest", ["ingest", *full], ingests=True, env=self._loads_the_bucket())

    def _draw_build(self, ch: Chooser) -> Command:
        return Command("build", ["build"], builds=True)

    def _draw_publish(self, ch: Chooser) -> Command:
        return Command("publish", ["publish"], publishes=True)

    def _draw_rebuild(self, ch: Chooser) -> Command:
        return Command(
            "rebuild",
            ["rebuild"],
            ingests=True,
            builds=True,
            publishes=True,
            env=self._loads_the_bucket(),
        )

    def _draw_twin_run(self, ch: Chooser) -> Command:
        """Another machine executes, in full, a run this one ran (no --shard), or makes an import
        this one made (the same facts under the same ids, in copies with another clock and
        command line), and pushes its log;
        this data root then loads it from the bucket. Each id must keep the copy with the
        smallest content_sha256 (ingest/copies.py), and later builds and rebuilds agree."""
        argv = ch.choice(self.whole_runs)
        ran = run_bench(self.twin_home, [*argv, "--no-score"], self.files_dir)
        pushed = run_bench(
            self.twin_home, ["log", "push", "--bucket", str(self.bucket)], self.files_dir
        )
        for what, outcome in (("run", ran), ("log push", pushed)):
            if not outcome.ok:
                self.twin_problems.append(
                    f"twin: bench {what}: rc {outcome.returncode}: {outcome.tail(4)}"
                )
        self.twin_pushes += 1
        shown = " ".join(_quote(a) for a in argv)
        return Command(
            "twin_run",
            ["ingest"],
            ingests=True,
            env=self._loads_the_bucket(),
            note=f"machine twin ran `bench {shown}` too and pushed its log",  # or imported
        )

    def _draw_push(self, ch: Chooser) -> Command:
        """`bench log push` into a folder bucket; the check then loads it on another root."""
        return Command("push", ["log", "push", "--bucket", str(self.bucket)])

    def _draw_read(self, ch: Chooser) -> Command:
        """What a reader does with the published snapshot: export a mart, see the scorecard."""
        if ch.chance(0.25):
            return Command("read", ["scorecard"])
        if ch.chance(0.15):
            return Command("read", ["status"], note="bytes per part")
        if ch.chance(0.2):
            out = self._new_file("report")
            return Command("read", ["report", "--out", str(out)], note="a static report")
        marts = sorted(invariants.mart_checksums(self.home / "serve.duckdb") or {})
        mart = ch.choice(marts)
        fmt = ch.choice(["parquet", "csv", "json"])
        out = self._new_file(f"{mart}.{fmt}")
        if ch.chance(0.2):
            sql = f'select count(*) as n from marts."{mart}"'
            return Command("read", ["sql", sql, "--format", "json"], note=f"{mart} rows")
        prefix = "marts." if ch.chance(0.5) else ""  # `bench sql` names it so; export takes both
        argv = ["export", prefix + mart, "--format", fmt, "--out", str(out)]
        return Command("read", argv, note=f"{mart} as {fmt}")

    # --- reporting ---------------------------------------------------------------------------

    def transcript(self) -> str:
        return "\n".join(step.describe() for step in self.steps)

    def new_violations(self, since: int) -> list[Violation]:
        return [v for v in self.violations if v.step > since]


REGISTRATIONS = {
    "draco": "rubric_task_registered",
    "qa": "question_registered",
    "extraction": "item_registered",
}
RESETTABLE_VARS = [
    "extraction_weights",
    "useful_success_threshold",
    "draco_penalty_floor",
    "umbrela_threshold",
    "lane_price_overrides",
]
VERDICT_REPLACEMENTS: dict[str, tuple[str, ...]] = {
    "judge_verdict": ("MET", "UNMET"),
    "imported_verdict": ("MET", "UNMET"),
    "answer_graded": ("A", "B", "C"),
}


def _changed_vars(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    from bench.rescore import changed_vars

    return changed_vars(before, after)


def _project_built(home: Path) -> str:
    """The fingerprint of the dbt project the data root's warehouse was last built with
    (transform/dbt_build.py writes it beside the warehouse)."""
    from transform.state import fingerprint_file

    path = fingerprint_file(home / "warehouse.duckdb")
    return path.read_text().split()[0] if path.exists() and path.read_text().strip() else ""


def _weights(ch: Chooser) -> str:
    """A valid --weights: 2–4 of the composite's components, twentieths summing to exactly 1."""
    from bench.rescore import extraction_weight_names

    names = ch.subset(list(extraction_weight_names()), 2, 4)
    cuts = sorted(ch.integer(0, 20) for _ in names[1:])
    parts = [b - a for a, b in zip([0, *cuts], [*cuts, 20], strict=True)]
    return ",".join(f"{name}={part / 20:g}" for name, part in zip(names, parts, strict=True))


def _quote(arg: str) -> str:
    return json.dumps(arg) if (" " in arg or not arg) else arg


def rotation(weights: dict[str, int]) -> list[str]:
    """Every rule as often as its weight, in rounds (each rule of weight >= k once in round k),
    so that consecutive entries are different rules."""
    rounds = max(weights.values())
    return [r for k in range(1, rounds + 1) for r, w in weights.items() if w >= k]


ROTATION = rotation(World.RULES)


def pick_rule(world: World, ch: Chooser, index: int, skip: frozenset[str] = frozenset()) -> str:
    """Step `index`'s rule: drawn by weight among those available (the first available at or
    after the drawn place in the world's rotation, `ROTATION` by default). The place is shifted by the step's index, so a
    chooser that always answers its lowest choice (hypothesis' first, simplest sequence)
    walks every rule in turn instead of repeating the first."""
    places = world.rotation
    start = ch.integer(0, len(places) - 1) + index
    for offset in range(len(places)):
        rule = places[(start + offset) % len(places)]
        if rule not in skip and world.available(rule):
            return rule
    raise AssertionError("no rule available")  # ingest always is


def drive(
    world: World,
    rng: random.Random,
    steps: int,
    on_step: Callable[[Step | None, list[Violation]], None] | None = None,
) -> None:
    """The soak driver: `steps` rules drawn by weight among those available, then `settle`."""
    ch = RandomChooser(rng)
    for index in range(steps):
        seen = len(world.violations)
        step = world.perform(pick_rule(world, ch, index), ch)
        if on_step is not None:
            on_step(step, world.violations[seen:])
    seen = len(world.violations)
    settled = world.settle()
    found = world.violations[seen:]
    if on_step is not None:
        for step in settled:
            on_step(step, [v for v in found if v.step == step.index])
        earlier = [v for v in found if v.step not in {s.index for s in settled}]
        if earlier:  # the final comparison, after a step already reported
            on_step(None, earlier)


def _without_shard(options: list[str]) -> list[str]:
    if "--shard" not in options:
        return options
    at = options.index("--shard")
    return options[:at] + options[at + 2 :]
