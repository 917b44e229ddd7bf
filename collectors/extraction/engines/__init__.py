"""Local extraction engines, one module each, listed explicitly (no import-time registration).

Importing this package is cheap: each engine imports its library only in `Engine.load()`.
"""

from __future__ import annotations

from collectors.extraction.engines import (
    beautifulsoup_engine,
    goose3_engine,
    html2text_engine,
    html_text_engine,
    inscriptis_engine,
    justext_engine,
    newspaper_engine,
    readability_engine,
    resiliparse_engine,
    trafilatura_engine,
)
from collectors.extraction.engines.base import Engine, EngineUnavailable, ExtractFn

ENGINES: dict[str, Engine] = {
    engine.name: engine
    for engine in (
        trafilatura_engine.ENGINE,
        readability_engine.ENGINE,
        html_text_engine.ENGINE,
        inscriptis_engine.ENGINE,
        html2text_engine.ENGINE,
        justext_engine.ENGINE,
        beautifulsoup_engine.ENGINE,
        resiliparse_engine.ENGINE,
        goose3_engine.ENGINE,
        newspaper_engine.ENGINE,
    )
}

# The three engines whose published rows we can reproduce offline (methodology 4.2).
REFERENCE_ENGINES = ("trafilatura", "readability-lxml", "html-text")


def get_engine(name: str) -> Engine:
    try:
        return ENGINES[name]
    except KeyError:
        known = ", ".join(sorted(ENGINES))
        raise ValueError(f"unknown extraction engine {name!r}; known engines: {known}") from None


__all__ = ["ENGINES", "REFERENCE_ENGINES", "Engine", "EngineUnavailable", "ExtractFn", "get_engine"]
