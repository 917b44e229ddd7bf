"""Soak: many random sequences of what users do, every invariant of issue #25 after each step.

    python benchmarks/soak.py --sequences 5 [--steps 12] [--seed 0]
                              [--rebuild-check after-build|at-end|never] [--keep DIR]
                              [--weight RULE=N ...]

Each sequence starts from an empty data root and applies `--steps` rules drawn by weight
(tests/sequences/model.py: offline runs of each family, imports in every format, corrections,
rejudge, rescore, ingest, build, publish, rebuild, kill -9 then the same command again),
through the real `bench` CLI, then settles (ingest and build if the warehouse is behind the
log) for a last comparison with a fresh rebuild. Sequence i uses seed `--seed + i`, so any one is repeated by
`--seed S --sequences 1`. Printed: each step as it runs (the exact command), every invariant
violation with the step that broke it (a violation that persists is printed once, with the
steps it was seen at), and at the end a summary per invariant. Exit 1 when anything broke.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(REPO))

from tests.sequences.model import Step, Violation, World, drive  # noqa: E402


def soak_one(
    seed: int, steps: int, root: Path, rebuild_check: str, weights: dict[str, int]
) -> World:
    world = World(root, rebuild_check=rebuild_check, weights=weights)
    seen: dict[tuple[str, str], list[int]] = {}

    def on_step(step: Step | None, found: list[Violation]) -> None:
        if step is not None:
            print(step.describe(), flush=True)
        for v in found:
            key = (v.invariant, _shape(v.detail))
            if key in seen:
                seen[key].append(v.step)
                continue
            seen[key] = [v.step]
            print(f"       !! {v.invariant}: {v.detail}", flush=True)

    drive(world, random.Random(seed), steps, on_step)
    repeats = {k: s for k, s in seen.items() if len(s) > 1}
    for (invariant, _), at in repeats.items():
        print(f"       (still: {invariant} at steps {', '.join(map(str, at[1:]))})")
    return world


def _shape(detail: str) -> str:
    """A violation's text without its numbers: the same breakage seen again on a later step."""
    return "".join("#" if c.isdigit() else c for c in detail)[:120]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sequences", type=int, default=3)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--rebuild-check",
        choices=["after-build", "at-end", "never"],
        default="after-build",
        help="when the marts are compared with a fresh `bench rebuild` of a copy of the log "
        "(a full dbt build each): after every successful build of the whole log (default), "
        "only at the end of each sequence, or never",
    )
    parser.add_argument("--keep", type=Path, help="keep each sequence's data root under DIR")
    parser.add_argument(
        "--weight",
        action="append",
        default=[],
        metavar="RULE=N",
        help="override a rule's weight in the draw (e.g. kill=10; 0 leaves it out); repeatable. "
        f"Rules and default weights: {', '.join(f'{r}={w}' for r, w in World.RULES.items())}",
    )
    args = parser.parse_args()
    weights = {}
    for spec in args.weight:
        rule, _, n = spec.partition("=")
        if rule not in World.RULES or not n.isdigit():
            parser.error(
                f"--weight {spec}: expected RULE=N with RULE one of {', '.join(World.RULES)}"
            )
        weights[rule] = int(n)

    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    broken_by: dict[str, list[str]] = defaultdict(list)  # invariant -> "seq S step N"
    first_seen: dict[str, str] = {}
    steps_run, kills, landed, rebuild_checks = 0, 0, 0, 0
    rules: Counter[str] = Counter()
    spent: Counter[str] = Counter()
    incomparable: list[str] = []
    for i in range(args.sequences):
        seed = args.seed + i
        print(
            f"\n=== sequence {i + 1}/{args.sequences} (seed {seed}, {args.steps} steps)", flush=True
        )
        root = Path(tempfile.mkdtemp(prefix=f"soak-{seed}-", dir=args.keep))
        world = soak_one(seed, args.steps, root, args.rebuild_check, weights)
        steps_run += len(world.steps)
        kills += sum(1 for s in world.steps if s.killed is not None)
        landed += sum(1 for s in world.steps if s.killed and s.killed.returncode is None)
        rebuild_checks += world.rebuild_checks
        spent.update(world.seconds)
        incomparable += [f"seed {seed} step {i}" for i in world.incomparable]
        rules.update(s.command.rule for s in world.steps)
        firsts: dict[str, Violation] = {}
        for v in world.violations:
            firsts.setdefault(v.invariant, v)
        for invariant, v in firsts.items():
            broken_by[invariant].append(f"seed {seed} step {v.step}")
            first_seen.setdefault(invariant, f"seed {seed} step {v.step}: {v.detail}")
        if not world.violations:
            print("    every invariant held")
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)

    print(
        f"\n=== summary: {args.sequences} sequences, {steps_run} steps ({kills} with kill -9, {landed} of them "
        f"before the command ended), "
        f"{rebuild_checks} fresh-rebuild comparisons, {time.monotonic() - started:.0f} s "
        f"(commands {spent['commands']:.0f} s, checks {spent['checks']:.0f} s, "
        f"fresh rebuilds {spent['fresh rebuilds']:.0f} s)"
    )
    print("rules applied: " + ", ".join(f"{r} {n}" for r, n in sorted(rules.items())))
    if weights:
        print("weights overridden: " + ", ".join(f"{r}={n}" for r, n in weights.items()))
    if incomparable:
        print(
            f"not compared ({len(incomparable)}): the dbt project changed between the build and "
            f"its fresh rebuild (the checkout was edited meanwhile): {', '.join(incomparable)}"
        )
    if not broken_by:
        print("no invariant broken")
        return 0
    for invariant, where in broken_by.items():
        print(f"BROKEN in {len(where)}/{args.sequences} sequences: {invariant}")
        print(f"    first: {first_seen[invariant]}")
        print(f"    (first break per sequence: {'; '.join(where)})")
    return 1


if __name__ == "__main__":
    sys.exit(main())
