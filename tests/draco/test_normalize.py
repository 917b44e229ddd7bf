"""Bibliography normalisation: which trailing blocks are stripped, and the uniform block."""

from __future__ import annotations

import pytest

from collectors.draco.normalize import (
    BIBLIOGRAPHY_HEADING,
    NORMALIZER_VERSION,
    normalize_report,
    report_normalized_payload,
)
from warehouse.canonical import sha256_hex
from warehouse.events import ReportCitation

BODY = "# Report\n\nThe answer is 42 [1]. See also [2].\n\n## Conclusion\n\nIt depends."
CITES = [
    ReportCitation(url="https://a.example/x", title="Alpha"),
    ReportCitation(url="https://b.example/y"),
]
UNIFORM = "## Sources\n\n[1] Alpha — https://a.example/x\n[2] https://b.example/y"


def test_nimble_style_source_index_block():
    raw = (
        f"{BODY}\n\nSource index:\n[1] Alpha - https://a.example/x\n"
        "[2] Beta (https://b.example/y)\n"
    )
    report = normalize_report(raw, CITES)
    assert report.stripped_bibliography and report.strip_heading == "Source index:"
    assert report.stripped_text.startswith("Source index:\n[1] Alpha")
    assert report.judged_text == f"{BODY}\n\n{UNIFORM}"
    assert [(e.number, e.title, e.url) for e in report.bibliography] == [
        (1, "Alpha", "https://a.example/x"),
        (2, "", "https://b.example/y"),
    ]


def test_markdown_references_with_rule_above():
    raw = (
        f"{BODY}\n\n---\n\n## References\n\n1. [Alpha](https://a.example/x)\n\n2. www.b.example/y\n"
    )
    report = normalize_report(raw, CITES)
    assert report.strip_heading == "## References"
    assert report.stripped_text.startswith("---\n\n## References")
    assert report.judged_text == f"{BODY}\n\n{UNIFORM}"


@pytest.mark.parametrize(
    "heading",
    [
        "**Sources:**",
        "**Sources**:",
        "### sources",
        "CITATIONS",
        "#Bibliography:",
        "__References__",
    ],
)
def test_heading_variants(heading):
    raw = f"{BODY}\n\n{heading}\n- https://a.example/x\n"
    report = normalize_report(raw, CITES)
    assert report.stripped_bibliography and report.strip_heading == heading
    assert report.judged_text == f"{BODY}\n\n{UNIFORM}"


@pytest.mark.parametrize(
    "tail",
    [
        "## Sources\n\nMostly my own knowledge.\n- https://a.example/x",  # a line without a URL
        "## Sources\n[1] https://a.example/x\nThanks for reading!",  # one entry-less line
        "## Sources\n",  # nothing under the heading
        "## Sources and methods\n[1] https://a.example/x",  # not just the word
        "Sources: see https://a.example/x",  # a sentence, not a heading
    ],
)
def test_not_a_strippable_bibliography(tail):
    raw = f"{BODY}\n\n{tail}"
    report = normalize_report(raw, CITES)
    assert not report.stripped_bibliography
    assert report.strip_heading is None and report.stripped_text is None
    assert report.judged_text == f"{raw.rstrip()}\n\n{UNIFORM}"


def test_only_the_last_heading_counts():
    middle = "## Sources\n[1] https://a.example/x\n"
    raw = f"# Report\n\n{middle}\n## Analysis\n\nThe sources above disagree."
    report = normalize_report(raw, [])
    assert not report.stripped_bibliography and report.judged_text == raw
    # a second, trailing bibliography is stripped; the one in the middle stays
    raw2 = f"{raw}\n\n## References\n- https://c.example\n"
    report2 = normalize_report(raw2, [])
    assert report2.stripped_bibliography and report2.judged_text == raw


def test_rule_not_directly_above_stays():
    raw = "Text.\n\n---\n\nMore text.\n\n## Sources\nhttps://a.example/x"
    report = normalize_report(raw, [])
    assert report.judged_text == "Text.\n\n---\n\nMore text."


def test_dedup_by_exact_url_in_first_seen_order():
    citations = [
        ReportCitation(url=" https://b.example/y ", title=""),
        ReportCitation(url="https://a.example/x", title="Alpha\n  page"),
        ReportCitation(url="https://b.example/y", title="Beta"),  # fills the missing title
        ReportCitation(url="", title="no url"),
        ReportCitation(url="https://a.example/x/", title="trailing slash is another URL"),
        ReportCitation(url="https://a.example/x", title="Alpha again"),
    ]
    report = normalize_report("Body.", citations)
    assert [(e.number, e.title, e.url) for e in report.bibliography] == [
        (1, "Beta", "https://b.example/y"),
        (2, "Alpha page", "https://a.example/x"),
        (3, "trailing slash is another URL", "https://a.example/x/"),
    ]
    assert report.judged_text.endswith(
        "[1] Beta — https://b.example/y\n[2] Alpha page — https://a.example/x\n"
        "[3] trailing slash is another URL — https://a.example/x/"
    )


def test_no_citations_no_block_but_own_bibliography_still_stripped():
    raw = f"{BODY}\n\n## Sources\n[1] https://a.example/x\n"
    report = normalize_report(raw, [])
    assert report.bibliography == () and report.judged_text == BODY
    assert report.stripped_bibliography
    plain = normalize_report("Just text.\n\n", [ReportCitation(url="  ")])
    assert plain.judged_text == "Just text." and BIBLIOGRAPHY_HEADING not in plain.judged_text


def test_empty_body_gets_only_the_block():
    assert normalize_report("", CITES).judged_text == UNIFORM
    assert normalize_report("Sources:\nhttps://x.example\n", CITES).judged_text == UNIFORM


def test_crlf_line_endings():
    raw = "Text.\r\n\r\n**References:**\r\n- https://a.example/x\r\n"
    report = normalize_report(raw, CITES)
    assert report.stripped_bibliography and report.judged_text == f"Text.\n\n{UNIFORM}"


@pytest.mark.parametrize(
    "raw",
    [
        f"{BODY}\n\n## References\n- https://z.example\n",
        BODY,
        "",
        f"{BODY}\n\n## Sources\n\nnot a list",
    ],
)
def test_normalizing_the_judged_text_again_changes_nothing(raw):
    once = normalize_report(raw, CITES)
    twice = normalize_report(once.judged_text, CITES)
    assert twice.judged_text == once.judged_text
    assert twice.bibliography == once.bibliography
    assert twice.stripped_bibliography and twice.strip_heading == BIBLIOGRAPHY_HEADING


def test_payload():
    raw = f"{BODY}\n\nSources:\n- https://a.example/x"
    payload = report_normalized_payload("exa_agent_high", "item-1", 2, "ev-1", raw, CITES)
    assert payload.normalizer_version == NORMALIZER_VERSION == "draco-bibliography@1"
    assert (payload.lane, payload.item_id, payload.attempt) == ("exa_agent_high", "item-1", 2)
    assert payload.source_event_id == "ev-1" and payload.raw_output_sha256 == sha256_hex(raw)
    assert payload.stripped_bibliography and payload.strip_heading == "Sources:"
    assert payload.stripped_text == "Sources:\n- https://a.example/x"
    assert [e.number for e in payload.bibliography] == [1, 2]
    assert payload.judged_text == f"{BODY}\n\n{UNIFORM}"
