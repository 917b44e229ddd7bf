"""Parsers for published DRACO results: Valyu grading / inference files, Nimble results, long CSV.

Each parser returns a `ParsedResults` whose verdicts are already joined to the task's rubric
criteria, or raises `ImportFormatError` naming the file, record and field. The join rules:

* **valyu** grading (`draco/outputs/full/grading/<system>.eval.json` of valyu-benchmarks): a run's
  `criteria_results[]` carry no id; they are the task's rubric criteria in rubric order with
  the sections flattened (the `rubric` library's `Rubric` built by their `build_rubric`), so the
  join is by position and every position must match the rubric's requirement text *exactly*
  (trailing whitespace included; texts are not unique within a task) and its weight; a count,
  text or weight mismatch is an error naming the task and the position.
* **valyu** inference (`draco/outputs/full/inference/<system>.jsonl`): `{id, problem, domain,
  output, elapsed, provider, model, meta: {sources: [{title, url, snippet}], cost}, error}`;
  the first record of an id wins (their evaluator's rule), later ones are reported as
  duplicates.
* **nimble** (`results/<system>.jsonl` of the Nimble DRACO harness): `{item_id, system, domain,
  error, overall, axes, latency_s, cost_usd, judge_samples, verdicts: [{axis, id, weight,
  requirement, met, why}], answer}`; verdicts carry the criterion id (text and weight are still
  checked), `met` is the met-rate over `judge_samples` samples. The harness appends on resume
  and retries errored items, so the last record without `error` wins, else the last record.
* **csv** (documented in docs/imports.md): `task_id, criterion_position, verdict[, sample,
  justification]`; position is the 0-based place in the flat rubric list, sample defaults to 1;
  every sample present for a task must give exactly one verdict for every criterion.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from collectors.draco.model import Criterion, RubricTask
from collectors.draco.normalize import normalize_report
from collectors.imports.source_file import (
    FileProblems,
    ImportFormatError,
    SourceFile,
    kind,
    located,
    number_or_none,
)
from warehouse import bounded_json
from warehouse.events import ImportedItemFigure, ReportCitation

Format = Literal["valyu", "nimble", "csv"]
FORMATS: tuple[str, ...] = ("valyu", "nimble", "csv")
VALYU_SCORE_KEYS = ("overall_score", "overall_normalized_score")  # file vs their current code


@dataclass(frozen=True)
class CriterionVerdict:
    criterion: Criterion
    verdict: Literal["MET", "UNMET"] | None
    met_rate: float
    samples: int = 1
    justification: str | None = None


@dataclass
class ImportedItem:
    item_id: str
    figure: ImportedItemFigure
    runs: list[list[CriterionVerdict]] = field(default_factory=list)  # judge runs, in order


@dataclass
class InferenceRecord:
    item_id: str
    output: str | None
    citations: list[ReportCitation]
    latency_s: float | None
    provider: str | None
    model: str | None
    cost_usd: float | None
    error: str | None


@dataclass
class ParsedResults:
    format: str
    judge_model: str | None = None
    header: dict[str, Any] = field(default_factory=dict)
    items: list[ImportedItem] = field(default_factory=list)  # graded items (verdicts)
    inference: list[InferenceRecord] = field(default_factory=list)  # research outputs
    unmatched_ids: list[str] = field(default_factory=list)
    duplicate_ids: list[str] = field(default_factory=list)

    @property
    def has_grading(self) -> bool:
        return bool(self.items)


def parse_draco_results(
    source: SourceFile, fmt: str, tasks: dict[str, RubricTask]
) -> ParsedResults:
    if fmt == "valyu":
        # A grading file is one JSON object with `results`; an inference file is JSONL.
        try:
            document = bounded_json.loads(source.text())
        except bounded_json.JsonTooDeep as exc:  # not a sign of JSONL: refuse it here
            raise source.error(f"line {exc.lineno}", exc.msg) from None
        except json.JSONDecodeError:
            document = None
        if isinstance(document, dict) and "results" in document:
            return _valyu_grading(source, document, tasks)
        return _valyu_inference(source, tasks)
    if fmt == "nimble":
        return _nimble(source, tasks)
    if fmt == "csv":
        return _long_csv(source, tasks)
    raise source.error("--format", f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


# --- shared checks ---------------------------------------------------------------------------


def _verdict(value: Any, source: SourceFile, where: str) -> Literal["MET", "UNMET"]:
    if value not in ("MET", "UNMET"):
        raise source.error(f"{where}.verdict", f'expected "MET" or "UNMET", got {kind(value)}')
    return value


def _check_criterion(
    source: SourceFile,
    where: str,
    task: RubricTask,
    position: int,
    requirement: Any,
    weight: Any,
) -> Criterion:
    criterion = task.criteria[position]
    if requirement != criterion.requirement:
        raise source.error(
            where,
            f"task {task.item_id} position {position}: requirement does not match rubric "
            f"criterion {criterion.criterion_id!r} (file {kind(requirement)}, rubric "
            f"{criterion.requirement[:40]!r})",
        )
    if (
        isinstance(weight, bool)
        or not isinstance(weight, int | float)
        or weight != criterion.weight
    ):
        raise source.error(
            where,
            f"task {task.item_id} position {position}: weight {kind(weight)} does not match "
            f"rubric criterion {criterion.criterion_id!r} weight {criterion.weight}",
        )
    return criterion


def _text_or_none(value: Any, source: SourceFile, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise source.error(where, f"expected text or null, got {kind(value)}")
    return value


def _mapping(value: Any, source: SourceFile, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise source.error(where, f"expected a JSON object, got {kind(value)}")
    return value


def _list(value: Any, source: SourceFile, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise source.error(where, f"expected a list, got {kind(value)}")
    return value


def _item_id(record: dict[str, Any], key: str, source: SourceFile, where: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not value.strip():
        raise source.error(f"{where}.{key}", f"expected the DRACO task id, got {kind(value)}")
    return value.strip()


# --- valyu -----------------------------------------------------------------------------------


def _valyu_grading(
    source: SourceFile, document: Any, tasks: dict[str, RubricTask]
) -> ParsedResults:
    document = _mapping(document, source, "(top level)")
    results = _list(document.get("results"), source, "results")
    judge_model = document.get("judge_model")
    if not isinstance(judge_model, str) or not judge_model:
        raise source.error("judge_model", f"expected the judge model id, got {kind(judge_model)}")
    if not any(key in document for key in VALYU_SCORE_KEYS):
        raise source.error("overall_score", "missing (the file's own published figure)")
    header = {key: value for key, value in document.items() if key != "results"}
    parsed = ParsedResults(format="valyu", judge_model=judge_model, header=header)
    seen: set[str] = set()
    problems = FileProblems(source.path)
    for index, value in enumerate(results):
        try:  # every result's first problem, all at once
            _valyu_result(source, index, value, tasks, parsed, seen, problems)
        except ImportFormatError as exc:
            problems.add_error(exc)
    problems.check()
    return parsed


def _valyu_result(
    source: SourceFile,
    index: int,
    value: Any,
    tasks: dict[str, RubricTask],
    parsed: ParsedResults,
    seen: set[str],
    problems: FileProblems,
) -> None:
    where = f"results[{index}]"
    record = _mapping(value, source, where)
    item_id = _item_id(record, "id", source, where)
    if item_id in seen:
        parsed.duplicate_ids.append(item_id)
        return
    seen.add(item_id)
    task = tasks.get(item_id)
    if task is None:
        parsed.unmatched_ids.append(item_id)
        return
    where = f"{where} (task {item_id})"
    runs_value = record.get("runs")
    error = _text_or_none(record.get("error"), source, f"{where}.error")
    runs = [] if runs_value is None and error else _list(runs_value, source, f"{where}.runs")
    item = ImportedItem(
        item_id=item_id,
        figure=ImportedItemFigure(
            item_id=item_id,
            domain=_text_or_none(record.get("domain"), source, f"{where}.domain"),
            score=number_or_none(
                record.get("normalized_score"), source, f"{where}.normalized_score"
            ),
            pass_rate=number_or_none(record.get("pass_rate"), source, f"{where}.pass_rate"),
            latency_s=number_or_none(record.get("elapsed"), source, f"{where}.elapsed"),
            runs=len(runs),
            error=error,
        ),
    )
    for r, run_value in enumerate(runs):
        at = f"{where}.runs[{r}]"
        run = _mapping(run_value, source, at)
        criteria = _list(run.get("criteria_results"), source, f"{at}.criteria_results")
        if len(criteria) != len(task.criteria):
            raise source.error(
                f"{at}.criteria_results",
                f"task {item_id}: {len(criteria)} criteria results, the rubric has "
                f"{len(task.criteria)} criteria (joined by position)",
            )
        verdicts = []
        for position, criterion_value in enumerate(criteria):
            cat = f"{at}.criteria_results[{position}]"
            try:  # every criterion's problem, not only a result's first
                result = _mapping(criterion_value, source, cat)
                criterion = _check_criterion(
                    source, cat, task, position, result.get("requirement"), result.get("weight")
                )
                verdict = _verdict(result.get("verdict"), source, cat)
            except ImportFormatError as exc:
                problems.add_error(exc)
                continue
            verdicts.append(
                CriterionVerdict(
                    criterion=criterion,
                    verdict=verdict,
                    met_rate=1.0 if verdict == "MET" else 0.0,
                    justification=_text_or_none(
                        result.get("explanation"), source, f"{cat}.explanation"
                    ),
                )
            )
        item.runs.append(verdicts)
    parsed.items.append(item)


def _citations(record: dict[str, Any], source: SourceFile, where: str) -> list[ReportCitation]:
    meta = record.get("meta") if isinstance(record.get("meta"), dict) else {}
    sources = record.get("sources", meta.get("sources")) or []
    citations = []
    for s, value in enumerate(_list(sources, source, f"{where}.sources")):
        entry = _mapping(value, source, f"{where}.sources[{s}]")
        url = entry.get("url")
        if not isinstance(url, str) or not url.strip():
            continue  # a source without a URL cannot be cited; the raw record keeps it
        title = entry.get("title")
        citations.append(ReportCitation(url=url, title=title if isinstance(title, str) else ""))
    return citations


def _valyu_inference(source: SourceFile, tasks: dict[str, RubricTask]) -> ParsedResults:
    parsed = ParsedResults(format="valyu")
    seen: set[str] = set()
    problems = FileProblems(source.path)
    for number, record in source.jsonl(problems):
        try:  # every line's first problem, all at once
            where = f"line {number}"
            item_id = _item_id(record, "id", source, where)
            if item_id in seen:
                parsed.duplicate_ids.append(item_id)
                continue
            seen.add(item_id)
            if item_id not in tasks:
                parsed.unmatched_ids.append(item_id)
                continue
            if "output" not in record:
                raise source.error(f"{where}.output", "missing (the report text, or null)")
            meta = record.get("meta") if isinstance(record.get("meta"), dict) else {}
            parsed.inference.append(
                InferenceRecord(
                    item_id=item_id,
                    output=_text_or_none(record.get("output"), source, f"{where}.output"),
                    citations=_citations(record, source, where),
                    latency_s=number_or_none(record.get("elapsed"), source, f"{where}.elapsed"),
                    provider=_text_or_none(record.get("provider"), source, f"{where}.provider"),
                    model=_text_or_none(record.get("model"), source, f"{where}.model"),
                    cost_usd=_cost(meta.get("cost")),
                    error=_text_or_none(record.get("error"), source, f"{where}.error"),
                )
            )
        except ImportFormatError as exc:
            problems.add_error(exc, number)
    problems.check()
    return parsed


_URL_IN_LINE = re.compile(r"(https?://\S+)")


def _own_bibliography(text: str) -> list[ReportCitation]:
    """The harness's own trailing sources block as structured citations, in order: our
    normalizer strips that block and re-appends one built from these, so the citation axis is
    judged on the same uniform bibliography as every other system's."""
    stripped = normalize_report(text, []).stripped_text or ""
    citations = []
    for line in stripped.split("\n"):
        match = _URL_IN_LINE.search(line)
        if match:
            title = line[: match.start()].strip(" -—:[]0123456789.").strip()
            citations.append(ReportCitation(url=match.group(1).rstrip(").,"), title=title))
    return citations


def _cost(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and value >= 0:
        return float(value)
    if isinstance(value, dict):  # some vendors report {"total": ...}
        return _cost(value.get("total"))
    return None


# --- nimble ----------------------------------------------------------------------------------


def _nimble(source: SourceFile, tasks: dict[str, RubricTask]) -> ParsedResults:
    chosen: dict[str, tuple[int, dict[str, Any]]] = {}
    order: list[str] = []
    repeats: list[str] = []
    problems = FileProblems(source.path)
    for number, record in source.jsonl(problems):
        try:
            item_id = _item_id(record, "item_id", source, f"line {number}")
        except ImportFormatError as exc:
            problems.add_error(exc, number)
            continue
        if item_id in chosen:
            repeats.append(item_id)
            if (chosen[item_id][1].get("error") and not record.get("error")) or bool(
                chosen[item_id][1].get("error")
            ) == bool(record.get("error")):
                chosen[item_id] = (number, record)
            continue
        chosen[item_id] = (number, record)
        order.append(item_id)
    parsed = ParsedResults(format="nimble", duplicate_ids=repeats)
    samples_seen: set[int] = set()
    for item_id in order:
        number, record = chosen[item_id]
        where = f"line {number}"
        task = tasks.get(item_id)
        if task is None:
            parsed.unmatched_ids.append(item_id)
            continue
        try:  # every record's first problem, all at once
            _nimble_item(source, where, item_id, task, record, parsed, samples_seen, problems)
        except ImportFormatError as exc:
            problems.add_error(exc, number)
    problems.check()
    parsed.header = {"judge_samples": sorted(samples_seen)} if samples_seen else {}
    return parsed


def _nimble_item(
    source: SourceFile,
    where: str,
    item_id: str,
    task: RubricTask,
    record: dict[str, Any],
    parsed: ParsedResults,
    samples_seen: set[int],
    problems: FileProblems,
) -> None:
    error = _text_or_none(record.get("error"), source, f"{where}.error")
    axes_value = record.get("axes") or {}
    axes = {
        str(axis): float(score)
        for axis, score in _mapping(axes_value, source, f"{where}.axes").items()
        if isinstance(score, int | float) and not isinstance(score, bool)
    }
    samples = record.get("judge_samples") or 1
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise source.error(
            f"{where}.judge_samples", f"expected an integer >= 1, got {kind(samples)}"
        )
    item = ImportedItem(
        item_id=item_id,
        figure=ImportedItemFigure(
            item_id=item_id,
            domain=_text_or_none(record.get("domain"), source, f"{where}.domain"),
            score=number_or_none(record.get("overall"), source, f"{where}.overall"),
            axes=axes,
            latency_s=number_or_none(record.get("latency_s"), source, f"{where}.latency_s"),
            cost_usd=_cost(record.get("cost_usd")),
            runs=0 if error else 1,
            error=error,
        ),
    )
    if not error:
        by_id = {c.criterion_id: c for c in task.criteria}
        verdicts_value = _list(record.get("verdicts"), source, f"{where}.verdicts")
        found: dict[str, CriterionVerdict] = {}
        bad = False
        for v, value in enumerate(verdicts_value):
            at = f"{where}.verdicts[{v}]"
            try:  # every verdict's problem, not only a record's first
                verdict = _mapping(value, source, at)
                criterion_id = verdict.get("id")
                if criterion_id not in by_id:
                    raise source.error(
                        f"{at}.id", f"task {item_id}: no rubric criterion {kind(criterion_id)}"
                    )
                if criterion_id in found:
                    raise source.error(
                        f"{at}.id", f"task {item_id}: criterion {criterion_id!r} twice"
                    )
                criterion = _check_criterion(
                    source,
                    at,
                    task,
                    by_id[criterion_id].position,
                    verdict.get("requirement"),
                    verdict.get("weight"),
                )
                rate = verdict.get("met")
                if isinstance(rate, bool):
                    rate = float(rate)
                if not isinstance(rate, int | float) or not 0 <= rate <= 1:
                    raise source.error(
                        f"{at}.met", f"expected a met rate in [0, 1], got {kind(rate)}"
                    )
            except ImportFormatError as exc:
                problems.add_error(exc, located(where)[0])
                bad = True
                continue
            found[criterion_id] = CriterionVerdict(
                criterion=criterion,
                verdict=("MET" if rate >= 0.5 else "UNMET") if samples == 1 else None,
                met_rate=float(rate),
                samples=samples,
                justification=_text_or_none(verdict.get("why"), source, f"{at}.why"),
            )
        if bad:
            return
        missing = [c.position for c in task.criteria if c.criterion_id not in found]
        if missing:
            raise source.error(
                f"{where}.verdicts",
                f"task {item_id}: no verdict for rubric position(s) {missing[:10]}",
            )
        item.runs.append([found[c.criterion_id] for c in task.criteria])
        samples_seen.add(samples)
    parsed.items.append(item)
    answer = record.get("answer")
    if isinstance(answer, str) or error:
        parsed.inference.append(
            InferenceRecord(
                item_id=item_id,
                output=answer if isinstance(answer, str) and not error else None,
                citations=_own_bibliography(answer) if isinstance(answer, str) else [],
                latency_s=item.figure.latency_s,
                provider=None,
                model=_text_or_none(record.get("system"), source, f"{where}.system"),
                cost_usd=_cost(record.get("cost_usd")),
                error=error,
            )
        )


# --- long csv --------------------------------------------------------------------------------

CSV_REQUIRED = ("task_id", "verdict")
CSV_CRITERION = ("criterion_position", "criterion_id")  # exactly one of them
# latency_s (seconds) and cost_usd (US dollars): the task's report's, the same on each row given
CSV_OPTIONAL = ("sample", "justification", "latency_s", "cost_usd")
TASK_FIGURES = (("latency_s", "latency", "seconds"), ("cost_usd", "cost", "US dollars"))


def _long_csv(source: SourceFile, tasks: dict[str, RubricTask]) -> ParsedResults:
    reader = csv.DictReader(io.StringIO(source.text(), newline=""))
    columns = reader.fieldnames or []
    missing = [c for c in CSV_REQUIRED if c not in columns]
    by = [c for c in CSV_CRITERION if c in columns]
    if missing or len(by) != 1:
        raise source.row_error(
            1,
            None,
            f"expected columns task_id, criterion_position or criterion_id (one of them), "
            f"verdict; the header has {columns[:20]}",
        )
    unknown = [c for c in columns if c not in CSV_REQUIRED + CSV_CRITERION + CSV_OPTIONAL]
    if unknown:
        raise source.row_error(1, None, f"unknown column(s) {unknown}")
    key = by[0]
    problems = FileProblems(source.path)
    cells: dict[str, dict[int, dict[int, tuple[str, str | None]]]] = {}
    # column -> task -> (value, the line that gave it)
    task_figures: dict[str, dict[str, tuple[float, int]]] = {c: {} for c, _, _ in TASK_FIGURES}
    unmatched: list[str] = []
    line = reader.line_num + 1
    for row in reader:
        here, line = line, reader.line_num + 1
        task_id = (row.get("task_id") or "").strip()
        if not task_id:
            problems.add(here, "task_id", "empty")
            continue
        if task_id not in tasks:
            if task_id not in unmatched:
                unmatched.append(task_id)
            continue
        task = tasks[task_id]
        try:
            if key == "criterion_id":
                criterion_id = (row.get("criterion_id") or "").strip()
                by_id = {c.criterion_id: c.position for c in task.criteria}
                if criterion_id not in by_id:
                    raise ValueError(f"task {task_id}: no rubric criterion {kind(criterion_id)}")
                position = by_id[criterion_id]
            else:
                position = _int_cell(row.get("criterion_position"))
                if not 0 <= position < len(task.criteria):
                    raise ValueError(
                        f"task {task_id}: {position} is outside 0..{len(task.criteria) - 1}"
                    )
        except ValueError as exc:
            problems.add(here, key, str(exc))
            continue
        try:
            sample = _int_cell(row.get("sample") or "1")
            if sample < 1:
                raise ValueError(f"expected >= 1, got {sample}")
        except ValueError as exc:
            problems.add(here, "sample", str(exc))
            continue
        figure_ok = True
        for column, name, unit in TASK_FIGURES:
            try:
                value = _number_cell(row.get(column), unit)
            except ValueError as exc:
                problems.add(here, column, str(exc))
                figure_ok = False
                continue
            if value is None:
                continue
            first = task_figures[column].setdefault(task_id, (value, here))
            if first[0] != value:
                problems.add(
                    here,
                    column,
                    f"task {task_id}: {value:g} differs from {first[0]:g} on line {first[1]} "
                    f"(one {name} per task: its report's)",
                )
                figure_ok = False
        if not figure_ok:
            continue
        verdict = (row.get("verdict") or "").strip().upper()
        if verdict not in ("MET", "UNMET"):
            problems.add(
                here, "verdict", f'expected "MET" or "UNMET", got {kind(row.get("verdict"))}'
            )
            continue
        per_sample = cells.setdefault(task_id, {}).setdefault(sample, {})
        if position in per_sample:
            problems.add(
                here, key, f"task {task_id} sample {sample} criterion {row.get(key)!r} twice"
            )
            continue
        per_sample[position] = (verdict, row.get("justification") or None)
    problems.check()
    parsed = ParsedResults(format="csv", unmatched_ids=unmatched)
    incomplete = FileProblems(source.path)
    for task_id, samples in cells.items():
        task = tasks[task_id]
        item = ImportedItem(
            item_id=task_id,
            figure=ImportedItemFigure(
                item_id=task_id,
                domain=task.domain,
                runs=len(samples),
                latency_s=task_figures["latency_s"].get(task_id, (None,))[0],
                cost_usd=task_figures["cost_usd"].get(task_id, (None,))[0],
            ),
        )
        for sample in sorted(samples):
            given = samples[sample]
            absent = [p for p in range(len(task.criteria)) if p not in given]
            if absent:  # a whole-file fact, named by task and sample (no one line has it)
                incomplete.add(
                    None,
                    None,
                    f"task {task_id} sample {sample}: no verdict for criterion position(s) "
                    f"{absent[:10]}",
                )
                continue
            item.runs.append(
                [
                    CriterionVerdict(
                        criterion=criterion,
                        verdict=given[criterion.position][0],  # type: ignore[arg-type]
                        met_rate=1.0 if given[criterion.position][0] == "MET" else 0.0,
                        justification=given[criterion.position][1],
                    )
                    for criterion in task.criteria
                ]
            )
        parsed.items.append(item)
    incomplete.check()
    return parsed


def _number_cell(value: str | None, unit: str) -> float | None:
    if value is None or not value.strip():
        return None
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"expected {unit} (a number), got {kind(value)}") from None
    if not number >= 0 or number == float("inf"):
        raise ValueError(f"expected {unit} >= 0, got {kind(value)}")
    return number


def _int_cell(value: str | None) -> int:
    try:
        return int((value or "").strip())
    except ValueError:
        raise ValueError(f"expected an integer, got {kind(value)}") from None
