"""The DRACO family's prompts, one versioned text file each, identified by id and sha256.

Same rule as `collectors.qa.prompts`: never edit a released file in place; a changed prompt is
a new file with a new version, so every recorded `prompt_sha256` keeps pointing at the text
that produced it.

A file is one `str.format` template, optionally followed by named sections, each starting on
a line `=== <name> ===`. The judge keeps everything it may send in one file (the template,
what MET means for each criterion type, the re-ask message), so the file's sha256 covers every
word a judge call can contain.
"""

from __future__ import annotations

import functools
import re
import string
from dataclasses import dataclass, field
from pathlib import Path

from collectors.llm.base import PromptRef
from warehouse.canonical import sha256_hex

PROMPTS_DIR = Path(__file__).resolve().parent

JUDGE_PROMPT_ID = "draco-judge@1"
RESEARCH_INSTRUCTION_ID = "draco-research-instruction@1"

# prompt id -> (file, placeholders the template must have, sections the file must have)
PROMPTS: dict[str, tuple[str, frozenset[str], frozenset[str]]] = {
    JUDGE_PROMPT_ID: (
        "judge_v1.txt",
        frozenset({"criterion_type", "met_meaning", "requirement", "problem", "response"}),
        frozenset({"met-positive", "met-negative", "reask"}),
    ),
    RESEARCH_INSTRUCTION_ID: ("research_instruction_v1.txt", frozenset({"problem"}), frozenset()),
}

_SECTION = re.compile(r"^=== ([a-z0-9-]+) ===$", re.MULTILINE)


@dataclass(frozen=True)
class Prompt:
    prompt_id: str
    text: str  # the whole file
    sha256: str  # of the file's bytes
    template: str  # the part before the first section
    sections: dict[str, str] = field(default_factory=dict)

    @property
    def ref(self) -> PromptRef:
        return PromptRef(self.prompt_id, self.sha256)

    def render(self, **values: str) -> str:
        return self.template.format(**values)

    def section(self, name: str) -> str:
        return self.sections[name].format()


def placeholders(template: str) -> frozenset[str]:
    return frozenset(name for _, name, _, _ in string.Formatter().parse(template) if name)


def split_sections(text: str) -> tuple[str, dict[str, str]]:
    parts = _SECTION.split(text)
    template, rest = parts[0], parts[1:]
    sections = {name: body.strip("\n") for name, body in zip(rest[::2], rest[1::2], strict=True)}
    return template.rstrip("\n"), sections


@functools.cache
def load_prompt(prompt_id: str) -> Prompt:
    try:
        file_name, expected, expected_sections = PROMPTS[prompt_id]
    except KeyError:
        raise KeyError(
            f"unknown prompt {prompt_id!r}; known: {', '.join(sorted(PROMPTS))}"
        ) from None
    path = PROMPTS_DIR / file_name
    data = path.read_bytes()
    text = data.decode("utf-8")
    template, sections = split_sections(text)
    found = placeholders(template)
    if found != expected:
        raise ValueError(f"{path}: placeholders {sorted(found)}, expected {sorted(expected)}")
    if set(sections) != expected_sections:
        raise ValueError(
            f"{path}: sections {sorted(sections)}, expected {sorted(expected_sections)}"
        )
    for name, body in sections.items():
        if placeholders(body):
            raise ValueError(f"{path}: section {name!r} must have no placeholders")
    return Prompt(prompt_id, text, sha256_hex(data), template, sections)


def research_instruction(problem: str) -> tuple[str, str]:
    """(the report-shaped instruction for `problem`, sha256 of the instruction template file).

    Every system gets this same text (methodology §1.4); the sha256 is of the template, so it
    is one value per run, recorded as `instruction_sha256` on every research event."""
    prompt = load_prompt(RESEARCH_INSTRUCTION_ID)
    return prompt.render(problem=problem), prompt.sha256
