"""The on-disk layout of an extraction corpus (the article-extraction-benchmark's): a
ground-truth file and one gzipped HTML file per item, and the error that names what is wrong."""

from __future__ import annotations

GROUND_TRUTH_FILE = "ground-truth.json"
HTML_DIR = "html"
HTML_SUFFIX = ".html.gz"


class CorpusError(ValueError):
    """The corpus on disk is not usable; the message names the file and the item/field."""
