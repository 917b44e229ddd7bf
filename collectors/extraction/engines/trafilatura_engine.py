"""trafilatura, called exactly as the upstream article-extraction-benchmark does."""

from __future__ import annotations

from collectors.extraction.engines.base import Engine, ExtractFn, installed_version


def _build() -> ExtractFn:
    import trafilatura

    def extract(html: str, url: str | None) -> str | None:
        return trafilatura.extract(html, include_comments=False)

    return extract


ENGINE = Engine(
    name="trafilatura",
    distribution="trafilatura",
    settings={
        "call": "trafilatura.extract(html, include_comments=False)",
        "include_comments": False,
        # The published reference rows are byte-identical only with lxml<6.
        "lxml": installed_version("lxml"),
    },
    build=_build,
)
