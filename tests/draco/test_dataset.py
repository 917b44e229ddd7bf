"""The DRACO loader on the real pinned file, the pin refusals, the HF download path (no
network: `hf_hub_download` copies a local file), and the row errors of user rubric files."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from collectors.draco import dataset
from collectors.draco.dataset import (
    SHA256,
    DatasetPinError,
    RubricFormatError,
    dataset_ref,
    load_draco,
    load_rubric_tasks,
    registration_payloads,
)
from collectors.draco.model import RubricTaskSet
from collectors.pinned import PinError
from warehouse.canonical import sha256_hex
from warehouse.events import RubricCriterionRegistered, RubricTaskRegistered

AXES = (
    "factual-accuracy",
    "breadth-and-depth-of-analysis",
    "presentation-quality",
    "citation-quality",
)
WEIGHT_DISTRIBUTION = {
    -500: 1, -300: 1, -200: 2, -150: 3, -100: 4, -75: 1, -60: 1, -50: 6, -30: 3, -25: 10,
    -20: 62, -15: 54, -10: 263, -5: 4, 1: 1, 2: 9, 3: 7, 4: 16, 5: 280, 6: 114, 7: 4,
    8: 1459, 10: 1563, 12: 8, 15: 10, 20: 48,
}  # fmt: skip
DOMAINS = {
    "Finance": 20,
    "Shopping/Product Comparison": 16,
    "Academic": 12,
    "Technology": 10,
    "General Knowledge": 9,
    "UX Design": 9,
    "Law": 6,
    "Medicine": 6,
    "Personalized Assistant": 6,
    "Needle in a Haystack": 6,
}


@pytest.fixture(scope="session")
def draco_file(shared_data: Path) -> Path:
    return shared_data / "draco" / "test.jsonl"


@pytest.fixture(scope="session")
def draco(draco_file: Path) -> RubricTaskSet:
    return load_draco(draco_file)


@pytest.fixture
def no_shared_copy(tmp_path, monkeypatch) -> dict[str, str]:
    """An environment where neither the shared copy nor the cache exists."""
    return {"BENCH_DATA_DIR": str(tmp_path / "no-shared"), "BENCH_HOME": str(tmp_path / "home")}


def test_the_pinned_file_counts(draco):
    assert (draco.name, draco.sha256, draco.revision) == ("draco", SHA256, dataset.HF_REVISION)
    assert draco.uri == f"hf://datasets/perplexity-ai/draco@{dataset.HF_REVISION}/test.jsonl"
    assert len(draco.tasks) == 100 and draco.criteria_count == 3934
    criteria = [c for t in draco.tasks for c in t.criteria]
    assert Counter(c.axis for c in criteria) == dict(zip(AXES, (2048, 855, 556, 475), strict=True))
    negative = [c for c in criteria if c.polarity == "negative"]
    assert len(negative) == 415
    assert Counter(c.axis for c in negative) == dict(zip(AXES, (40, 108, 178, 89), strict=True))
    assert Counter(c.weight for c in criteria) == WEIGHT_DISTRIBUTION
    assert Counter(t.domain for t in draco.tasks) == DOMAINS
    assert all(any(c.weight < 0 for c in t.criteria) for t in draco.tasks)
    assert [tuple(dict.fromkeys(c.axis for c in t.criteria)) for t in draco.tasks] == [AXES] * 100
    positive = [t.positive_weight for t in draco.tasks]
    assert (min(positive), max(positive), sum(positive)) == (108, 618, 30724)  # mean 307.2
    assert len({t.item_id for t in draco.tasks}) == 100
    assert [t.position for t in draco.tasks] == list(range(100))


def test_fixture_items(draco):
    tasks = {t.item_id: t for t in draco.tasks}
    first = tasks["0c2c668a-c3bf-41af-93c9-b5614ff63508"]
    assert draco.tasks[0] is first and first.domain == "Academic"
    assert first.rubric_id == "staggered-did-methodology-evaluation"
    assert len(first.criteria) == 53
    assert [sum(c.axis == a for c in first.criteria) for a in AXES] == [31, 9, 5, 8]
    assert first.positive_weight == 401
    assert sum(c.weight for c in first.criteria if c.weight < 0) == -55
    assert [c.position for c in first.criteria] == list(range(53))
    assert first.criteria[0].criterion_id == "twfe-variance-weighted-decomposition"
    assert first.criteria[0].axis_title == "Factual Accuracy"
    finance = tasks["f0bed5aa-f7c4-4013-8d0c-10ffebeaf300"]
    assert (finance.domain, len(finance.criteria), finance.positive_weight) == ("Finance", 49, 406)
    needle = next(t for t in draco.tasks if t.item_id.startswith("ca0edd2d"))
    assert (len(needle.criteria), needle.positive_weight) == (27, 147)


def test_key_order_is_never_relied_on(draco, draco_file):
    """156 upstream criteria list `requirement` before `weight`; parse them all the same."""
    rows = [json.loads(line) for line in draco_file.read_text().splitlines()]
    reordered = [
        c
        for row in rows
        for section in json.loads(row["answer"])["sections"]
        for c in section["criteria"]
        if list(c) != ["id", "weight", "requirement"]
    ]
    assert len(reordered) == 156
    by_id = {(t.item_id, c.criterion_id): c for t in draco.tasks for c in t.criteria}
    row = next(
        r
        for r in rows
        if any(c in reordered for s in json.loads(r["answer"])["sections"] for c in s["criteria"])
    )
    for section in json.loads(row["answer"])["sections"]:
        for c in section["criteria"]:
            parsed = by_id[(row["id"], c["id"])]
            assert (parsed.weight, parsed.requirement) == (c["weight"], c["requirement"])


def test_shared_copy_is_found_through_the_environment(draco_file, tmp_path):
    root = tmp_path / "data"
    (root / "draco").mkdir(parents=True)
    shutil.copy(draco_file, root / "draco" / "test.jsonl")
    loaded = load_draco(environ={"BENCH_DATA_DIR": str(root), "BENCH_HOME": str(tmp_path / "h")})
    assert loaded.sha256 == SHA256 and len(loaded.tasks) == 100
    assert not (tmp_path / "h").exists()  # nothing downloaded, nothing cached


def test_a_modified_copy_is_refused(draco_file, tmp_path):
    modified = tmp_path / "test.jsonl"
    modified.write_bytes(draco_file.read_bytes().replace(rb"\"weight\": 10", rb"\"weight\": 11", 1))
    actual = sha256_hex(modified.read_bytes())
    with pytest.raises(DatasetPinError) as err:
        load_draco(modified)
    message = str(err.value)
    assert str(modified) in message and SHA256 in message and actual in message
    assert isinstance(err.value, PinError)
    # a drifted shared copy is refused the same way
    (tmp_path / "data" / "draco").mkdir(parents=True)
    shutil.copy(modified, tmp_path / "data" / "draco" / "test.jsonl")
    with pytest.raises(DatasetPinError, match=actual):
        load_draco(environ={"BENCH_DATA_DIR": str(tmp_path / "data")})


def test_an_unpinned_copy_runs_only_when_asked_and_is_named(draco_file, tmp_path):
    modified = tmp_path / "draco-edit.jsonl"
    modified.write_bytes(draco_file.read_bytes().replace(rb"\"weight\": 10", rb"\"weight\": 11", 1))
    actual = sha256_hex(modified.read_bytes())
    loaded = load_draco(modified, allow_unpinned=True)
    assert loaded.name == f"draco-unpinned-{actual[:12]}" and loaded.sha256 == actual
    assert loaded.revision is None and loaded.uri == str(modified.resolve())
    assert loaded.criteria_count == 3934
    assert dataset_ref(loaded).sha256 == actual


def _fake_hub(source: Path, calls: list[dict]):
    def hf_hub_download(repo_id, filename, *, repo_type=None, revision=None, local_dir=None):
        calls.append(
            {"repo_id": repo_id, "filename": filename, "repo_type": repo_type, "revision": revision}
        )
        target = Path(local_dir) / filename
        shutil.copy(source, target)
        return str(target)

    return hf_hub_download


def test_download_from_the_hub_into_the_cache(draco_file, no_shared_copy, monkeypatch, tmp_path):
    import huggingface_hub

    calls: list[dict] = []
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", _fake_hub(draco_file, calls))
    loaded = load_draco(environ=no_shared_copy)
    assert calls == [
        {
            "repo_id": "perplexity-ai/draco",
            "filename": "test.jsonl",
            "repo_type": "dataset",
            "revision": "ce076749809027649ebd331bcb70f42bf720d387",
        }
    ]
    assert loaded.sha256 == SHA256 and loaded.uri.startswith("hf://datasets/perplexity-ai/draco@")
    cache = Path(no_shared_copy["BENCH_HOME"]) / "cache" / "draco"
    assert [p.name for p in cache.iterdir()] == [f"{SHA256[:16]}-test.jsonl"]  # no scratch left
    load_draco(environ=no_shared_copy)
    assert len(calls) == 1  # the cache answers the second time


def test_a_mismatched_download_is_refused_and_not_cached(no_shared_copy, monkeypatch, tmp_path):
    import huggingface_hub

    drifted = tmp_path / "drifted.jsonl"
    drifted.write_text('{"id": "x"}\n')
    calls: list[dict] = []
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", _fake_hub(drifted, calls))
    with pytest.raises(DatasetPinError) as err:
        load_draco(environ=no_shared_copy)
    assert SHA256 in str(err.value) and sha256_hex(drifted.read_bytes()) in str(err.value)
    assert "test.jsonl" in str(err.value)
    cache = Path(no_shared_copy["BENCH_HOME"]) / "cache" / "draco"
    assert list(cache.iterdir()) == []


def test_a_failed_download_names_the_source(no_shared_copy, monkeypatch):
    import huggingface_hub

    def offline(*args, **kwargs):
        raise OSError("network is unreachable")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", offline)
    with pytest.raises(DatasetPinError, match=r"perplexity-ai/draco.*download failed.*unreachable"):
        load_draco(environ=no_shared_copy)


# --- user rubric files -------------------------------------------------------------------------


def _row(item_id="t1", answer=None, **overrides) -> dict:
    rubric = answer or {
        "id": "demo",
        "sections": [
            {
                "id": "factual-accuracy",
                "title": "Factual Accuracy",
                "criteria": [
                    {"requirement": "Says x", "id": "c1", "weight": 10},
                    {"id": "c2", "weight": -5, "requirement": "Claims y"},
                ],
            },
            {
                "id": "citation-quality",
                "title": "Citation Quality",
                "criteria": [{"id": "c3", "weight": 4, "requirement": "Cites z"}],
            },
        ],
    }
    return {"id": item_id, "problem": "Explain x.", "answer": rubric, "domain": "Demo", **overrides}


def _write(path: Path, rows: list[dict], *, double_encode: bool = True) -> Path:
    lines = []
    for row in rows:
        if double_encode and isinstance(row.get("answer"), dict):
            row = {**row, "answer": json.dumps(row["answer"])}
        lines.append(json.dumps(row))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_user_rubric_file_in_both_answer_encodings(tmp_path):
    double = _write(tmp_path / "my-tasks.jsonl", [_row("a"), _row("b")])
    single = _write(tmp_path / "mine.jsonl", [_row("a"), _row("b")], double_encode=False)
    one, two = load_rubric_tasks(double), load_rubric_tasks(single)
    assert one.tasks == two.tasks
    assert (one.name, one.sha256, one.revision) == (
        "my-tasks",
        sha256_hex(double.read_bytes()),
        None,
    )
    assert two.name == "mine" and load_rubric_tasks(single, name="x").name == "x"
    task = one.tasks[1]
    assert (task.item_id, task.position, task.rubric_id) == ("b", 1, "demo")
    assert [(c.criterion_id, c.axis, c.position, c.weight) for c in task.criteria] == [
        ("c1", "factual-accuracy", 0, 10),
        ("c2", "factual-accuracy", 1, -5),
        ("c3", "citation-quality", 2, 4),
    ]
    assert task.positive_weight == 14 and task.criteria[1].least_favourable_met is True


def test_the_official_file_is_not_a_user_set(draco_file):
    with pytest.raises(RubricFormatError, match="official DRACO"):
        load_rubric_tasks(draco_file)


@pytest.mark.parametrize(
    ("mutate", "field", "problem"),
    [
        (lambda r: r.pop("problem"), "'problem'", "missing"),
        (lambda r: r.update(domain=""), "'domain'", "non-empty text"),
        (lambda r: r.update(answer="{not json"), "'answer'", "not a JSON-encoded rubric"),
        (lambda r: r.update(answer=[1]), "'answer'", "expected a JSON object"),
        (lambda r: r["answer"].update(sections=[]), "'answer.sections'", "non-empty list"),
        (
            lambda r: r["answer"]["sections"][1]["criteria"][0].update(weight="4"),
            "'answer.sections[1].criteria[0].weight'",
            "non-zero integer",
        ),
        (
            lambda r: r["answer"]["sections"][0]["criteria"][1].update(weight=0),
            "'answer.sections[0].criteria[1].weight'",
            "non-zero integer",
        ),
        (
            lambda r: r["answer"]["sections"][0]["criteria"][0].update(weight=True),
            "'answer.sections[0].criteria[0].weight'",
            "non-zero integer",
        ),
        (
            lambda r: r["answer"]["sections"][1]["criteria"][0].pop("requirement"),
            "'answer.sections[1].criteria[0].requirement'",
            "missing",
        ),
        (
            lambda r: r["answer"]["sections"][1]["criteria"][0].update(id="c1"),
            "'answer.sections[1].criteria[0].id'",
            "duplicate criterion id 'c1'",
        ),
        (
            lambda r: r["answer"]["sections"][0].pop("title"),
            "'answer.sections[0].title'",
            "missing",
        ),
    ],
)
def test_a_bad_row_names_file_line_and_field(tmp_path, mutate, field, problem):
    bad = _row("bad")
    mutate(bad)
    path = _write(tmp_path / "tasks.jsonl", [_row("good"), bad])
    with pytest.raises(RubricFormatError) as err:
        load_rubric_tasks(path)
    message = str(err.value)
    assert message.startswith(f"{path}: line 2: field {field}: "), message
    assert problem in message


def test_file_level_errors(tmp_path):
    dup = _write(tmp_path / "dup.jsonl", [_row("a"), _row("b"), _row("a")])
    with pytest.raises(
        RubricFormatError, match=r"line 3: field 'id': duplicate task id 'a' \(first on line 1\)"
    ):
        load_rubric_tasks(dup)
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(_row("a")) + "\n{oops\n")
    with pytest.raises(RubricFormatError, match=r"broken.jsonl: line 2: not valid JSON"):
        load_rubric_tasks(broken)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    with pytest.raises(RubricFormatError, match="no tasks"):
        load_rubric_tasks(empty)
    with pytest.raises(RubricFormatError, match="not found"):
        load_rubric_tasks(tmp_path / "missing.jsonl")
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"id": "\xe9"}\n')
    with pytest.raises(RubricFormatError, match="not UTF-8"):
        load_rubric_tasks(latin)


def test_registration_payloads_and_dataset_ref(draco):
    payloads = registration_payloads(draco)
    tasks = [p for p in payloads if isinstance(p, RubricTaskRegistered)]
    criteria = [p for p in payloads if isinstance(p, RubricCriterionRegistered)]
    assert (len(tasks), len(criteria), len(payloads)) == (100, 3934, 4034)
    first = tasks[0]
    assert first.item_id == "0c2c668a-c3bf-41af-93c9-b5614ff63508"
    assert (first.dataset_sha256, first.position, first.criteria_count) == (SHA256, 0, 53)
    assert payloads[1] == criteria[0] and criteria[0].item_id == first.item_id
    assert len({p.natural_key_values() for p in criteria}) == 3934
    subset = registration_payloads(draco, draco.tasks[:2])
    assert len(subset) == 2 + 53 + len(draco.tasks[1].criteria)
    ref = dataset_ref(draco)
    assert (ref.name, ref.sha256, ref.item_count, ref.revision) == (
        "draco",
        SHA256,
        100,
        dataset.HF_REVISION,
    )
