"""html2text: Markdown-ish full-page text, links and images dropped (the upstream settings)."""

from __future__ import annotations

from collectors.extraction.engines.base import Engine, ExtractFn

_OPTIONS = {"ignore_links": True, "ignore_images": True}


def _build() -> ExtractFn:
    from html2text import HTML2Text

    def extract(html: str, url: str | None) -> str | None:
        # A fresh converter per page: HTML2Text keeps parser state between calls.
        converter = HTML2Text()
        for option, value in _OPTIONS.items():
            setattr(converter, option, value)
        return converter.handle(html)

    return extract


ENGINE = Engine(
    name="html2text",
    distribution="html2text",
    settings={"call": "HTML2Text().handle(html)", **_OPTIONS},
    build=_build,
)
