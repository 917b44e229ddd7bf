"""Lexical helpers the offline stand-ins share (QA's offline roles, DRACO's offline judge and
local-rag retrieval): one normalisation, one tokenizer, one stopword list, so "shares a
content word" means the same thing in every family."""

from __future__ import annotations

import re
import unicodedata

_TOKEN = re.compile(r"\w+", re.UNICODE)

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "after",
        "all",
        "also",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "before",
        "being",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "during",
        "each",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "more",
        "most",
        "my",
        "no",
        "not",
        "of",
        "on",
        "one",
        "or",
        "other",
        "our",
        "out",
        "over",
        "she",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "under",
        "up",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "whose",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)


def normalize(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text or "").casefold()
    no_punct = "".join(ch for ch in folded if not unicodedata.category(ch).startswith("P"))
    return " ".join(no_punct.split())


def content_tokens(text: str) -> set[str]:
    return {t for t in _TOKEN.findall(normalize(text)) if t not in STOPWORDS}
