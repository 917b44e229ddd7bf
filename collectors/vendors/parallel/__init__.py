"""Parallel (https://parallel.ai): search lanes, the Task API (research systems and the answer
lane), extract (live extraction). `x-api-key: <key>`.

The Task API is sold to two families (the DRACO research lanes, `collectors.draco.systems.
parallel`, and the SimpleQA answer lane `parallel_answer`, `collectors.vendors.parallel.search`), so its
wire shape is written here once: the run paths, the create body and where a result keeps its
citations (parallel-web `task_run.create` / `retrieve` / `result`, `TaskRunResult`).
"""

from __future__ import annotations

from typing import Any

from collectors.http.json_fields import objects
from collectors.http.model import ProviderRequest
from collectors.products.identity import Auth, Sdk

PROVIDER = "parallel"
KEY_ENV = "PARALLEL_API_KEY"
BASE_URL = "https://api.parallel.ai"
AUTH = Auth("x-api-key")
SDK = Sdk(package="parallel-web", version="1.3.7", checked_on="2026-12-01")
# Key-level abort statuses: only the common 401 / 402 (credit) / 403 (collectors.http.
# LANE_ABORT_STATUSES); Parallel documents no status of its own for a key that cannot go on
# (docs.parallel.ai/resources/warnings-and-errors, checked 2026-12-05), so no ABORT_STATUSES.

# --- list prices (USD); dbt's price seeds are held equal to these -------------------------
# Search, per 1,000 queries by mode (providers.md §1, snapshot 2026-09-17).
SEARCH_USD_PER_1K = {"basic": 5.00, "turbo": 1.00}
# Task API, per 1,000 runs by processor [N-DR]; snapshot date unknown (providers.md).
TASK_USD_PER_1K = {
    "lite": 5.0,
    "base": 10.0,
    "core": 25.0,
    "core2x": 50.0,
    "pro": 100.0,
    "ultra": 300.0,
    "ultra2x": 600.0,
    "ultra4x": 1200.0,
    "ultra8x": 2400.0,
}
# The answer lane (`parallel_answer`) is one run per question, billed as its processor's run:
# the same TASK_USD_PER_1K entry, so its seed row has no snapshot date either.
TASK_PRICE_SNAPSHOT: str | None = None
# Extract: no list price recorded (providers.md §3: verify).
EXTRACT_USD_PER_1K: float | None = None
EXTRACT_PRICE_BASIS = "unknown: no list price recorded"
EXTRACT_PRICE_SNAPSHOT = "2026-12-01"

# --- the Task API on the wire (parallel-web 1.3.7 `resources/task_run.py`) -----------------
TASK_RUNS_PATH = "/v1/tasks/runs"


def task_run_body(input: str, *, processor: str, output_schema: dict[str, Any]) -> dict[str, Any]:
    """The body of `task_run.create` (TaskRunCreateParams): input, processor, task_spec."""
    return {"input": input, "processor": processor, "task_spec": {"output_schema": output_schema}}


def create_task_run(
    base_url: str, api_key: str, *, input: str, processor: str, output_schema: dict[str, Any]
) -> ProviderRequest:
    """`task_run.create`: POST {base}/v1/tasks/runs -> a TaskRun (`run_id`, `status`)."""
    body = task_run_body(input, processor=processor, output_schema=output_schema)
    return AUTH.post(base_url, TASK_RUNS_PATH, api_key, body)


def task_run_status(base_url: str, api_key: str, run_id: str) -> ProviderRequest:
    """`task_run.retrieve`: GET {base}/v1/tasks/runs/{run_id} -> the TaskRun."""
    return ProviderRequest(
        "GET", f"{base_url.rstrip('/')}{TASK_RUNS_PATH}/{run_id}", AUTH.json_headers(api_key)
    )


def task_run_result(
    base_url: str, api_key: str, run_id: str, *, wait_s: int | None = None
) -> ProviderRequest:
    """`task_run.result`: GET {base}/v1/tasks/runs/{run_id}/result -> a TaskRunResult. With
    `wait_s` (the SDK's `api_timeout`, sent as `?timeout=`) the call blocks until the run
    completes or answers 408 after that many seconds, as the SDK's `execute` waits."""
    return ProviderRequest(
        "GET",
        f"{base_url.rstrip('/')}{TASK_RUNS_PATH}/{run_id}/result",
        AUTH.json_headers(api_key),
        params=None if wait_s is None else {"timeout": wait_s},
    )


def output_citations(output: Any) -> list[dict[str, Any]]:
    """A TaskRunResult output's citations ({url, title, excerpts}), every basis field's in
    order, as sent: `output.basis[].citations[]`."""
    basis = output.get("basis") if isinstance(output, dict) else None
    return [c for field in objects(basis) for c in objects(field.get("citations"))]
