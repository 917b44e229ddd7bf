"""Check every lane and every LLM role with one minimal call before a paid run
(methodology 5.17: a key that fails at run time after spend is a flaw we do not repeat).

Vendor lanes use `SearchClient.preflight` (one 1-result search, no retries; billed); LLM roles
one 5-token completion; offline lanes and roles report what they are. Nothing is logged: a
preflight is not part of any run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from collectors.llm.base import LlmCallError, PromptRef
from collectors.qa.lanes import QaLane
from warehouse.canonical import sha256_hex

PREFLIGHT_PROMPT = "Reply with the single word OK."


@dataclass(frozen=True)
class PreflightCheck:
    component: str  # "lane:<name>" | "synthesizer" | "grader" | "relevance_judge"
    ok: bool
    status: str  # ok | offline | missing_key | auth_failed | rejected | unreachable | error
    detail: str


async def _lane_checks(lanes: Sequence[QaLane]) -> list[PreflightCheck]:
    checks: list[PreflightCheck] = []
    entered: dict[int, object] = {}
    try:
        for lane in lanes:
            resource = getattr(lane, "resource", None)
            if resource is None:
                detail = "no search call" if not lane.needs_search else f"local ({lane.provider})"
                checks.append(PreflightCheck(f"lane:{lane.name}", True, "offline", detail))
                continue
            if id(resource) not in entered:
                entered[id(resource)] = await resource.__aenter__()
            report = await resource.preflight(lane.name)
            checks.append(
                PreflightCheck(f"lane:{lane.name}", report.ok, report.status, report.detail)
            )
    finally:
        for resource in entered.values():
            await resource.__aexit__(None, None, None)
    return checks


def _role_check(component: str, role: object) -> PreflightCheck:
    client = getattr(role, "client", None)
    if client is None:
        return PreflightCheck(component, True, "offline", role.system_ref().name)
    try:
        record = client.complete(
            PREFLIGHT_PROMPT,
            prompt=PromptRef("preflight@1", sha256_hex(PREFLIGHT_PROMPT)),
            model=role.model,
            temperature=role.temperature,
            max_tokens=5,
        )
    except LlmCallError as exc:
        status = "auth_failed" if exc.is_auth else "rejected" if exc.landed else "unreachable"
        return PreflightCheck(component, False, status, str(exc))
    return PreflightCheck(
        component,
        True,
        "ok",
        f"{record.provider}:{record.model} answered {record.raw_completion[:20]!r}",
    )


def preflight_qa(
    lanes: Sequence[QaLane],
    *,
    synthesizer: object,
    grader: object,
    relevance_judge: object | None = None,
) -> list[PreflightCheck]:
    checks = asyncio.run(_lane_checks(lanes))
    roles = [("synthesizer", synthesizer), ("grader", grader)]
    if relevance_judge is not None:
        roles.append(("relevance_judge", relevance_judge))
    return checks + [_role_check(name, role) for name, role in roles]
