"""An inspect_ai eval log written by inspect_ai itself, for tests of `--format inspect`: its mock
model (`mockllm/model`) answers real questions from a table (right, wrong, "I don't know" in
turn, with set token usage), the last question's solver fails (a sample with an error), and one
of two scorers grades:

* `match` — inspect's own `match()` (values C / I), no grader model;
* `simpleqa` — a scorer named `simpleqa_scorer` that stores a grader-role model's A/B/C letter
  as inspect_evals' original SimpleQA scorer does (a dict value), the grader `mockllm/grader`.

With `prices` ({model: (USD per million input tokens, per million output tokens)}) the mock
models are registered with that cost (`set_model_info`, removed afterwards), so inspect itself
writes each call's `usage.total_cost`.

About 1 s per log once inspect_ai is imported (its import takes a few seconds). inspect's traces
and sample buffers go under `directory` (XDG_DATA_HOME), and its root log handler is removed
afterwards. Usage: `write_inspect_log(tmp_path / "logs", questions[:6])` -> the log's path; then
`bench import qa-results PATH --format inspect --lane NAME`."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Literal

import pytest

ABSTENTION = "I don't know"


def write_inspect_log(
    directory: Path,
    questions,
    *,
    scorer: Literal["match", "simpleqa"] = "match",
    log_format: Literal["eval", "json"] = "eval",
    fail_last: bool = True,
    prices: dict[str, tuple[float, float]] | None = None,
) -> Path:
    """The path of one finished log (`<directory>/<timestamp>_simpleqa-<scorer>_<id>.<format>`)
    over `questions` (QaQuestion: problem, gold_answer), in their order."""
    root = logging.getLogger()
    handlers = list(root.handlers)
    try:
        with pytest.MonkeyPatch.context() as patch:  # inspect's traces, buffers: not in $HOME
            patch.setenv("XDG_DATA_HOME", str(directory / ".inspect-data"))
            return _write(directory, questions, scorer, log_format, fail_last, prices or {})
    finally:
        for handler in set(root.handlers) - set(handlers):  # inspect's trace handler: not for
            root.removeHandler(handler)  # the tests that run after this one in this process


def _write(
    directory: Path,
    questions,
    scorer_name: str,
    log_format: str,
    fail_last: bool,
    prices: dict[str, tuple[float, float]],
) -> Path:
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import (
        ModelCost,
        ModelInfo,
        ModelOutput,
        ModelUsage,
        get_model,
        set_model_info,
    )
    from inspect_ai.model._model_info import clear_model_info_cache
    from inspect_ai.scorer import Score, match, metric, scorer
    from inspect_ai.solver import generate, solver

    answers = {
        q.problem: (q.gold_answer, "Somebody else", ABSTENTION)[i % 3]
        for i, q in enumerate(questions)
    }

    def answer(input, tools, tool_choice, config):
        # usage set: without it mockllm counts tokens with tiktoken, which downloads encodings
        text = answers[input[-1].text]
        tokens = (len(input[-1].text), len(text))
        usage = ModelUsage(
            input_tokens=tokens[0], output_tokens=tokens[1], total_tokens=sum(tokens)
        )
        return ModelOutput.from_content(model="mockllm/model", content=text).model_copy(
            update={"usage": usage}
        )

    def grade(input, tools, tool_choice, config):
        gold, given = input[-1].text.split("GOLD: ", 1)[1].split("\nANSWER: ", 1)
        letter = "A" if given == gold else "C" if given == ABSTENTION else "B"
        return ModelOutput.from_content(model="mockllm/grader", content=letter).model_copy(
            update={"usage": ModelUsage(input_tokens=9, output_tokens=1, total_tokens=10)}
        )

    @metric
    def correct():  # inspect_evals' simpleqa_metric()["correct"]
        def mean(scores):
            return sum(getattr(s, "score", s).as_dict()["correct"] for s in scores) / len(scores)

        return mean

    @scorer(metrics=[correct()])
    def simpleqa_scorer():
        async def score(state, target):
            reply = await get_model(role="grader").generate(
                f"QUESTION: {state.input_text}\nGOLD: {target.text}\nANSWER: "
                + state.output.completion
            )
            letter = reply.completion.strip()
            return Score(
                value={
                    "correct": float(letter == "A"),
                    "incorrect": float(letter == "B"),
                    "not_attempted": float(letter not in ("A", "B")),
                },
                answer=state.output.completion,
            )

        return score

    failing = questions[-1].problem if fail_last else None

    @solver
    def fail_on_last():
        async def solve(state, generate):
            if state.input_text == failing:
                raise RuntimeError("provider timed out")
            return state

        return solve

    grader = scorer_name == "simpleqa"
    for model, (per_input, per_output) in prices.items():
        cost = ModelCost(
            input=per_input, output=per_output, input_cache_write=0, input_cache_read=0
        )
        set_model_info(model, ModelInfo(cost=cost))
    try:
        (log,) = eval(
            Task(
                dataset=[
                    Sample(input=q.problem, target=q.gold_answer, id=i)
                    for i, q in enumerate(questions)
                ],
                solver=[fail_on_last(), generate()],
                scorer=simpleqa_scorer() if grader else match(),
                name=f"simpleqa_{scorer_name}",
            ),
            model=get_model("mockllm/model", custom_outputs=answer),
            model_roles={"grader": get_model("mockllm/grader", custom_outputs=grade)}
            if grader
            else None,
            log_dir=str(directory),
            log_format=log_format,
            display="none",
            fail_on_error=False,  # the failing sample is recorded with its error; the eval finishes
        )
    finally:
        if prices:
            clear_model_info_cache()  # the registry is process-wide
    assert log.status == "success", log.error
    return Path(log.location)
