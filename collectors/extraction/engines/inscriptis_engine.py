"""inscriptis: layout-aware full-page text (the upstream call, default config)."""

from __future__ import annotations

from collectors.extraction.engines.base import Engine, ExtractFn, installed_version


def _build() -> ExtractFn:
    from inscriptis import get_text

    def extract(html: str, url: str | None) -> str | None:
        return get_text(html)

    return extract


ENGINE = Engine(
    name="inscriptis",
    distribution="inscriptis",
    settings={"call": "inscriptis.get_text(html)", "lxml": installed_version("lxml")},
    build=_build,
)
