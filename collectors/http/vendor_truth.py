"""Which vendor SDK release a client was last checked against, and whether it is still the one
installed.

A vendor module declares what its request builder and parser were held against:

    SDK_CHECK = SdkCheck(
        package="exa-py",  # the distribution name on the package registry
        version="2.27.0",
        docs="https://exa.ai/docs/reference/search",
        checked_on="2026-12-01",
    )

The SDKs are development dependencies only (pyproject.toml's `dev` extra): the collectors never import
them, the contract tests do. `stale_checks()` lists every declared check whose SDK is installed
at another version (or not at all), so bumping an SDK fails a test until someone re-reads the
SDK against our client and updates the record.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from importlib import metadata
from types import ModuleType

# Packages whose modules may declare SDK_CHECK (every vendor capability module: search, answer,
# research, extract; the LLM backends).
VENDOR_PACKAGES = ("collectors.vendors", "collectors.llm")


@dataclass(frozen=True)
class SdkCheck:
    package: str
    version: str
    docs: str
    checked_on: str  # ISO date

    def __post_init__(self) -> None:
        date.fromisoformat(self.checked_on)  # a typo'd date fails at import, not in review
        if not self.docs.startswith("https://"):
            raise ValueError(f"SdkCheck({self.package}): docs must be an https URL")

    def installed(self) -> str | None:
        try:
            return metadata.version(self.package)
        except metadata.PackageNotFoundError:
            return None


@dataclass(frozen=True)
class DeclaredCheck:
    module: str
    check: SdkCheck

    def problem(self) -> str | None:
        installed = self.check.installed()
        if installed == self.check.version:
            return None
        found = "not installed" if installed is None else f"installed {installed}"
        return (
            f"{self.module}: checked against {self.check.package}=={self.check.version} "
            f"({self.check.docs}, {self.check.checked_on}) but {found}; re-check the client "
            "against the SDK, then update SDK_CHECK"
        )


def declared_checks(packages: Iterable[str] = VENDOR_PACKAGES) -> list[DeclaredCheck]:
    found = []
    for package_name in packages:
        try:
            package = importlib.import_module(package_name)
        except ModuleNotFoundError:
            continue
        for module in _modules(package):
            checks = getattr(module, "SDK_CHECK", ())
            for check in checks if isinstance(checks, tuple) else (checks,):
                if isinstance(check, SdkCheck):
                    found.append(DeclaredCheck(module.__name__, check))
    return found


def stale_checks(packages: Iterable[str] = VENDOR_PACKAGES) -> list[str]:
    return [p for p in (c.problem() for c in declared_checks(packages)) if p is not None]


def _modules(package: ModuleType) -> list[ModuleType]:
    modules = [package]
    for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
        modules.append(importlib.import_module(info.name))
    return modules
