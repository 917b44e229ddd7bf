"""The anchor rule and the text normaliser (rule version 1)."""

from __future__ import annotations

from collectors.extraction.anchors import (
    ANCHOR_RULE_VERSION,
    MAX_ANCHORS,
    anchors_found,
    build_anchors,
    normalize_text,
)


def words(n: int, prefix: str = "w") -> str:
    return " ".join(f"{prefix}{i}" for i in range(n))


def test_normalizer_is_nfkc_collapsed_whitespace_case_kept():
    assert normalize_text("  The\u00a0ﬁrst\t\tline\r\n\n  Second  ") == "The first line Second"
    assert normalize_text("Ｆｕｌｌｗｉｄｔｈ ①") == "Fullwidth 1"
    assert normalize_text("MiXeD Case") == "MiXeD Case"
    assert normalize_text(None) == normalize_text("") == ""


def test_rule_version_is_recorded():
    assert ANCHOR_RULE_VERSION == "1"


def test_anchor_is_first_twelve_words_of_each_long_enough_paragraph():
    truth = "\n".join([words(5, "short"), words(20, "a"), "", words(6, "b")])
    assert build_anchors(truth) == [words(12, "a"), words(6, "b")]


def test_anchors_are_normalized_and_deduplicated():
    truth = "Héllo   world,\tthis is\u00a0a test.\nHéllo world, this is a test.\n"
    assert build_anchors(truth) == ["Héllo world, this is a test."]


def test_cap_spreads_anchors_over_the_whole_page():
    paragraphs = [words(8, f"p{i}x") for i in range(100)]
    anchors = build_anchors("\n".join(paragraphs))
    assert len(anchors) == MAX_ANCHORS
    assert anchors[0] == paragraphs[0] and anchors[-1] == paragraphs[-1]
    assert anchors == sorted(set(anchors), key=anchors.index)  # distinct, in page order
    assert build_anchors("\n".join(paragraphs)) == anchors  # deterministic


def test_fallback_when_no_paragraph_is_long_enough():
    assert build_anchors("One two.\nThree four five.") == ["One two. Three four five."]
    assert build_anchors("   \n ") == []


def test_real_anchors_are_verbatim_excerpts_of_the_normalized_truth(article_benchmark):
    for item in article_benchmark.items:
        anchors = build_anchors(item.truth_text)
        assert 1 <= len(anchors) <= MAX_ANCHORS, item.item_id
        normalized_truth = normalize_text(item.truth_text)
        assert anchors_found(anchors, item.truth_text) == len(anchors), item.item_id
        assert all(anchor in normalized_truth for anchor in anchors)


def test_anchors_found_counts_substrings_of_the_normalized_output():
    anchors = ["alpha beta gamma", "delta epsilon"]
    assert anchors_found(anchors, "xx alpha\nbeta   gamma yy") == 1
    assert anchors_found(anchors, "Alpha beta gamma") == 0  # case kept
    assert anchors_found(anchors, None) == 0
