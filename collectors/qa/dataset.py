"""The shape every QA question source loads into, and the upstream sampler.

SimpleQA and user question sets both become a `QaDataset`: a pinned `DatasetRef` (sha256 of
the file's bytes) plus questions in file order. Item ids are ours (the upstream file has no id
column): the 0-based row position and the first 16 hex digits of sha256(question), so an id
names both where the row was and what it said.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from warehouse.canonical import sha256_hex
from warehouse.events import DatasetRef, QuestionRegistered


class DatasetError(ValueError):
    """A question file is unusable; the message names the file, and the line/field if any."""


@dataclass(frozen=True)
class QaQuestion:
    item_id: str
    row_position: int  # 0-based row in the file
    problem: str
    gold_answer: str
    gold_urls_raw: tuple[str, ...] = ()
    topic: str | None = None
    answer_type: str | None = None


@dataclass(frozen=True)
class QaDataset:
    benchmark: str  # "simpleqa" (the pinned upstream file) | "qa" (a user question set)
    dataset: DatasetRef
    path: Path | None
    questions: tuple[QaQuestion, ...] = field(repr=False)


@dataclass(frozen=True)
class SelectedQuestion:
    sample_order: int  # 0-based position in the evaluation order
    question: QaQuestion


def question_item_id(row_position: int, problem: str) -> str:
    return f"{row_position}-{sha256_hex(problem)[:16]}"


def sample_positions(population: int, n: int | None, random_state: int) -> list[int]:
    """Row positions in evaluation order, exactly as openai/simple-evals draws them.

    `random.Random(seed).sample(rows, n)` over all rows in file order; the draw depends only
    on the population length and the seed. n=None (or n >= population with the default
    simple-evals behaviour of "no num_examples") keeps every row in file order."""
    if n is None:
        return list(range(population))
    if n < 1:
        raise ValueError(f"limit must be a positive number of questions, got {n}")
    if n > population:
        raise ValueError(f"limit {n} is more than the {population} questions in the dataset")
    return random.Random(random_state).sample(range(population), n)


def select_questions(
    dataset: QaDataset, limit: int | None, random_state: int
) -> list[SelectedQuestion]:
    positions = sample_positions(len(dataset.questions), limit, random_state)
    return [
        SelectedQuestion(order, dataset.questions[position])
        for order, position in enumerate(positions)
    ]


def question_registered(selected: SelectedQuestion, dataset_sha256: str) -> QuestionRegistered:
    question = selected.question
    return QuestionRegistered(
        item_id=question.item_id,
        dataset_sha256=dataset_sha256,
        row_position=question.row_position,
        sample_order=selected.sample_order,
        problem=question.problem,
        gold_answer=question.gold_answer,
        gold_urls_raw=list(question.gold_urls_raw),
        topic=question.topic,
        answer_type=question.answer_type,
    )
