"""Bibliography normalisation: every judge sees one uniform bibliography (methodology §1.4).

Systems end their reports differently (a `## References` list, a bold `**Sources:**`, a
"Source index:" block, or nothing) and their adapters return structured citations. Judging the
citation axis on those differing tails would compare formats, not research (§5.12). So:

1. Strip the system's own trailing bibliography: the LAST heading-like line that names
   Sources / References / Source index / Citations / Bibliography (optional leading `#`s,
   optional `**bold**` or `__bold__`, optional trailing colon, any case), but only if there is
   at least one non-empty line under it and every one of them contains a URL. A `---` (or
   `***`, `___`) rule right above that heading goes with it. Anything else (a heading followed
   by prose, a sources list in the middle of the report) is left alone.
2. Append one block built from the adapter's structured citations: dedup by URL (the exact
   string after stripping whitespace; empty URLs skipped), first-seen order (the title is the
   first non-empty title among the duplicates), one line `[n] title — url` (`[n] url` without a
   title) under `## Sources`. No citations, no block.

The bibliography is stripped even when the adapter gave no citations: the judged text then has
no bibliography at all, the same rule for every system (citations come from the structured
data only). Line endings are normalised to `\\n`. Normalising a judged text again yields the
same text (the uniform block is itself a strippable bibliography).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from warehouse.canonical import sha256_hex
from warehouse.events import BibliographyEntry, ReportCitation, ReportNormalized

NORMALIZER_VERSION = "draco-bibliography@1"
BIBLIOGRAPHY_HEADING = "## Sources"

_HEADING = re.compile(
    r"""^\s*(?:\#{1,6}\s*)?           # markdown heading marks
        (?P<bold>\*\*|__)?\s*          # optional bold
        (?:sources|references|source\ index|citations|bibliography)
        \s*:?\s*(?P=bold)?\s*:?\s*$    # colon inside or outside the bold
    """,
    re.IGNORECASE | re.VERBOSE,
)
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S|\bwww\.\S", re.IGNORECASE)
_RULE = re.compile(r"^\s*(?:-{3,}|\*{3,}|_{3,})\s*$")


@dataclass(frozen=True)
class NormalizedReport:
    stripped_bibliography: bool
    strip_heading: str | None  # the heading line of the stripped block
    stripped_text: str | None  # the removed block (rule + heading + entries), for audit
    bibliography: tuple[BibliographyEntry, ...]
    judged_text: str


def _own_bibliography_start(lines: list[str]) -> tuple[int, int] | None:
    """(first removed line, heading line) of a strippable trailing bibliography, else None."""
    heading = next((i for i in range(len(lines) - 1, -1, -1) if _HEADING.match(lines[i])), None)
    if heading is None:
        return None
    entries = [line for line in lines[heading + 1 :] if line.strip()]
    if not entries or not all(_URL.search(line) for line in entries):
        return None
    start = heading
    above = heading - 1
    while above >= 0 and not lines[above].strip():
        above -= 1
    if above >= 0 and _RULE.match(lines[above]):
        start = above
    return start, heading


def bibliography_entries(citations: Sequence[ReportCitation]) -> tuple[BibliographyEntry, ...]:
    titles: dict[str, str] = {}
    for citation in citations:
        url = citation.url.strip()
        if not url:
            continue
        title = " ".join(citation.title.split())
        if not titles.get(url):
            titles[url] = title  # keeps first-seen order; fills a missing title later
    return tuple(
        BibliographyEntry(number=n, url=url, title=title)
        for n, (url, title) in enumerate(titles.items(), start=1)
    )


def render_bibliography(entries: Sequence[BibliographyEntry]) -> str:
    lines = [
        f"[{e.number}] {e.title} — {e.url}" if e.title else f"[{e.number}] {e.url}" for e in entries
    ]
    return "\n".join([BIBLIOGRAPHY_HEADING, "", *lines])


def normalize_report(raw_output: str, citations: Sequence[ReportCitation]) -> NormalizedReport:
    lines = raw_output.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    found = _own_bibliography_start(lines)
    if found is None:
        body, stripped_text, strip_heading = "\n".join(lines), None, None
    else:
        start, heading = found
        body = "\n".join(lines[:start])
        stripped_text = "\n".join(lines[start:]).strip("\n")
        strip_heading = lines[heading].strip()
    body = body.rstrip()
    entries = bibliography_entries(citations)
    if entries:
        block = render_bibliography(entries)
        judged = f"{body}\n\n{block}" if body else block
    else:
        judged = body
    return NormalizedReport(
        stripped_bibliography=found is not None,
        strip_heading=strip_heading,
        stripped_text=stripped_text,
        bibliography=entries,
        judged_text=judged,
    )


def report_normalized_payload(
    lane: str,
    item_id: str,
    attempt: int,
    source_event_id: str,
    raw_output: str,
    citations: Sequence[ReportCitation],
) -> ReportNormalized:
    """The `report_normalized` fact for one research_completed event (`source_event_id`)."""
    report = normalize_report(raw_output, citations)
    return ReportNormalized(
        lane=lane,
        item_id=item_id,
        attempt=attempt,
        normalizer_version=NORMALIZER_VERSION,
        source_event_id=source_event_id,
        raw_output_sha256=sha256_hex(raw_output),
        stripped_bibliography=report.stripped_bibliography,
        strip_heading=report.strip_heading,
        stripped_text=report.stripped_text,
        bibliography=list(report.bibliography),
        judged_text=report.judged_text,
    )


@dataclass(frozen=True)
class BibliographyNormalizer:
    """The normaliser as the runner uses it: callable, and carrying its own version, so the
    version recorded on a regime can never disagree with the code that produced the text."""

    version: str = NORMALIZER_VERSION

    def __call__(
        self,
        lane: str,
        item_id: str,
        attempt: int,
        source_event_id: str,
        raw_output: str,
        citations: Sequence[ReportCitation],
    ) -> ReportNormalized:
        return report_normalized_payload(
            lane, item_id, attempt, source_event_id, raw_output, citations
        )


NORMALIZER = BibliographyNormalizer()
