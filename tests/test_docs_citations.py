"""Every citation of the reference documents resolves inside the repository.

The code cites "methodology 1.3", "methodology §2.4", "stack-notes §2", "providers.md §1" for
the rule it implements. Those documents live in docs/ (copied from the project's shared
reference), so a clone explains itself; this test fails when a citation names a section whose
heading docs/ does not have, or when a file points at the reference outside the repository.
Fast: reads text files, no dbt.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CITED_DOCUMENTS = {
    "methodology": DOCS / "methodology.md",
    "stack-notes": DOCS / "stack-notes.md",
    "providers": DOCS / "providers.md",
}
TEXT_SUFFIXES = {".py", ".sql", ".yml", ".yaml", ".md", ".toml", ".txt", ".cfg", ".ini", ".sh"}
SKIPPED_DIRS = {"__pycache__", "node_modules", "target", "dbt_packages", "logs"}
KEPT_HIDDEN_DIRS = {".ci", ".streamlit"}  # tracked config; every other dot-directory is tooling

_NUMBER = r"§?\s?\d+(?:\.\d+)?"
# "methodology 1.3", "methodology.md §4.2", "Methodology section 4", "methodology §1.2-§1.4",
# "methodology 2.1, 5.3", "methodology 2.3–2.6 and 3", and a citation wrapped onto the next
# comment line ("(methodology\n-- 1.3, ...").
CITATION = re.compile(
    r"\b(?P<doc>methodology|stack-notes|providers)(?:\.md)?"
    r"(?:\s+(?:--|#|//)?)?\s*(?:section\s+)?"
    rf"(?P<sections>{_NUMBER}(?:\s*(?:,|/|-|–|and|to)\s*{_NUMBER})*)",
    re.IGNORECASE,
)
HEADING = re.compile(r"^#{1,6}\s+(\d+(?:\.\d+)*)[.\s]", re.MULTILINE)
# The cited documents themselves, and this file (its examples cite missing sections on purpose).
EXCLUDED = {*CITED_DOCUMENTS.values(), Path(__file__).resolve()}
OUTSIDE_REFERENCE = re.compile(r"\.\./shared/(?:reference/|DESIGN\.md|CONVENTIONS\.md)")


def headings(document: Path) -> set[str]:
    """The section numbers of a markdown file's numbered headings ("## 1. X" -> "1")."""
    return set(HEADING.findall(document.read_text(encoding="utf-8")))


def citations(text: str) -> list[tuple[str, str, int]]:
    """(document, section, line) for every section cited in `text`."""
    found = []
    for match in CITATION.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        for section in re.findall(r"\d+(?:\.\d+)?", match["sections"]):
            found.append((match["doc"].lower(), section, line))
    return found


def tree_files() -> list[Path]:
    """The repository's own text files (not the virtualenv, caches or the data root)."""
    files = []
    for directory, subdirs, names in os.walk(ROOT):
        subdirs[:] = [
            d
            for d in subdirs
            if d not in SKIPPED_DIRS and (not d.startswith(".") or d in KEPT_HIDDEN_DIRS)
        ]
        for name in names:
            path = Path(directory) / name
            if path.suffix in TEXT_SUFFIXES and path not in EXCLUDED:
                files.append(path)
    return sorted(files)


def unresolved(files: list[Path]) -> list[str]:
    known = {doc: headings(path) for doc, path in CITED_DOCUMENTS.items()}
    broken = []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        for doc, section, line in citations(text):
            if section not in known[doc]:
                where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                broken.append(f"{where}:{line}: {doc} {section}")
    return broken


@pytest.fixture(scope="module")
def files() -> list[Path]:
    return tree_files()


def test_every_cited_section_has_a_heading_in_docs(files):
    broken = unresolved(files)
    assert not broken, "citations of sections docs/ does not have:\n" + "\n".join(broken)


def test_the_scan_sees_the_code_s_citations(files):
    # Guards the test above against passing on nothing (a regex or walk that matches no file).
    cited = {
        (doc, section)
        for path in files
        for doc, section, _ in citations(path.read_text(encoding="utf-8", errors="replace"))
    }
    assert len(cited) >= 20, sorted(cited)
    for doc in CITED_DOCUMENTS:
        assert any(d == doc for d, _ in cited), f"no file cites {doc}"
    assert ("methodology", "1.3") in cited  # the DRACO score, cited by the dbt macros


def test_a_citation_of_a_missing_section_is_reported(tmp_path):
    source = tmp_path / "model.sql"
    source.write_text(
        "-- the score (methodology 1.3, 5.17), latency (methodology §2.5)\n"
        "-- wrapped (methodology\n-- 9.4, nowhere) and stack-notes §12 and providers.md §0\n"
    )
    broken = [line.split(": ", 1)[1] for line in unresolved([source])]
    assert broken == ["methodology 9.4", "stack-notes 12"]


def test_citation_forms():
    text = "methodology §1.2-§1.4; Methodology 2.3–2.6 and 3; methodology section 4; (methodology 2.2, step 3)"
    assert [(d, s) for d, s, _ in citations(text)] == [
        ("methodology", "1.2"),
        ("methodology", "1.4"),
        ("methodology", "2.3"),
        ("methodology", "2.6"),
        ("methodology", "3"),
        ("methodology", "4"),
        ("methodology", "2.2"),
    ]


def test_no_file_points_at_the_reference_outside_the_repository(files):
    outside = [
        f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
        for path in files
        for text in [path.read_text(encoding="utf-8", errors="replace")]
        for m in OUTSIDE_REFERENCE.finditer(text)
    ]
    assert not outside, "point these at docs/ instead:\n" + "\n".join(outside)
