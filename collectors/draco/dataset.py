"""Rubric task sets: the pinned DRACO test split, and the user's own files in the same shape.

DRACO (methodology §1.1) is used only when its bytes hash to the pinned sha256 (§5.3: mirrors
drift, and upstream has a schema-changing PR). Where the bytes come from, in order:

1. an explicit path (`--dataset-file`): refused unless it is the pinned file, or the caller
   passes `allow_unpinned=True` (then the set is named `draco-unpinned-<sha12>` and its real
   sha256 is recorded, so it can never pass for the published benchmark);
2. the shared copy beside the repo: `$BENCH_DATA_DIR/draco/test.jsonl`, else
   `../shared/data/draco/test.jsonl` (the variable `bench.settings.shared_data_dir` reads);
3. the cache under the data root: `$BENCH_HOME/cache/draco/<sha16>-test.jsonl`;
4. a download from Hugging Face at the pinned revision into that cache, verified before the
   file becomes visible.

A row is `{"id", "problem", "answer", "domain"}`; `answer` is the rubric as a JSON *string*
(double-encoded; a user's file may give the object itself). Rubric
`{id, sections: [{id, title, criteria: [{id, weight, requirement}]}]}`; key order is never
relied on. Texts hold no NUL byte and stay under `collectors.user_text.MAX_TEXT_BYTES`; a
rubric needs at least one positive criterion. A bad row raises `RubricFormatError` naming the
file, line and field, before any event is written.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from collectors.draco.model import Criterion, RubricTask, RubricTaskSet
from collectors.pinned import PinError
from collectors.user_text import text_problem
from warehouse import bounded_json
from warehouse.canonical import sha256_hex
from warehouse.events import (
    MAX_RUBRIC_WEIGHT,
    DatasetRef,
    Payload,
    RubricCriterionRegistered,
    RubricTaskRegistered,
)
from warehouse.paths import BenchPaths

NAME = "draco"
HF_REPO = "perplexity-ai/draco"
HF_REVISION = "ce076749809027649ebd331bcb70f42bf720d387"
FILE_NAME = "test.jsonl"
SHA256 = "e35bfe78cd827fa1d541b79fbc7bc7b91966d3227d8742c83e99d26d4ac4679a"
URI = f"hf://datasets/{HF_REPO}@{HF_REVISION}/{FILE_NAME}"
TASK_COUNT = 100
DATA_DIR_ENV = "BENCH_DATA_DIR"
UNPINNED_PREFIX = "draco-unpinned"

REPO_ROOT = Path(__file__).resolve().parents[2]


class RubricFormatError(ValueError):
    """A rubric task file is unusable; the message names the file, line and field."""


class DatasetPinError(PinError):
    """The DRACO bytes are not the pinned ones (or could not be fetched)."""


# --- where the pinned file comes from ---------------------------------------------------------


def shared_copy_path(environ: Mapping[str, str] = os.environ) -> Path:
    root = environ.get(DATA_DIR_ENV) or REPO_ROOT.parent / "shared" / "data"
    return Path(root).expanduser() / NAME / FILE_NAME


def cached_path(cache_dir: Path) -> Path:
    return Path(cache_dir) / NAME / f"{SHA256[:16]}-{FILE_NAME}"


def _mismatch(path: Path | str, actual: str) -> DatasetPinError:
    return DatasetPinError(
        f"{path}: sha256 {actual} does not match the pinned DRACO {FILE_NAME} ({SHA256}, "
        f"{HF_REPO}@{HF_REVISION[:12]}); refusing a drifted or modified copy. To run your own "
        "rubric tasks, load them as a rubric task set instead."
    )


def download_draco(dest: Path) -> Path:
    """Fetch the pinned file from Hugging Face into `dest`, verified, atomically renamed.

    `huggingface_hub` downloads into a scratch directory beside `dest` (never the user's
    global HF cache), so a failed or mismatched download leaves nothing behind."""
    from huggingface_hub import hf_hub_download  # heavy import, only when downloading

    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{dest.name}.download-", dir=dest.parent))
    try:
        try:
            fetched = hf_hub_download(
                HF_REPO,
                FILE_NAME,
                repo_type="dataset",
                revision=HF_REVISION,
                local_dir=scratch,
            )
        except Exception as exc:  # the hub raises many types (HTTP, offline, OS errors)
            raise DatasetPinError(
                f"hf://datasets/{HF_REPO}@{HF_REVISION}/{FILE_NAME}: download failed "
                f"({type(exc).__name__}: {exc})"
            ) from exc
        data = Path(fetched).read_bytes()
        actual = sha256_hex(data)
        if actual != SHA256:
            raise DatasetPinError(
                f"{URI}: downloaded {FILE_NAME} has sha256 {actual}, not the pinned {SHA256}; "
                "refusing it (nothing was written)"
            )
        partial = scratch / f"{dest.name}.partial"
        partial.write_bytes(data)
        partial.replace(dest)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return dest


def load_draco(
    path: Path | None = None,
    *,
    environ: Mapping[str, str] = os.environ,
    cache_dir: Path | None = None,
    allow_unpinned: bool = False,
) -> RubricTaskSet:
    """The DRACO test split, verified against the pin (see the module docstring for the order).

    `cache_dir` defaults to `BenchPaths(BENCH_HOME).cache_dir` read from `environ`."""
    if path is not None:
        path = Path(path).expanduser()
        if not path.is_file():
            raise RubricFormatError(f"{path}: not found (expected DRACO's {FILE_NAME})")
        data = path.read_bytes()
        actual = sha256_hex(data)
        if actual != SHA256:
            if not allow_unpinned:
                raise _mismatch(path, actual)
            return RubricTaskSet(
                name=f"{UNPINNED_PREFIX}-{actual[:12]}",
                uri=str(path.resolve()),
                sha256=actual,
                revision=None,
                tasks=parse_rubric_jsonl(data, path),
            )
        return _pinned_set(data, path)

    shared = shared_copy_path(environ)
    if shared.is_file():
        data = shared.read_bytes()
        actual = sha256_hex(data)
        if actual != SHA256:
            raise _mismatch(shared, actual)
        return _pinned_set(data, shared)

    if cache_dir is None:
        cache_dir = BenchPaths.from_env(environ.get("BENCH_HOME") or ".bench").cache_dir
    cached = cached_path(cache_dir)
    if not cached.is_file():
        download_draco(cached)
    data = cached.read_bytes()
    actual = sha256_hex(data)
    if actual != SHA256:
        raise _mismatch(cached, actual)
    return _pinned_set(data, cached)


def _pinned_set(data: bytes, path: Path) -> RubricTaskSet:
    tasks = parse_rubric_jsonl(data, path)
    if len(tasks) != TASK_COUNT:  # cannot happen for the pinned bytes; guards the parser
        raise RubricFormatError(f"{path}: {len(tasks)} tasks, expected {TASK_COUNT}")
    return RubricTaskSet(name=NAME, uri=URI, sha256=SHA256, revision=HF_REVISION, tasks=tasks)


# --- the user's own rubric tasks ---------------------------------------------------------------


def load_rubric_tasks(path: Path, *, name: str | None = None) -> RubricTaskSet:
    """A user's rubric task file (DRACO's JSONL shape), pinned by the sha256 of its bytes.

    The name defaults to the file stem. The official DRACO file is refused here: run it as
    DRACO, so its scores carry the benchmark's name and revision."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise RubricFormatError(f"{path}: not found (expected a .jsonl rubric task file)")
    data = path.read_bytes()
    digest = sha256_hex(data)
    if digest == SHA256:
        raise RubricFormatError(
            f"{path}: this is the official DRACO test split; run it as the draco benchmark "
            "(--dataset-file), not as a user rubric task set"
        )
    return RubricTaskSet(
        name=name or path.stem,
        uri=str(path.resolve()),
        sha256=digest,
        revision=None,
        tasks=parse_rubric_jsonl(data, path),
    )


# --- parsing ---------------------------------------------------------------------------------


class _Row:
    """Field access for one row that names file, line and field in every error."""

    def __init__(self, source: Path | str, line: int):
        self.source = source
        self.line = line

    def error(self, field: str, problem: str) -> RubricFormatError:
        return RubricFormatError(f"{self.source}: line {self.line}: field {field!r}: {problem}")

    def mapping(self, value: Any, field: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(field, f"expected a JSON object, got {_kind(value)}")
        return value

    def text(self, obj: dict[str, Any], key: str, field: str) -> str:
        if key not in obj:
            raise self.error(f"{field}{key}", "missing")
        value = obj[key]
        if not isinstance(value, str) or not value.strip():
            raise self.error(f"{field}{key}", f"expected non-empty text, got {_kind(value)}")
        problem = text_problem(value)
        if problem is not None:
            raise self.error(f"{field}{key}", problem)
        return value

    def items(self, obj: dict[str, Any], key: str, field: str) -> list[Any]:
        value = obj.get(key)
        if not isinstance(value, list) or not value:
            raise self.error(f"{field}{key}", f"expected a non-empty list, got {_kind(value)}")
        return value


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        return "empty text" if not value.strip() else f"text {value[:40]!r}"
    return f"{type(value).__name__} {json.dumps(value)[:40]}"


def parse_rubric_jsonl(data: bytes, source: Path | str) -> tuple[RubricTask, ...]:
    """Every row of a rubric JSONL file, in file order; blank and `#` comment lines are skipped."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RubricFormatError(f"{source}: not UTF-8 (byte {exc.start})") from None
    tasks: list[RubricTask] = []
    first_line: dict[str, int] = {}
    for line_number, line in enumerate(text.split("\n"), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue  # blank, or a comment (bench init's template explains the fields)
        row = _Row(source, line_number)
        try:
            record = bounded_json.loads(line)
        except json.JSONDecodeError as exc:
            raise RubricFormatError(
                f"{source}: line {line_number}: not valid JSON ({exc.msg}, column {exc.colno})"
            ) from None
        task = _parse_task(row, record, position=len(tasks))
        if task.item_id in first_line:
            raise row.error(
                "id",
                f"duplicate task id {task.item_id!r} (first on line {first_line[task.item_id]})",
            )
        first_line[task.item_id] = line_number
        tasks.append(task)
    if not tasks:
        raise RubricFormatError(f"{source}: no tasks (expected one JSON object per line)")
    return tuple(tasks)


def _parse_task(row: _Row, record: Any, *, position: int) -> RubricTask:
    record = row.mapping(record, "(row)")
    item_id = row.text(record, "id", "").strip()
    problem = row.text(record, "problem", "")
    domain = row.text(record, "domain", "").strip()
    if "answer" not in record:
        raise row.error("answer", "missing (expected the rubric)")
    answer = record["answer"]
    if isinstance(answer, str):  # DRACO's double encoding: the rubric is a JSON string
        try:
            answer = bounded_json.loads(answer)
        except json.JSONDecodeError as exc:
            raise row.error(
                "answer", f"not a JSON-encoded rubric ({exc.msg}, column {exc.colno})"
            ) from None
    rubric = row.mapping(answer, "answer")
    rubric_id = row.text(rubric, "id", "answer.").strip()
    criteria: list[Criterion] = []
    seen: set[str] = set()
    for s, section_value in enumerate(row.items(rubric, "sections", "answer.")):
        where = f"answer.sections[{s}]."
        section = row.mapping(section_value, where.rstrip("."))
        axis = row.text(section, "id", where).strip()
        axis_title = row.text(section, "title", where).strip()
        for c, criterion_value in enumerate(row.items(section, "criteria", where)):
            at = f"{where}criteria[{c}]."
            criterion = row.mapping(criterion_value, at.rstrip("."))
            criterion_id = row.text(criterion, "id", at).strip()
            if criterion_id in seen:
                raise row.error(
                    f"{at}id", f"duplicate criterion id {criterion_id!r} in this rubric"
                )
            seen.add(criterion_id)
            weight = criterion.get("weight")
            # bool is an int in Python; a weight of 0 would be a criterion that cannot count.
            if isinstance(weight, bool) or not isinstance(weight, int) or weight == 0:
                raise row.error(f"{at}weight", f"expected a non-zero integer, got {_kind(weight)}")
            if abs(weight) > MAX_RUBRIC_WEIGHT:
                raise row.error(
                    f"{at}weight",
                    f"expected a weight within ±{MAX_RUBRIC_WEIGHT} (DRACO's own lie in -500..20), "
                    f"got {weight}",
                )
            criteria.append(
                Criterion(
                    criterion_id=criterion_id,
                    axis=axis,
                    axis_title=axis_title,
                    position=len(criteria),
                    weight=weight,
                    requirement=row.text(criterion, "requirement", at),
                )
            )
    if all(criterion.weight < 0 for criterion in criteria):
        # DRACO scores max(0, raw / P) with P the positive weights' sum: with P = 0 every
        # response scores 0, whatever it says (methodology §1.3; no DRACO task is like this).
        raise row.error(
            "answer.sections[].criteria[].weight",
            f"all {len(criteria)} criteria are penalties (negative weights): the task could "
            "only ever score 0; give it at least one positive criterion",
        )
    return RubricTask(
        item_id=item_id,
        position=position,
        domain=domain,
        problem=problem,
        rubric_id=rubric_id,
        criteria=tuple(criteria),
    )


# --- events ----------------------------------------------------------------------------------


def dataset_ref(task_set: RubricTaskSet) -> DatasetRef:
    return DatasetRef(
        name=task_set.name,
        uri=task_set.uri,
        sha256=task_set.sha256,
        item_count=len(task_set.tasks),
        revision=task_set.revision,
    )


def task_payloads(task: RubricTask, dataset_sha256: str) -> list[Payload]:
    """One RubricTaskRegistered, then one RubricCriterionRegistered per criterion in order."""
    payloads: list[Payload] = [
        RubricTaskRegistered(
            item_id=task.item_id,
            dataset_sha256=dataset_sha256,
            position=task.position,
            domain=task.domain,
            problem=task.problem,
            rubric_id=task.rubric_id,
            criteria_count=len(task.criteria),
        )
    ]
    payloads.extend(
        RubricCriterionRegistered(
            item_id=task.item_id,
            criterion_id=c.criterion_id,
            axis=c.axis,
            axis_title=c.axis_title,
            position=c.position,
            weight=c.weight,
            requirement=c.requirement,
        )
        for c in task.criteria
    )
    return payloads


def registration_payloads(
    task_set: RubricTaskSet, tasks: tuple[RubricTask, ...] | None = None
) -> list[Payload]:
    """Registration events for `tasks` (default: every task of the set), in file order."""
    chosen = task_set.tasks if tasks is None else tasks
    return [p for task in chosen for p in task_payloads(task, task_set.sha256)]
