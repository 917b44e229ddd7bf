"""Project-written prompts, one versioned text file each, identified by id and sha256.

Never edit a released file in place: a changed prompt is a new file with a new version, so
every recorded `prompt_sha256` keeps pointing at the text that produced it. (The official
SimpleQA grader template is not here: `collectors.qa.grader_template` fetches it at a pinned
commit.)
"""

from __future__ import annotations

import functools
import string
from dataclasses import dataclass
from pathlib import Path

from collectors.llm.base import PromptRef
from warehouse.canonical import sha256_hex

PROMPTS_DIR = Path(__file__).resolve().parent

# prompt id -> (file, placeholders it must have)
PROMPTS: dict[str, tuple[str, frozenset[str]]] = {
    "qa-synthesizer@1": ("synthesizer_v1.txt", frozenset({"context", "question"})),
    "qa-closed-book@1": ("closed_book_v1.txt", frozenset({"question"})),
    "umbrela-relevance@1": ("umbrela_v1.txt", frozenset({"query", "title", "url", "text"})),
}


@dataclass(frozen=True)
class Prompt:
    prompt_id: str
    text: str
    sha256: str

    @property
    def ref(self) -> PromptRef:
        return PromptRef(self.prompt_id, self.sha256)

    def render(self, **values: str) -> str:
        return self.text.format(**values)


def placeholders(template: str) -> frozenset[str]:
    return frozenset(name for _, name, _, _ in string.Formatter().parse(template) if name)


@functools.cache
def load_prompt(prompt_id: str) -> Prompt:
    try:
        file_name, expected = PROMPTS[prompt_id]
    except KeyError:
        raise KeyError(
            f"unknown prompt {prompt_id!r}; known: {', '.join(sorted(PROMPTS))}"
        ) from None
    data = (PROMPTS_DIR / file_name).read_bytes()
    text = data.decode("utf-8")
    found = placeholders(text)
    if found != expected:
        raise ValueError(
            f"{PROMPTS_DIR / file_name}: placeholders {sorted(found)}, expected {sorted(expected)}"
        )
    return Prompt(prompt_id=prompt_id, text=text, sha256=sha256_hex(data))
