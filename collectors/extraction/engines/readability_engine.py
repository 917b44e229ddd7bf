"""readability-lxml, text taken with html-text from its HTML summary (the upstream call)."""

from __future__ import annotations

from collectors.extraction.engines.base import Engine, ExtractFn, installed_version


def _build() -> ExtractFn:
    import html_text
    from readability import Document

    def extract(html: str, url: str | None) -> str | None:
        return html_text.extract_text(Document(html).summary(html_partial=True))

    return extract


ENGINE = Engine(
    name="readability-lxml",
    distribution="readability-lxml",
    settings={
        "call": "html_text.extract_text(Document(html).summary(html_partial=True))",
        "html_partial": True,
        "html-text": installed_version("html-text"),
        "lxml": installed_version("lxml"),
    },
    build=_build,
)
