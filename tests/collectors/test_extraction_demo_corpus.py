"""The offline demo corpus: deterministic, realistic clutter, the XSS payload as text."""

from __future__ import annotations

import gzip
import hashlib
import html
import json
from pathlib import Path

import pytest

from collectors.demo.extraction_corpus import (
    DEMO_NAME,
    TOPIC_COUNT,
    XSS_PAYLOAD,
    build_demo_corpus,
    ensure_demo_corpus,
    item_id_for,
    select_topics,
)
from collectors.extraction.corpus import load_corpus


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_building_twice_gives_byte_identical_files(demo_corpus_dir: Path, tmp_path: Path):
    again = build_demo_corpus(tmp_path / "again")
    first, second = _files(demo_corpus_dir), _files(again)
    assert first == second
    assert len([name for name in first if name.startswith("html/")]) == TOPIC_COUNT
    assert "SOURCE.md" in first and "ground-truth.json" in first
    # gzip header carries mtime 0 and no file name: nothing time- or path-dependent.
    some_page = next(data for name, data in first.items() if name.endswith(".html.gz"))
    assert some_page[4:8] == b"\x00\x00\x00\x00" and not some_page[3] & 0x08


def test_demo_corpus_layout_ids_and_label(demo_corpus, demo_corpus_dir: Path):
    from pydoc_data.topics import topics

    assert demo_corpus.dataset.name == DEMO_NAME
    assert demo_corpus.dataset.item_count == TOPIC_COUNT
    expected_ids = sorted(item_id_for(name) for name in select_topics(topics))
    assert list(demo_corpus.item_ids) == expected_ids
    assert item_id_for("assert") == hashlib.sha256(b"assert").hexdigest()
    # Loads like any user corpus, with the same hash.
    assert load_corpus(demo_corpus_dir).dataset.sha256 == demo_corpus.dataset.sha256


def test_script_payload_is_text_in_the_page_and_literal_in_the_truth(demo_corpus):
    carriers = [item for item in demo_corpus.items if XSS_PAYLOAD in item.truth_text]
    assert carriers, "the app's XSS test needs a page whose article text holds the payload"
    page = carriers[0].read_html().html
    assert XSS_PAYLOAD not in page  # escaped: the browser shows it, never runs it
    assert html.escape(XSS_PAYLOAD) in page


def test_pages_carry_clutter_that_the_truth_does_not(demo_corpus):
    clutter = ("use cookies", "All rights reserved", "Related topics", "Post comment", "gtag(")
    for item in demo_corpus.items:
        page = item.read_html().html
        for marker in clutter:
            assert marker in page
            assert marker not in item.truth_text
        assert "<script>" in page and "<style>" in page
        assert item.truth_text.strip() and item.url.startswith("https://pyref-daily.example/")


def test_truth_paragraphs_appear_in_the_page_text(demo_corpus):
    item = demo_corpus.items[0]
    page = html.unescape(item.read_html().html)
    for paragraph in item.truth_text.split("\n\n"):
        assert paragraph.splitlines()[0] in page


def test_ground_truth_is_sorted_pretty_json(demo_corpus_dir: Path):
    raw = (demo_corpus_dir / "ground-truth.json").read_text("utf-8")
    document = json.loads(raw)
    assert raw == json.dumps(document, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    for entry in document.values():
        assert set(entry) == {"articleBody", "url"}


def test_existing_destination_is_never_overwritten(demo_corpus_dir: Path):
    with pytest.raises(FileExistsError):
        build_demo_corpus(demo_corpus_dir)
    assert ensure_demo_corpus(demo_corpus_dir).dataset.item_count == TOPIC_COUNT


def test_pages_decompress_to_utf8(demo_corpus_dir: Path):
    for path in (demo_corpus_dir / "html").iterdir():
        gzip.decompress(path.read_bytes()).decode("utf-8")
