"""The engine protocol: one local extractor = a name, an installed version, settings, a callable.

`load()` does the (slow) library import once, before any timing, so `latency_ms` measures
extraction only and a missing library fails the run before it starts, not on item 1.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from warehouse.events import SystemRef

# extract(html, url) -> text; `url` is the page's original address, for engines whose
# upstream benchmark call passes it (newspaper4k); others ignore it.
ExtractFn = Callable[[str, str | None], str | None]


def installed_version(distribution: str) -> str | None:
    """Version of a library the output depends on (e.g. lxml), for settings; None if absent."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


class EngineUnavailable(RuntimeError):
    """The engine's library is not installed (or fails to import)."""


def distribution_version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        raise EngineUnavailable(
            f"python distribution {distribution!r} is not installed; "
            "install the package with its dependencies: pip install -c requirements.lock.txt ."
        ) from None


@dataclass(eq=False)
class Engine:
    name: str
    distribution: str
    # Everything that shapes the output besides the version; recorded in every event and
    # part of the run spec, so changing a setting starts a different run.
    settings: Mapping[str, Any]
    build: Callable[[], ExtractFn] = field(repr=False)
    _loaded: ExtractFn | None = field(default=None, init=False, repr=False)

    @property
    def version(self) -> str:
        return distribution_version(self.distribution)

    def system_ref(self) -> SystemRef:
        return SystemRef(name=self.name, version=self.version, settings=dict(self.settings))

    def load(self) -> ExtractFn:
        if self._loaded is None:
            try:
                self._loaded = self.build()
            except ImportError as exc:
                raise EngineUnavailable(f"engine {self.name!r} cannot be imported: {exc}") from exc
        return self._loaded

    def extract(self, html: str, url: str | None = None) -> str | None:
        text = self.load()(html, url)
        if text is not None and not isinstance(text, str):
            raise TypeError(f"engine {self.name!r} returned {type(text).__name__}, expected str")
        return text
