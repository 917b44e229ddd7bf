"""Resiliparse main-content extraction (the upstream call)."""

from __future__ import annotations

from collectors.extraction.engines.base import Engine, ExtractFn


def _build() -> ExtractFn:
    from resiliparse.extract.html2text import extract_plain_text

    def extract(html: str, url: str | None) -> str | None:
        return extract_plain_text(html, main_content=True)

    return extract


ENGINE = Engine(
    name="resiliparse",
    distribution="resiliparse",
    settings={"call": "extract_plain_text(html, main_content=True)", "main_content": True},
    build=_build,
)
