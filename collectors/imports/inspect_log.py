"""`bench import qa-results LOG --format inspect`: an inspect_ai eval log (`.eval` or `.json`)
read through inspect_ai's own log API (`inspect_ai.log.read_eval_log`, checked against
inspect_ai 0.3.285; the optional extra `bench-warehouse[inspect]` pins it), as per-question QA
rows of one import run.

Per sample: the question is its `input` (the text, or the first user message), the answer its
`output.completion`, the grade its score from the log's first scorer (`results.scores[0]`, the
task's primary scorer). Score values as inspect_evals' SimpleQA scorers write them
(inspect_evals 0.26.0, `simpleqa/scorer.py`):

* `simpleqa_schema_tool_scorer` (the default "tool" scorer) and inspect's own `match()` /
  `includes()` / `model_graded_qa()`: the value constants `C` (CORRECT) / `I` (INCORRECT) /
  `N` (NOANSWER = not attempted); `NaN` (`Score.unscored()`, a grader failure) = not graded;
* `simpleqa_scorer` (`-T scorer=original`): a dict `{"correct": 1.0, "incorrect": 0.0,
  "not_attempted": 0.0}`;
* also the words `correct` / `incorrect` / `not_attempted` and the numbers 1 / 0.

A sample with an `error` is a failed row (the harness's request did not land). What the
evaluated model spent answering comes from the sample's model events without a role (a scorer's
grader model has role `grader`): input / output tokens and the model's working time, the row's
latency. The grader regime is `imported:inspect:<scorer>:<grader model>` (the model of the
log's `grader` role, when the log binds one), or `--grader-label`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from collectors.imports.source_file import FileProblems, ImportFormatError, SourceFile, kind
from warehouse.canonical import sha256_hex
from warehouse.events import LlmCallRecord

INSTALL_HINT = "pip install 'bench-warehouse[inspect]'"
# inspect's value constants (inspect_ai.scorer: CORRECT "C", INCORRECT "I", NOANSWER "N"); the
# SimpleQA letters are A / B / C, so an inspect "C" is a SimpleQA "A"
INSPECT_GRADES = {
    "c": "A",
    "i": "B",
    "n": "C",
    "correct": "A",
    "incorrect": "B",
    "not_attempted": "C",
    "noanswer": "C",
}
DICT_GRADES = (("correct", "A"), ("incorrect", "B"), ("not_attempted", "C"))


@dataclass
class InspectSample:
    question: str
    answer: str
    grade: str | None
    error: str | None
    latency_s: float | None
    llm: LlmCallRecord | None
    cost_usd: float | None  # inspect's total_cost of the evaluated model's calls


@dataclass
class InspectLog:
    samples: list[InspectSample]
    scorer: str
    grader_model: str | None
    header: dict[str, Any]


def read_inspect_log(source: SourceFile):
    """The EvalLog, through inspect_ai's own reader (the extra must be installed)."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise ImportFormatError(
            f"{source.path}: --format inspect reads logs with inspect_ai, which is not "
            f"installed: {INSTALL_HINT}"
        ) from None
    try:
        return read_eval_log(str(source.path))
    except Exception as exc:  # inspect raises its own, zip and pydantic errors alike
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ImportFormatError(
            f"{source.path}: not an inspect eval log (.eval or .json) inspect_ai can read: "
            f"{first[:200]}"
        ) from None


def inspect_grade(value: Any) -> str | None:
    """A / B / C from an inspect score value, None = not graded; raises ValueError."""
    if isinstance(value, dict):
        hits = [letter for key, letter in DICT_GRADES if value.get(key) in (1, 1.0, True)]
        if len(hits) == 1 and set(value) <= {key for key, _ in DICT_GRADES}:
            return hits[0]
        raise ValueError(
            "expected a SimpleQA dict with one of correct / incorrect / not_attempted at 1.0, "
            f"got {kind(value)}"
        )
    if isinstance(value, bool):
        return "A" if value else "B"
    if isinstance(value, int | float):
        if math.isnan(value):
            return None  # Score.unscored(): the grader failed to grade
        if value in (0, 1):
            return "A" if value == 1 else "B"
    if isinstance(value, str) and value.strip().lower() in INSPECT_GRADES:
        return INSPECT_GRADES[value.strip().lower()]
    raise ValueError(
        "expected a grade C / I / N (inspect's CORRECT / INCORRECT / NOANSWER), "
        f"correct / incorrect / not_attempted, 1 / 0 or a SimpleQA dict, got {kind(value)}"
    )


def _question(sample: Any) -> str | None:
    value = sample.input
    if isinstance(value, str):
        return value
    for message in value or []:
        if getattr(message, "role", None) == "user":
            return message.text
    return None


def _answering(sample: Any, evaluated_model: str):
    """(input tokens, output tokens, cost, working seconds) of the evaluated model's own calls:
    its model events without a role; without events, its entry of `model_usage` when no role
    shares it."""
    from inspect_ai.event import ModelEvent

    calls = [e for e in sample.events or [] if isinstance(e, ModelEvent) and e.role is None]
    usages = [e.output.usage for e in calls if e.output is not None and e.output.usage]
    seconds = [e.working_time for e in calls if e.working_time is not None]
    if not calls and not sample.role_usage:
        usage = (sample.model_usage or {}).get(evaluated_model)
        usages = [usage] if usage is not None else []

    def total(name: str) -> Any:
        values = [getattr(u, name) for u in usages if getattr(u, name) is not None]
        return sum(values) if values else None

    return (
        total("input_tokens"),
        total("output_tokens"),
        total("total_cost"),
        sum(seconds) if seconds else None,
    )


def _finite(value: Any) -> Any:
    """A metric as JSON can hold it (inspect writes NaN for a metric of no scored sample)."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    return None if isinstance(value, float) and not math.isfinite(value) else value


def parse_inspect_log(source: SourceFile) -> InspectLog:
    log = read_inspect_log(source)
    where = source.path
    if log.status != "success":
        why = f" ({log.error.message[:200]})" if log.error else ""
        raise ImportFormatError(
            f"{where}: field status: the eval is {log.status!r}{why}; import a finished log"
        )
    epochs = log.eval.config.epochs or 1
    if epochs != 1:
        raise ImportFormatError(
            f"{where}: field eval.config.epochs: {epochs} epochs; a QA import takes one answer "
            "per question (run with epochs=1)"
        )
    scores = log.results.scores if log.results else []
    if not scores:
        failed = [sample for sample in log.samples or [] if sample.error]
        if failed and len(failed) == len(log.samples):  # inspect scores no errored sample
            raise ImportFormatError(
                f"{where}: field results.scores: no sample was scored: all {len(failed)} "
                f"failed (the first: {failed[0].error.message[:200]}); import a log with at "
                "least one scored sample"
            )
        raise ImportFormatError(f"{where}: field results.scores: the log has no scorer")
    scorer = scores[0].name
    if not log.samples:
        raise ImportFormatError(f"{where}: field samples: the log holds no samples")
    roles = log.eval.model_roles or {}
    grader_model = roles["grader"].model if "grader" in roles else None
    evaluated = log.eval.model
    problems = FileProblems(source.path)
    samples = []
    for index, sample in enumerate(log.samples):
        field = f"samples[{index}] (id {sample.id})"
        question = _question(sample)
        if not question or not question.strip():
            problems.add(
                None, f"{field}.input", f"expected the question text, got {kind(question)}"
            )
            continue
        error = sample.error.message if sample.error else None
        score = (sample.scores or {}).get(scorer)
        grade = None
        if score is None and error is None:
            problems.add(None, f"{field}.scores.{scorer}", "missing (the sample was not scored)")
            continue
        if score is not None and error is None:
            try:
                grade = inspect_grade(score.value)
            except ValueError as exc:
                problems.add(None, f"{field}.scores.{scorer}.value", str(exc))
                continue
        completion = sample.output.completion if sample.output else ""
        input_tokens, output_tokens, cost, seconds = _answering(sample, evaluated)
        llm = None
        if error is None:
            llm = LlmCallRecord(
                provider=evaluated.split("/", 1)[0],
                model=evaluated,
                prompt_id=f"inspect:{log.eval.task}",
                prompt_sha256=sha256_hex(question.encode()),
                raw_completion=completion,
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                latency_ms=None if seconds is None else seconds * 1000,
            )
        samples.append(
            InspectSample(
                question=question,
                answer=completion,
                grade=grade,
                error=(error or "")[:500] or None,
                latency_s=seconds,
                llm=llm,
                cost_usd=cost,
            )
        )
    problems.check()
    header = {
        "task": log.eval.task,
        "model": evaluated,
        "scorer": scorer,
        "metrics": {name: _finite(m.value) for name, m in scores[0].metrics.items()},
        "total_samples": log.results.total_samples,
        "completed_samples": log.results.completed_samples,
        "eval_id": log.eval.eval_id,
        "inspect_ai": (log.eval.packages or {}).get("inspect_ai"),
    }
    if grader_model:
        header["grader_model"] = grader_model
    return InspectLog(samples=samples, scorer=scorer, grader_model=grader_model, header=header)
