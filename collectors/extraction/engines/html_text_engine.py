"""html-text: the whole page as text, no boilerplate removal (the upstream baseline)."""

from __future__ import annotations

from collectors.extraction.engines.base import Engine, ExtractFn, installed_version


def _build() -> ExtractFn:
    import html_text

    def extract(html: str, url: str | None) -> str | None:
        return html_text.extract_text(html)

    return extract


ENGINE = Engine(
    name="html-text",
    distribution="html-text",
    settings={"call": "html_text.extract_text(html)", "lxml": installed_version("lxml")},
    build=_build,
)
