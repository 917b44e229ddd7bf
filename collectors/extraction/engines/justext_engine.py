"""jusText: non-boilerplate paragraphs, English stoplist, the upstream benchmark's thresholds.

Upstream joins paragraphs with a space; we join with newlines to keep paragraph boundaries.
Both scorers (\\w+ shingles, whitespace-collapsed anchors) are blind to that difference.
"""

from __future__ import annotations

from collectors.extraction.engines.base import Engine, ExtractFn, installed_version

# Positional arguments of upstream's call, named (jusText's defaults differ).
_THRESHOLDS = {
    "length_low": 50,
    "length_high": 200,
    "stopwords_low": 0.1,
    "stopwords_high": 0.2,
    "max_link_density": 0.2,
    "max_heading_distance": 200,
    "no_headings": True,
}
_STOPLIST = "English"


def _build() -> ExtractFn:
    import justext

    stoplist = justext.get_stoplist(_STOPLIST)

    def extract(html: str, url: str | None) -> str | None:
        paragraphs = justext.justext(html, stoplist, **_THRESHOLDS)
        return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)

    return extract


ENGINE = Engine(
    name="justext",
    distribution="jusText",
    settings={
        "stoplist": _STOPLIST,
        **_THRESHOLDS,
        "joiner": "\n",
        "lxml": installed_version("lxml"),
    },
    build=_build,
)
