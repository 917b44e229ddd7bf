"""A loopback fake of the deep-research vendors: async runs that move through queued ->
running -> completed over polls, with faults on demand.

    with FakeResearchServer(polls_to_complete=2) as fake:
        fake.add_faults("parallel", Fault.status(429, retry_after="0"))  # the submit call
        lane = make_lane("parallel_task_core", base_urls=fake.base_urls(), poll_interval_s=0.01)

Each vendor lives under its own prefix (`/nimble/v2/agents/runs`, `/exa/agent/runs`, ...).
A run is `queued` when submitted; poll k (k = 1, 2, ...) reports `running` while
k < polls_to_complete, then the terminal state: `completed`, or the vendor's `failed` status
after `fail_runs(provider, message)`. Result endpoints (Nimble, Parallel) answer 409 / 422 /
200 by that state. Synchronous vendors (You.com, Exa deep-reasoning, OpenAI without
`background`) answer the report at once. `set_report(provider, text, citations)` changes what
completed runs return (e.g. "" for an empty report).

Documents follow the vendors' SDK response models (tests/draco/test_research_sdk_contracts.py
points each SDK at this server and parses what it answers). Each vendor also answers its
preflight probe (a models or runs list, or 404 for an unknown run id).

Faults, recording and key checks are `tests.fakes.fake_server`'s: the same `Fault`
values, queued per target (provider, exact path or "*") and consumed one per request in order,
`None` meaning "answer normally".
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.fake_server import Fault, LoopbackFake, _Handler, _State

__all__ = ["DEFAULT_CITATIONS", "DEFAULT_REPORT", "FakeResearchServer", "Fault"]

# provider -> (auth header, value prefix)
AUTH: dict[str, tuple[str, str]] = {
    "nimble": ("authorization", "Bearer "),
    "exa": ("x-api-key", ""),
    "parallel": ("x-api-key", ""),
    "openai": ("authorization", "Bearer "),
    "gemini": ("x-goog-api-key", ""),
    "valyu": ("x-api-key", ""),
    "youcom": ("x-api-key", ""),
    "tavily": ("authorization", "Bearer "),
    "perplexity": ("authorization", "Bearer "),
}
DEFAULT_REPORT = (
    "# Findings\n\nThe first finding is supported by a source [1]. "
    "A second finding is supported by another [2].\n"
)
DEFAULT_CITATIONS = (
    {"url": "https://example.org/source-a", "title": "Source A"},
    {"url": "https://example.org/source-b", "title": "Source B"},
)

# Status words each vendor uses for (queued, running, completed, failed).
_STATUS_WORDS: dict[str, tuple[str, str, str, str]] = {
    "nimble": ("queued", "running", "completed", "failed"),
    "exa": ("queued", "running", "completed", "failed"),
    "parallel": ("queued", "running", "completed", "failed"),
    "openai": ("queued", "in_progress", "completed", "failed"),
    "gemini": ("in_progress", "in_progress", "completed", "failed"),
    "perplexity": ("queued", "in_progress", "completed", "failed"),
    "valyu": ("queued", "running", "completed", "failed"),
    "tavily": ("pending", "in_progress", "completed", "failed"),
}


@dataclass
class _Run:
    provider: str
    run_id: str
    agent_id: str = ""
    polls: int = 0
    model: str = ""
    effort: str = ""


@dataclass
class _ResearchState(_State):
    polls_to_complete: int = 2
    runs: dict[str, _Run] = field(default_factory=dict)
    failing: dict[str, str] = field(default_factory=dict)
    failing_status: dict[str, str] = field(default_factory=dict)
    reports: dict[str, tuple[str, tuple[dict[str, str], ...]]] = field(default_factory=dict)
    ids: Any = field(default_factory=lambda: itertools.count(1))

    def report(self, provider: str) -> tuple[str, tuple[dict[str, str], ...]]:
        return self.reports.get(provider, (DEFAULT_REPORT, DEFAULT_CITATIONS))


class FakeResearchServer(LoopbackFake):
    def __init__(self, *, polls_to_complete: int = 2, keys: dict[str, str] | None = None):
        self._state = _ResearchState(
            keys=dict(keys or {}), record=True, polls_to_complete=polls_to_complete
        )

    def handler_class(self) -> type[_Handler]:
        return _ResearchHandler

    def base_urls(self) -> dict[str, str]:
        return {provider: self.base_url_for(provider) for provider in AUTH}

    # --- behaviour ----------------------------------------------------------------------------

    def fail_runs(
        self, provider: str, message: str = "the run failed", *, status: str | None = None
    ) -> None:
        """Runs of `provider` end failed; `status` is the vendor's terminal status word to
        report instead of its plain "failed" (e.g. Gemini's "budget_exceeded")."""
        with self._state.lock:
            self._state.failing[provider] = message
            if status is not None:
                self._state.failing_status[provider] = status

    def set_report(
        self, provider: str, text: str, citations: tuple[dict[str, str], ...] = DEFAULT_CITATIONS
    ) -> None:
        with self._state.lock:
            self._state.reports[provider] = (text, citations)

    def set_polls_to_complete(self, polls: int) -> None:
        with self._state.lock:
            self._state.polls_to_complete = polls

    def reset(self, *, keys: dict[str, str] | None = None) -> None:
        state = self._state
        with state.lock:
            state.queued.clear()
            state.permanent.clear()
            state.requests.clear()
            state.runs.clear()
            state.failing.clear()
            state.failing_status.clear()
            state.reports.clear()
            state.polls_to_complete = 2
            if keys is not None:
                state.keys = dict(keys)


class _ResearchHandler(_Handler):
    state: _ResearchState

    def _route_of(self, path: str) -> tuple[str | None, str]:
        provider, _, vendor_path = path.lstrip("/").partition("/")
        return (provider if provider in AUTH else None), "/" + vendor_path

    # --- routing ------------------------------------------------------------------------------

    def _answer(self, provider: str | None, path: str, query: str, body: bytes) -> None:
        if provider is None:
            return self._send_json(404, {"error": "unknown vendor prefix"})
        if not self._key_ok(provider, *AUTH[provider]):
            return self._send_json(401, {"error": "invalid API key"})
        try:
            request = json.loads(body) if body else {}
        except ValueError:
            return self._send_json(400, {"error": "body is not JSON"})
        for method, pattern, handler in _ROUTES[provider]:
            match = re.fullmatch(pattern, path)
            if match and self.command == method:
                status, document = handler(self, request, *match.groups())
                return self._send_json(status, document)
        return self._send_json(404, {"error": f"no route {self.command} {path}"})

    # --- run bookkeeping ----------------------------------------------------------------------

    def _new_run(self, provider: str, prefix: str, model: str = "", effort: str = "") -> _Run:
        with self.state.lock:
            n = next(self.state.ids)
            run = _Run(provider, f"{prefix}{n}", agent_id=f"wsa_{n}", model=model, effort=effort)
            self.state.runs[run.run_id] = run
        return run

    def _advance(self, run_id: str) -> tuple[_Run | None, str]:
        """Count one status poll; returns the run and its phase afterwards."""
        with self.state.lock:
            run = self.state.runs.get(run_id)
            if run is None:
                return None, ""
            run.polls += 1
            return run, self._phase(run)

    def _phase(self, run: _Run) -> str:
        if run.polls == 0:
            return "queued"
        if run.polls < self.state.polls_to_complete:
            return "running"
        return "failed" if run.provider in self.state.failing else "completed"

    def _word(self, provider: str, phase: str) -> str:
        if phase == "failed" and provider in self.state.failing_status:
            return self.state.failing_status[provider]
        words = _STATUS_WORDS[provider]
        return words[("queued", "running", "completed", "failed").index(phase)]

    def _report(self, provider: str) -> tuple[str, list[dict[str, str]]]:
        text, citations = self.state.report(provider)
        return text, [dict(c) for c in citations]


# --- vendor documents (the documented fields, providers.md §2) ---------------------------------


_CREATED = "2026-12-01T00:00:00Z"
Document = Callable[["_ResearchHandler", _Run, str], dict]


def _status_poll(document: Document, unknown_run: Any):
    """A vendor's status endpoint: each GET counts one poll of the run and answers the run's
    document in its new phase; an unknown run id gets a 404 with the vendor's error body."""

    def answer(h: _ResearchHandler, request: dict, run_id: str):
        run, phase = h._advance(run_id)
        if run is None:
            return 404, unknown_run
        return 200, document(h, run, phase)

    return answer


def _nimble_run(h: _ResearchHandler, run: _Run, phase: str) -> dict:
    """nimble-python `AgentRunResponse` / `RunGetResponse`."""
    document: dict[str, Any] = {
        "id": run.run_id,
        "web_search_agent_id": run.agent_id,
        "interaction_id": f"int_{run.run_id}",
        "created_at": _CREATED,
        "effort": run.effort or "high",
        "status": h._word("nimble", phase),
        "is_active": phase in ("queued", "running"),
    }
    if phase == "failed":
        document["error"] = {"message": h.state.failing["nimble"], "ref_id": run.run_id}
    return document


def _nimble_submit(h: _ResearchHandler, request: dict) -> tuple[int, dict]:
    run = h._new_run("nimble", "task_run_", effort=str(request.get("effort") or ""))
    return 200, _nimble_run(h, run, "queued")


def _nimble_get(h: _ResearchHandler, request: dict, agent_id: str, run_id: str):
    run = h.state.runs.get(run_id)
    if run is None or run.agent_id != agent_id:
        return 404, {"error": "no such run"}
    run, phase = h._advance(run_id)
    return 200, _nimble_run(h, run, phase)


def _nimble_agents(h: _ResearchHandler, request: dict):
    return 200, {"items": [], "limit": 20, "offset": 0, "total": 0}


def _nimble_result(h: _ResearchHandler, request: dict, agent_id: str, run_id: str):
    run = h.state.runs.get(run_id)
    if run is None or run.agent_id != agent_id:
        return 404, {"error": "no such run"}
    phase = h._phase(run)
    if phase in ("queued", "running"):
        return 409, {"error": "run is still active"}
    if phase == "failed":
        return 422, {"error": h.state.failing["nimble"]}
    text, citations = h._report("nimble")
    run_document = _nimble_run(h, run, "completed")
    return 200, {
        "run": {**run_document, "prompt": None},
        "output": {
            "type": "text",
            "content": text,
            "trust": {
                "claims": [],
                "confidence": "high",
                "reasoning": "",
                "sources": [{**c, "type": "primary"} for c in citations],
            },
        },
    }


def _exa_agent_document(h: _ResearchHandler, run: _Run, phase: str) -> dict:
    document: dict[str, Any] = {"id": run.run_id, "status": h._word("exa", phase)}
    if phase == "completed":
        text, citations = h._report("exa")
        document["output"] = {
            "text": text,
            "grounding": [{"field": "text", "citations": citations}],
        }
        document["costDollars"] = {"total": 0.5}
    elif phase == "failed":
        document["error"] = {"message": h.state.failing["exa"]}
    return document


def _exa_agent_submit(h: _ResearchHandler, request: dict):
    run = h._new_run("exa", "run_")
    return 200, _exa_agent_document(h, run, "queued")


_exa_agent_get = _status_poll(_exa_agent_document, {"error": "no such run"})


def _exa_agent_list(h: _ResearchHandler, request: dict):
    return 200, {"object": "list", "data": [], "hasMore": False, "nextCursor": None}


def _exa_search(h: _ResearchHandler, request: dict):
    text, citations = h._report("exa")
    return 200, {
        "requestId": "req_exa_1",
        "results": [],
        "output": {"content": text, "grounding": [{"field": "content", "citations": citations}]},
        "costDollars": {"total": 0.015},
    }


def _parallel_document(h: _ResearchHandler, run: _Run, phase: str) -> dict:
    document: dict[str, Any] = {
        "run_id": run.run_id,
        "status": h._word("parallel", phase),
        "is_active": phase in ("queued", "running"),
        "processor": run.model,
    }
    if phase == "failed":
        document["error"] = {"message": h.state.failing["parallel"]}
    return document


def _parallel_submit(h: _ResearchHandler, request: dict):
    run = h._new_run("parallel", "trun_", model=str(request.get("processor", "")))
    return 200, _parallel_document(h, run, "queued")


_parallel_get = _status_poll(_parallel_document, {"error": "no such run"})


def _parallel_result(h: _ResearchHandler, request: dict, run_id: str):
    run = h.state.runs.get(run_id)
    if run is None:
        return 404, {"error": "no such run"}
    text, citations = h._report("parallel")
    return 200, {
        "run": _parallel_document(h, run, h._phase(run)),
        "output": {
            "type": "text",
            "content": text,
            "basis": [{"field": "content", "citations": citations, "reasoning": ""}],
        },
    }


def _openai_document(h: _ResearchHandler, run: _Run, phase: str) -> dict:
    document: dict[str, Any] = {
        "id": run.run_id,
        "object": "response",
        "status": h._word("openai", phase),
        "model": run.model,
        "output": [],
    }
    if phase == "completed":
        text, citations = h._report("openai")
        annotations = [
            {"type": "url_citation", "url": c["url"], "title": c["title"], "start_index": 0}
            for c in citations
        ]
        document["output"] = [
            {"type": "web_search_call", "id": "ws_1", "status": "completed"},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": annotations}],
            },
        ]
        document["usage"] = {"input_tokens": 1000, "output_tokens": 2000, "total_tokens": 3000}
    elif phase == "failed":
        document["error"] = {"code": "server_error", "message": h.state.failing["openai"]}
    return document


def _openai_submit(h: _ResearchHandler, request: dict):
    run = h._new_run("openai", "resp_", model=str(request.get("model", "")))
    if request.get("background"):
        return 200, _openai_document(h, run, "queued")
    return 200, _openai_document(h, run, "completed")


_openai_get = _status_poll(_openai_document, {"error": {"message": "no such response"}})


def _gemini_document(h: _ResearchHandler, run: _Run, phase: str) -> dict:
    """google-genai `Interaction`: `steps[]` (the GET answer carries the whole timeline)."""
    now = _CREATED
    document: dict[str, Any] = {
        "id": run.run_id,
        "status": h._word("gemini", phase),
        "agent": run.model,
        "created": now,
        "updated": now,
        "steps": [{"type": "user_input", "content": [{"type": "text", "text": "..."}]}],
    }
    if phase == "completed":
        text, citations = h._report("gemini")
        document["steps"] += [
            {"type": "thought", "summary": [{"type": "text", "text": "planning"}]},
            {
                "type": "model_output",
                "content": [
                    {
                        "type": "text",
                        "text": text,
                        "annotations": [
                            {"type": "url_citation", "url": c["url"], "title": c["title"]}
                            for c in citations
                        ],
                    }
                ],
            },
        ]
        document["usage"] = {"total_tokens": 4321}
    elif phase == "failed":
        document["errors"] = [{"message": h.state.failing["gemini"]}]
    return document


def _gemini_submit(h: _ResearchHandler, request: dict):
    run = h._new_run("gemini", "v1_interaction_", model=str(request.get("agent") or ""))
    return 200, _gemini_document(h, run, "queued")


_gemini_get = _status_poll(_gemini_document, {"error": {"message": "no such interaction"}})


def _gemini_models(h: _ResearchHandler, request: dict):
    return 200, {"models": [{"name": "models/gemini-3.5-flash"}]}


def _valyu_document(h: _ResearchHandler, run: _Run, phase: str) -> dict:
    document: dict[str, Any] = {"deepresearch_id": run.run_id, "status": h._word("valyu", phase)}
    if phase == "completed":
        text, citations = h._report("valyu")
        document["output"] = text
        document["sources"] = [{**c, "snippet": "..."} for c in citations]
        document["cost"] = 2.5
    elif phase == "failed":
        document["error"] = h.state.failing["valyu"]
    return document


def _valyu_submit(h: _ResearchHandler, request: dict):
    run = h._new_run("valyu", "dr_")
    return 200, _valyu_document(h, run, "queued")


_valyu_get = _status_poll(_valyu_document, {"error": "no such task"})


def _valyu_list(h: _ResearchHandler, request: dict):
    return 200, []  # the SDK reads the body as the list itself


def _youcom_task(h: _ResearchHandler, request: dict, task_id: str):
    return 404, {"detail": "task not found"}


def _youcom_research(h: _ResearchHandler, request: dict):
    text, citations = h._report("youcom")
    return 200, {"output": {"content": text, "content_type": "text", "sources": citations}}


def _tavily_document(h: _ResearchHandler, run: _Run, phase: str) -> dict:
    document: dict[str, Any] = {"request_id": run.run_id, "status": h._word("tavily", phase)}
    if phase == "completed":
        text, citations = h._report("tavily")
        document["content"] = text
        document["sources"] = citations
    elif phase == "failed":
        document["error"] = h.state.failing["tavily"]
    return document


def _tavily_submit(h: _ResearchHandler, request: dict):
    run = h._new_run("tavily", "tvly_")
    return 200, _tavily_document(h, run, "queued")  # tavily-python accepts only 200


_tavily_get = _status_poll(_tavily_document, {"error": "no such request"})


def _perplexity_document(h: _ResearchHandler, run: _Run, phase: str) -> dict:
    """perplexityai `ResponsesResponseOutput`."""
    document: dict[str, Any] = {
        "id": run.run_id,
        "object": "response",
        "created_at": 1_764_547_200,
        "model": "perplexity/deep-research",
        "preset": run.model,
        "background": True,
        "status": h._word("perplexity", phase),
        "output": [],
    }
    if phase == "completed":
        text, citations = h._report("perplexity")
        document["output"] = [
            {
                "type": "search_results",
                "queries": ["q"],
                "results": [
                    {"id": n, "url": c["url"], "title": c["title"], "snippet": "..."}
                    for n, c in enumerate(citations, start=1)
                ],
            },
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [
                    {
                        "type": "output_text",
                        "text": text,
                        "annotations": [
                            {"type": "url_citation", "url": c["url"], "title": c["title"]}
                            for c in citations
                        ],
                    }
                ],
            },
        ]
        document["usage"] = {
            "input_tokens": 100,
            "output_tokens": 1000,
            "total_tokens": 1100,
            "cost": {
                "currency": "USD",
                "input_cost": 0.01,
                "output_cost": 0.2,
                "total_cost": 0.71,
            },
        }
    elif phase == "failed":
        document["error"] = {"message": h.state.failing["perplexity"], "code": "failed"}
    return document


def _perplexity_submit(h: _ResearchHandler, request: dict):
    run = h._new_run("perplexity", "resp_", model=str(request.get("preset") or ""))
    return 200, _perplexity_document(h, run, "queued")


_perplexity_get = _status_poll(_perplexity_document, {"error": {"message": "no such response"}})


def _perplexity_models(h: _ResearchHandler, request: dict):
    return 200, {"object": "list", "data": []}


def _openai_model(h: _ResearchHandler, request: dict, model: str):
    return 200, {"id": model, "object": "model", "created": 1_764_547_200, "owned_by": "openai"}


_ID = r"([^/]+)"
_ROUTES: dict[str, list[tuple[str, str, Any]]] = {
    "nimble": [
        ("POST", r"/v2/agents/runs", _nimble_submit),
        ("GET", r"/v2/agents", _nimble_agents),
        ("GET", rf"/v2/agents/{_ID}/runs/{_ID}", _nimble_get),
        ("GET", rf"/v2/agents/{_ID}/runs/{_ID}/result", _nimble_result),
    ],
    "exa": [
        ("POST", r"/agent/runs", _exa_agent_submit),
        ("GET", r"/agent/runs", _exa_agent_list),
        ("GET", rf"/agent/runs/{_ID}", _exa_agent_get),
        ("POST", r"/search", _exa_search),
    ],
    "parallel": [
        ("POST", r"/v1/tasks/runs", _parallel_submit),
        ("GET", rf"/v1/tasks/runs/{_ID}", _parallel_get),
        ("GET", rf"/v1/tasks/runs/{_ID}/result", _parallel_result),
    ],
    "openai": [
        ("POST", r"/v1/responses", _openai_submit),
        ("GET", rf"/v1/responses/{_ID}", _openai_get),
        ("GET", rf"/v1/models/{_ID}", _openai_model),
    ],
    "gemini": [
        ("POST", r"/v1/interactions", _gemini_submit),
        ("GET", rf"/v1/interactions/{_ID}", _gemini_get),
        ("GET", r"/v1/models", _gemini_models),
    ],
    "valyu": [
        ("POST", r"/v1/deepresearch/tasks", _valyu_submit),
        ("GET", rf"/v1/deepresearch/tasks/{_ID}/status", _valyu_get),
        ("GET", r"/v1/deepresearch/list", _valyu_list),
    ],
    "youcom": [
        ("POST", r"/v1/research", _youcom_research),
        ("GET", rf"/v1/research/{_ID}", _youcom_task),
    ],
    "tavily": [
        ("POST", r"/research", _tavily_submit),
        ("GET", rf"/research/{_ID}", _tavily_get),
    ],
    "perplexity": [
        ("POST", r"/v1/responses", _perplexity_submit),
        ("GET", rf"/v1/responses/{_ID}", _perplexity_get),
        ("GET", r"/v1/models", _perplexity_models),
    ],
}
