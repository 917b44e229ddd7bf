"""BeautifulSoup get_text: every text node of the page, the upstream benchmark's baseline call."""

from __future__ import annotations

from collectors.extraction.engines.base import Engine, ExtractFn

# Upstream's choice: the stdlib parser, space separator, stripped strings, which keeps our row
# comparable to theirs. (bs4 >= 4.10 leaves <script>/<style> contents out of get_text.)
_PARSER = "html.parser"
_SEPARATOR = " "


def _build() -> ExtractFn:
    from bs4 import BeautifulSoup

    def extract(html: str, url: str | None) -> str | None:
        return BeautifulSoup(html, _PARSER).get_text(separator=_SEPARATOR, strip=True)

    return extract


ENGINE = Engine(
    name="beautifulsoup",
    distribution="beautifulsoup4",
    settings={
        "call": "BeautifulSoup(html, parser).get_text(separator=separator, strip=True)",
        "parser": _PARSER,
        "separator": _SEPARATOR,
        "strip": True,
    },
    build=_build,
)
