"""goose3 article text from raw HTML (the upstream call; image fetching stays off)."""

from __future__ import annotations

import logging
import warnings

from collectors.extraction.engines.base import Engine, ExtractFn, installed_version


def _build() -> ExtractFn:
    from goose3 import Goose

    # goose3 logs a warning per page whose publish date it cannot parse: metadata we never use,
    # and noise on the console under a progress bar.
    logging.getLogger("goose3.crawler").setLevel(logging.ERROR)

    def extract(html: str, url: str | None) -> str | None:
        # One Goose per page, as upstream; it never fetches when given raw_html. Its date
        # parsing warns about unknown time zones: metadata we never use.
        with warnings.catch_warnings(), Goose({"enable_image_fetching": False}) as goose:
            warnings.simplefilter("ignore")
            return goose.extract(raw_html=html).cleaned_text

    return extract


ENGINE = Engine(
    name="goose3",
    distribution="goose3",
    settings={
        "call": "Goose().extract(raw_html=html).cleaned_text",
        "enable_image_fetching": False,
        "lxml": installed_version("lxml"),
    },
    build=_build,
)
