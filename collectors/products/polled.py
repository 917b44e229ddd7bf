"""The submit-then-poll research API: a run document whose `status` is polled until it is final.

Most research vendors answer a submit with a run document ({id, status, ...}) and serve the same
document at a status path until the status is final. A vendor module states only what differs:
the document's name (for errors), its phase map, where the run id is, the status path, its
auth; and, when the completed document carries the report itself, how to read it
(`completed_report`). Vendors whose shape differs (Nimble's second id, OpenAI's synchronous
mode) override the one method that differs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from collectors.http import ProviderRequest
from collectors.http.json_fields import first_text
from collectors.products.documents import error_message, require_object
from collectors.products.identity import Auth
from collectors.products.research import Phase, Report, RunState, VendorApi


class PolledRunApi(VendorApi):
    document_name: ClassVar[str]  # names the document in a VendorShapeError
    phases: ClassVar[Mapping[str, Phase]]  # the vendor's status (lower-cased) -> its phase
    run_id_keys: ClassVar[tuple[str, ...]] = ("id",)  # the first of these that is text
    status_path: ClassVar[str]  # the poll path, with "{run_id}"
    auth: ClassVar[Auth]

    def read_submit(self, document: Any) -> RunState:
        document = require_object(document, self.document_name)
        status = first_text(document, "status") or ""
        phase = self.phase_of(status)
        return RunState(
            phase=phase,
            run_id=first_text(document, *self.run_id_keys),
            vendor_status=status,
            message=self.failure_message(document),
            report=self.completed_report(document) if phase == "completed" else None,
        )

    def phase_of(self, status: str) -> Phase:
        """A status the map does not know is read as still running: polling goes on until a
        known final status or the deadline."""
        return self.phases.get(status.lower(), "running")

    def failure_message(self, document: dict[str, Any]) -> str:
        return error_message(document)

    def completed_report(self, document: dict[str, Any]) -> Report | None:
        """The report, when the completed document carries it; None when a result call
        fetches it (`result`)."""
        return None

    def poll(self, base_url: str, api_key: str, run: RunState) -> ProviderRequest:
        path = self.status_path.format(run_id=run.run_id)
        return ProviderRequest("GET", f"{base_url.rstrip('/')}{path}", self.poll_headers(api_key))

    def poll_headers(self, api_key: str) -> dict[str, str]:
        return self.auth.json_headers(api_key)
