"""Which corpus is the pinned upstream benchmark (scrapinghub/article-extraction-benchmark at one
commit), and the checks that refuse a drifted copy of it. Apart from the fetching
(article_benchmark.py) so that loading any corpus (corpus.py) can ask without importing the
module that builds on it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from collectors.extraction.article_benchmark_pins import FILE_SHA256
from collectors.extraction.corpus_format import (
    GROUND_TRUTH_FILE,
    HTML_DIR,
    HTML_SUFFIX,
    CorpusError,
)
from warehouse.canonical import file_sha256

NAME = "article-extraction-benchmark"
REPOSITORY = "scrapinghub/article-extraction-benchmark"
COMMIT = "4a3bc979f76c0df73cb95fe272e2fc1b96f9f010"
URI = f"https://github.com/{REPOSITORY}/tree/{COMMIT}"
RAW_BASE_URL = f"https://raw.githubusercontent.com/{REPOSITORY}"
GROUND_TRUTH_SHA256 = FILE_SHA256[GROUND_TRUTH_FILE]
ITEM_IDS = frozenset(
    path.removeprefix(f"{HTML_DIR}/").removesuffix(HTML_SUFFIX)
    for path in FILE_SHA256
    if path.startswith(f"{HTML_DIR}/")
)

_LABEL = f"{NAME}@{COMMIT[:12]}"


def matches_pinned(dataset_sha256: str, entries: Mapping[str, object], truth_path: Path) -> bool:
    """True for the pinned ground truth; refuses a copy with the same ids but other bytes."""
    if dataset_sha256 == GROUND_TRUTH_SHA256:
        return True
    if set(entries) == ITEM_IDS:
        raise CorpusError(
            f"{truth_path}: has the item ids of {_LABEL} but sha256 {dataset_sha256}, "
            f"not the pinned {GROUND_TRUTH_SHA256}: refusing a modified or drifted copy of "
            "the published benchmark (give an edited corpus its own item ids)"
        )
    return False


def verify_pinned_files(root: Path) -> None:
    for relative, expected in sorted(FILE_SHA256.items()):
        path = root / relative
        if not path.is_file():
            raise CorpusError(f"{path}: missing from this copy of {_LABEL}")
        actual = file_sha256(path)
        if actual != expected:
            raise CorpusError(
                f"{path}: sha256 {actual} does not match the pinned {expected} of {_LABEL}: "
                "refusing a modified or drifted copy"
            )
