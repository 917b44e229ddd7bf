"""newspaper4k article text; like upstream it gets the page's URL.

`fetch_images=False` matters: by default parse() downloads images to pick a top image, which
is network traffic (and seconds of latency) during an offline benchmark.
Pages in Korean or Japanese fail without nltk/tinysegmenter; that is recorded as a failure.
"""

from __future__ import annotations

import warnings

from collectors.extraction.engines.base import Engine, ExtractFn, installed_version

# Any syntactically valid URL works when none is known; it only feeds URL heuristics.
_PLACEHOLDER_URL = "https://unknown.invalid/"
_OPTIONS = {"fetch_images": False}


def _build() -> ExtractFn:
    with warnings.catch_warnings():
        # newspaper warns at import that nltk (for its NLP summary features) is absent.
        warnings.simplefilter("ignore", UserWarning)
        import newspaper

    def extract(html: str, url: str | None) -> str | None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # publish-date parsing noise; we keep only the text
            article = newspaper.article(url or _PLACEHOLDER_URL, input_html=html, **_OPTIONS)
            article.parse()
        return article.text

    return extract


ENGINE = Engine(
    name="newspaper4k",
    distribution="newspaper4k",
    settings={
        "call": "newspaper.article(url, input_html=html, fetch_images=False).parse().text",
        **_OPTIONS,
        "lxml": installed_version("lxml"),
    },
    build=_build,
)
