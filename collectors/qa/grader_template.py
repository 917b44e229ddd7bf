"""The official SimpleQA grader template, fetched at a pinned commit, never copied here.

On first use `simpleqa_eval.py` is downloaded from openai/simple-evals at `COMMIT` into the
cache, its file sha256 verified, and the module-level `GRADER_TEMPLATE` string read with
`ast` (the file is never imported or executed). The template's own sha256, length and
placeholders are checked too, so a cached file that was edited is refused, naming it.

Grade parsing is upstream's: the first `A|B|C` anywhere in the completion; no match -> C
(NOT_ATTEMPTED), which we also flag with `parse_ok=False` (methodology 2.3).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import httpx

from collectors.pinned import PinError, fetch_pinned
from collectors.qa.prompts import placeholders
from warehouse.canonical import sha256_hex

REPOSITORY = "openai/simple-evals"
COMMIT = "ee3b0318d8d1d9d72755a4120879be65f7c07e9e"
SOURCE_PATH = "simpleqa_eval.py"
RAW_URL = f"https://raw.githubusercontent.com/{REPOSITORY}/{COMMIT}/{SOURCE_PATH}"
FILE_SHA256 = "d61a8f97132b29f6fe5d264dd9d619407ea14421525827fabd4cc21162e35c29"
TEMPLATE_SHA256 = "063c04ea798f91c4706c050b66a721afc77a458b12d8f0d72286d4b0eee8a3ee"
TEMPLATE_LENGTH = 5_964
TEMPLATE_NAME = "GRADER_TEMPLATE"
PLACEHOLDERS = frozenset({"question", "target", "predicted_answer"})

GRADE_LABELS = {"A": "correct", "B": "incorrect", "C": "not_attempted"}
_GRADE = re.compile(r"(A|B|C)")


class TemplateError(ValueError):
    """The grader template could not be fetched or is not the pinned one."""


@dataclass(frozen=True)
class TemplatePin:
    url: str
    commit: str
    file_sha256: str
    template_sha256: str
    template_length: int


OFFICIAL_PIN = TemplatePin(RAW_URL, COMMIT, FILE_SHA256, TEMPLATE_SHA256, TEMPLATE_LENGTH)


@dataclass(frozen=True)
class GraderTemplate:
    text: str
    sha256: str
    source_url: str
    commit: str

    @property
    def prompt_id(self) -> str:
        return f"simpleqa-grader-template@{self.commit[:12]}"

    def render(self, *, question: str, target: str, predicted_answer: str) -> str:
        return self.text.format(question=question, target=target, predicted_answer=predicted_answer)


def cached_source_path(cache_dir: Path, pin: TemplatePin = OFFICIAL_PIN) -> Path:
    return Path(cache_dir) / "simple-evals" / f"{pin.commit[:12]}-{SOURCE_PATH}"


def load_grader_template(
    cache_dir: Path, *, pin: TemplatePin = OFFICIAL_PIN, client: httpx.Client | None = None
) -> GraderTemplate:
    path = cached_source_path(cache_dir, pin)
    if not path.is_file():
        try:
            fetch_pinned(pin.url, path, pin.file_sha256, client=client)
        except PinError as exc:
            raise TemplateError(f"SimpleQA grader template: {exc}") from None
    data = path.read_bytes()
    actual = sha256_hex(data)
    if actual != pin.file_sha256:
        raise TemplateError(
            f"{path}: sha256 {actual} is not the pinned {pin.file_sha256} of {SOURCE_PATH} at "
            f"{REPOSITORY}@{pin.commit[:12]}; refusing it (delete the file to fetch it again)"
        )
    text = extract_template(data.decode("utf-8"), path)
    digest = sha256_hex(text)
    if digest != pin.template_sha256 or len(text) != pin.template_length:
        raise TemplateError(
            f"{path}: {TEMPLATE_NAME} has sha256 {digest} and {len(text)} characters, expected "
            f"{pin.template_sha256} and {pin.template_length}"
        )
    found = placeholders(text)
    if found != PLACEHOLDERS:
        raise TemplateError(
            f"{path}: {TEMPLATE_NAME} placeholders {sorted(found)}, expected {sorted(PLACEHOLDERS)}"
        )
    return GraderTemplate(text=text, sha256=digest, source_url=pin.url, commit=pin.commit)


def extract_template(source: str, path: Path | str) -> str:
    """The module-level `GRADER_TEMPLATE = "..."` or `"...".strip()`, read without running code."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise TemplateError(f"{path}: not valid Python ({exc.msg}, line {exc.lineno})") from None
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        if not any(isinstance(t, ast.Name) and t.id == TEMPLATE_NAME for t in node.targets):
            continue
        value = node.value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return value.value.strip()
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "strip"
            and not value.args
            and not value.keywords
            and isinstance(value.func.value, ast.Constant)
            and isinstance(value.func.value.value, str)
        ):
            return value.func.value.value.strip()
        raise TemplateError(
            f"{path}: line {node.lineno}: {TEMPLATE_NAME} is not a plain string literal"
        )
    raise TemplateError(f"{path}: no module-level {TEMPLATE_NAME}")


def parse_grade(completion: str) -> tuple[str, bool]:
    """(grade letter, parse_ok): upstream's first A|B|C anywhere; none -> ("C", False)."""
    match = _GRADE.search(completion or "")
    if match is None:
        return "C", False
    return match.group(0), True
