"""The project's demo rubric tasks: DRACO's shape, the same parser, answerable offline."""

from __future__ import annotations

import json
from pathlib import Path
from pydoc_data.topics import topics

import pytest

from collectors.demo.draco_tasks import (
    DEMO_NAME,
    DEMO_SHA256,
    DEMO_TOPICS,
    SECTIONS,
    demo_task_jsonl,
    demo_task_set,
    write_demo_tasks,
)
from collectors.demo.extraction_corpus import select_topics
from collectors.draco.dataset import load_rubric_tasks
from collectors.draco.offline_judge import OfflineJudge
from warehouse.canonical import sha256_hex


@pytest.fixture(scope="module")
def demo():
    return demo_task_set()


def test_shape_like_draco(demo):
    assert (demo.name, demo.sha256, demo.revision) == (DEMO_NAME, DEMO_SHA256, "1")
    assert sha256_hex(demo_task_jsonl()) == DEMO_SHA256  # bump DEMO_VERSION when tasks change
    assert len(demo.tasks) == 6 and demo.criteria_count == 59
    assert len({t.item_id for t in demo.tasks}) == 6
    for task in demo.tasks:
        axes = tuple(dict.fromkeys(c.axis for c in task.criteria))
        assert axes == tuple(axis for axis, _ in SECTIONS)  # four sections, DRACO's order
        negatives = [c.weight for c in task.criteria if c.weight < 0]
        positives = [c.weight for c in task.criteria if c.weight > 0]
        assert 1 <= len(negatives) <= 2 and all(-25 <= w <= -10 for w in negatives)
        assert all(4 <= w <= 20 for w in positives) and 50 <= task.positive_weight <= 120
    for line in demo_task_jsonl().decode("ascii").splitlines():
        row = json.loads(line)
        assert list(row) == ["id", "problem", "answer", "domain"]
        assert isinstance(row["answer"], str) and json.loads(row["answer"])["sections"]


def test_round_trips_through_the_rubric_file_parser(demo, tmp_path):
    path = write_demo_tasks(tmp_path / "sets" / f"{DEMO_NAME}.jsonl")
    assert path.read_bytes() == demo_task_jsonl()
    loaded = load_rubric_tasks(path)
    assert loaded.tasks == demo.tasks
    assert (loaded.name, loaded.sha256) == (demo.name, demo.sha256)
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no partial file left


def test_each_task_is_answerable_from_its_demo_corpus_page(demo):
    """On the topic's own text (what a perfect extractive report would say), the offline judge
    finds most factual criteria and none of the errors; stating an error trips its penalty."""
    corpus_topics = set(select_topics(topics))
    judge = OfflineJudge()
    for task in demo.tasks:
        topic = DEMO_TOPICS[task.item_id]
        assert topic in corpus_topics
        page = topics[topic]
        factual = [c for c in task.criteria if c.axis == "factual-accuracy" and c.weight > 0]
        met = [c for c in factual if judge.judge(task, c, page, sample=1).met]
        assert len(met) == len(factual), (task.rubric_id, set(factual) - set(met))
        for negative in (c for c in task.criteria if c.weight < 0):
            assert not judge.judge(task, negative, page, sample=1).met, negative.criterion_id
            error = negative.requirement.removeprefix("Claims that ")
            assert judge.judge(task, negative, f"{page}\n\n{error}", sample=1).met


def test_the_demo_import_example_imports_and_its_figures_follow_valyus_rule(tmp_path):
    """docs/examples/demo_local-rag.eval.json (what `bench demo` writes and imports; the demo
    browser test holds the two equal) goes through the real valyu import for every demo task,
    and its header figures are valyu's aggregation of its own verdicts."""
    from collectors.demo.draco_tasks import (
        DEMO_IMPORT_FILE,
        DEMO_IMPORT_SYSTEM,
        demo_import_eval_json,
        demo_task_set,
    )
    from collectors.imports.draco_results import import_draco_results
    from warehouse.log import EventLog

    example = Path(__file__).resolve().parents[2] / "docs" / "examples" / DEMO_IMPORT_FILE
    document = json.loads(example.read_text())
    task_set = demo_task_set()
    (summary,) = import_draco_results(
        EventLog(tmp_path / "log"), example, fmt="valyu", system=DEMO_IMPORT_SYSTEM,
        task_set=task_set, judge_label=None,
    )  # fmt: skip
    assert summary.completed == len(task_set.tasks) == len(document["results"])
    assert not summary.absent_ids and not summary.unmatched_ids
    scores = []
    for result in document["results"]:
        (run,) = result["runs"]
        weights = [(c["weight"], c["verdict"] == "MET") for c in run["criteria_results"]]
        positive = sum(w for w, _ in weights if w > 0)
        score = min(1.0, max(0.0, sum(w for w, met in weights if met) / positive))
        assert result["normalized_score"] == pytest.approx(score, abs=1e-6)
        scores.append(score)
    assert document["overall_score"] == pytest.approx(sum(scores) / len(scores), abs=1e-6)
    # the rendering is a function of the verdicts alone
    verdicts = {
        (r["id"], c.criterion_id): cr["verdict"] == "MET"
        for r in document["results"]
        for c, cr in zip(
            sorted(
                next(t for t in task_set.tasks if t.item_id == r["id"]).criteria,
                key=lambda c: c.position,
            ),
            r["runs"][0]["criteria_results"],
            strict=True,
        )
    }
    assert demo_import_eval_json(verdicts) == example.read_bytes()
