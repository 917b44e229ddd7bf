"""The research products' base: what a vendor's research module describes to the driver.

A vendor research module (`collectors/vendors/<vendor>/research.py`) subclasses `VendorApi`
(its endpoints and documents), reads documents into `RunState` / `Report`, and names its
zero-cost preflight `Probe`. The one driver that runs every vendor research lane, submit ->
poll -> result, is the DRACO family's `collectors/draco/systems/driver.py`; it imports these
types, the vendor modules never import it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from collectors.http import ProviderRequest, request_id_from_headers
from warehouse.events import ReportCitation

Phase = Literal["queued", "running", "completed", "failed"]
CostBasis = Literal["billed", "list_price", "estimate"]

PREFLIGHT_RUN_ID = "bench-preflight-no-such-run"


class VendorShapeError(ValueError):
    """A 2xx document that is not the shape the vendor documents (-> error_class
    "malformed_body", stage "parse")."""


@dataclass(frozen=True)
class Report:
    text: str  # exactly as the vendor returned it
    citations: tuple[ReportCitation, ...] = ()
    cost_usd: float | None = None
    cost_basis: CostBasis | None = None
    usage: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RunState:
    """What one submit or poll document says about the run."""

    phase: Phase
    run_id: str | None = None
    vendor_status: str = ""
    message: str = ""  # the vendor's failure detail, when it failed
    ids: Mapping[str, str] = field(default_factory=dict)  # other ids later paths need
    report: Report | None = None  # set when this document already carries the result


class VendorApi:
    """One vendor's research endpoints. Subclasses (one per vendor module) are frozen
    dataclasses whose fields are the lane's tier (effort, processor, model ...)."""

    provider: str
    key_env: str  # the key's environment variable (`key_envs` lists accepted fallbacks)
    base_url: str
    version: str  # the adapter's version, bumped when requests or parsing change
    # Result endpoint statuses meaning "not ready, ask again" / "the run failed" (Nimble 409/422).
    result_pending_statuses: frozenset[int] = frozenset()
    result_failed_statuses: frozenset[int] = frozenset()
    # Consecutive 401/403 answers to a status poll treated as a transient failed poll before
    # the lane aborts (0: the first one aborts). 402 (credit) always aborts.
    poll_auth_retries: int = 0

    @property
    def key_envs(self) -> tuple[str, ...]:
        return (self.key_env,)

    def settings(self) -> dict[str, Any]:
        """What makes this lane this lane (tier, endpoint), for the SystemRef."""
        raise NotImplementedError

    def submit(self, base_url: str, api_key: str, instruction: str) -> ProviderRequest:
        raise NotImplementedError

    def read_submit(self, document: Any) -> RunState:
        raise NotImplementedError

    def poll(self, base_url: str, api_key: str, run: RunState) -> ProviderRequest:
        raise NotImplementedError(f"{self.provider} is synchronous: nothing to poll")

    def read_poll(self, document: Any) -> RunState:
        return self.read_submit(document)

    def result(self, base_url: str, api_key: str, run: RunState) -> ProviderRequest | None:
        """The result request, or None when the completed poll document carries the report."""
        return None

    def read_result(self, document: Any) -> Report:
        raise NotImplementedError

    def vendor_request_id(self, headers: Mapping[str, str], document: Any) -> str | None:
        return request_id_from_headers(headers, document)

    def preflight_probe(self, base_url: str, api_key: str) -> Probe | None:
        """The zero-cost request that checks the key before a run (a models or runs list, or
        `unknown_run_probe`, whose 404 only tells that the key was not refused: it reads so), or None when
        the vendor has none: every call starts a paid run, so the lane is reported NOT_CHECKED.
        Each vendor module says which it uses and why."""
        return None


@dataclass(frozen=True)
class Probe:
    """A preflight request and how to read its answer: `ok_statuses` are the expected answers;
    `what` names the check so the report says what the ok rests on. `proves_key`: an expected
    answer shows the key is valid (a list only its owner may read); False for the 404 of an
    unknown run id, which only shows the endpoint answers and the key was not refused."""

    request: ProviderRequest
    what: str
    ok_statuses: frozenset[int] = frozenset({200})
    proves_key: bool = True

    def ok_detail(self, status_code: int | None) -> str:
        if self.proves_key:
            return f"key accepted ({self.what} → HTTP {status_code})"
        return (
            f"reachable, key not refused (HTTP {status_code} for {self.what}; "
            "key validity not proven)"
        )


def unknown_run_probe(api: VendorApi, base_url: str, api_key: str, **ids: str) -> Probe:
    """The status poll of a run id that cannot exist. `ids` are the other ids the poll path
    needs (a real value, or the same impossible id): never a stand-in that makes it pass."""
    run = RunState(phase="queued", run_id=PREFLIGHT_RUN_ID, ids=ids)
    return unknown_id_probe(api.poll(base_url, api_key, run), "an unknown run id")


def unknown_id_probe(request: ProviderRequest, what: str) -> Probe:
    """A probe whose expected answer is a 404 for an id that cannot exist: the endpoint is
    reachable and the key was not refused, nothing more (`proves_key` False)."""
    return Probe(request=request, what=what, ok_statuses=frozenset({404}), proves_key=False)
