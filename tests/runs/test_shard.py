"""`bench run … --shard K/N`: one run's items split across machines (collectors/runs/shard.py).

The slice rule is checked against an oracle for every split hypothesis draws; the command is
checked end to end on the demo's rubric tasks: two shards in two data roots make the same run,
do disjoint work that covers the whole run, resume on their own, and each closes with its own
RunFinished. (The union loaded into one warehouse, and dim_runs finishing with the last shard,
are tests/lake/test_lake_team.py and the dim_runs unit tests.)
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from collectors.runs.shard import Shard, parse_shard
from tests.bench_cli import run_bench
from warehouse.log import EventLog


@given(
    keys=st.lists(st.text(min_size=1, max_size=6), unique=True, max_size=40),
    count=st.integers(1, 7),
    data=st.data(),
)
def test_the_shards_of_a_run_are_disjoint_cover_it_and_differ_by_at_most_one(keys, count, data):
    slices = [Shard(k, count).take(keys, key=str) for k in range(1, count + 1)]
    # oracle: the keys in sorted order, dealt out one at a time
    dealt = {key: position % count for position, key in enumerate(sorted(keys))}
    for index, mine in enumerate(slices):
        assert list(mine) == [key for key in keys if dealt[key] == index]  # the input's order
    sizes = [len(mine) for mine in slices]
    assert sum(sizes) == len(keys) and max(sizes, default=0) - min(sizes, default=0) <= 1
    # every machine gets the same slice, whatever order it listed the items in
    shuffled = data.draw(st.permutations(keys))
    assert [set(Shard(k, count).take(shuffled, key=str)) for k in range(1, count + 1)] == [
        set(mine) for mine in slices
    ]


@pytest.mark.parametrize("text", ["0/2", "3/2", "2", "1/0", "a/b", "1/2/3", ""])
def test_a_malformed_shard_names_the_option_and_the_form(text):
    with pytest.raises(ValueError, match=r"^--shard .*(K/N|between 1 and N)"):
        parse_shard(text)


DEMO_RUBRIC_RUN = (
    *("run", "draco", "--tasks", "demo", "--systems", "local-rag,closed-book-research"),
    *("--judge", "offline", "--samples", "1", "--no-preflight", "--no-score"),
)


def _run_events(home: Path) -> list[dict]:
    return [event for _, event in EventLog(home / "log").read()]


def test_two_shards_in_two_data_roots_split_one_run_and_each_resumes_alone(tmp_path):
    homes = [tmp_path / "machine-a", tmp_path / "machine-b"]
    for k, home in enumerate(homes, start=1):
        run_bench(home, *DEMO_RUBRIC_RUN, "--shard", f"{k}/2")
    logs = [_run_events(home) for home in homes]
    (run_id,) = {event["run_id"] for log in logs for event in log}  # one run, on both machines
    researched = [
        Counter(
            (e["payload"]["item_id"], e["payload"]["lane"])
            for e in log
            if e["event_type"] == "research_completed"
        )
        for log in logs
    ]
    # disjoint slices of whole tasks, both systems each, covering the six demo tasks
    assert not set(researched[0]) & set(researched[1])
    tasks = [{item for item, _ in units} for units in researched]
    assert len(tasks[0]) == len(tasks[1]) == 3
    assert all(set(units.values()) == {1} for units in researched)
    assert all(len(units) == 2 * len(items) for units, items in zip(researched, tasks, strict=True))
    # each shard registers only its tasks, and finishes as its shard
    for log, mine, k in zip(logs, tasks, (1, 2), strict=True):
        registered = {
            e["payload"]["item_id"] for e in log if e["event_type"] == "rubric_task_registered"
        }
        assert registered == mine
        (finished,) = [e["payload"] for e in log if e["event_type"] == "run_finished"]
        assert (finished["shard"], finished["shards"], finished["completed"]) == (k, 2, 6)
    # the same shard again: already finished, nothing written; the other shard in the same data
    # root afterwards does only its own work
    again = run_bench(homes[0], *DEMO_RUBRIC_RUN, "--shard", "1/2")
    assert "already finished" in again.output or "already done" in again.output, again.output
    assert _run_events(homes[0]) == logs[0]
    run_bench(homes[0], *DEMO_RUBRIC_RUN, "--shard", "2/2")
    merged = _run_events(homes[0])

    def facts(events):  # all but the finishes, whose counts are of the log they close
        return {e["event_id"] for e in events if e["event_type"] != "run_finished"}

    assert facts(merged) == facts(logs[0]) | facts(logs[1])
    assert sum(e["event_type"] == "research_completed" for e in merged) == 12
    assert {e["run_id"] for e in merged} == {run_id}


def test_a_bad_shard_is_refused_before_anything_is_written(tmp_path):
    refused = run_bench(tmp_path, *DEMO_RUBRIC_RUN, "--shard", "3/2", check=False)
    assert refused.returncode == 2, refused.output
    assert "--shard 3/2: K must be between 1 and N" in " ".join(refused.output.split())
    assert not (tmp_path / "log").exists() or _run_events(tmp_path) == []
