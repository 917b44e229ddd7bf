"""A loopback fake of the two LLM API shapes the SDKs speak, with delays and faults.

    with FakeLlmServer(responder) as fake:
        AnthropicBackend(base_url=fake.base_url)            # POST /v1/messages
        OpenAIBackend(base_url=f"{fake.base_url}/v1")       # POST /v1/chat/completions

`responder(prompt_text) -> completion text`. Faults are queued status codes consumed one per
request (None = answer normally), or targeted: `fail_when(status, "text", ...)` fails the first
request whose prompt contains every given text (order-independent under concurrency). Every request is recorded (path, headers, JSON body and its raw bytes).
Responses are shaped like the vendors' documented bodies (id, model, usage, request id header).
Run standalone (`python -m tests.qa.llm_fake --delay 0.2`) it prints `PORT <n>` and serves.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_IDS = itertools.count(1)
# Models the fake treats as OpenAI reasoning models (gpt-5.x, o-series): like the real API they
# reject `max_tokens` and any temperature but 1 with a 400 in OpenAI's error shape. The shapes
# are the API's own, as quoted verbatim in public bug reports (e.g. griptape-ai/ComfyUI-Griptape
# #312, gabrii/Cursor-Azure-GPT-5 #33).
REASONING_MODELS = frozenset({"gpt-5", "gpt-5.1", "gpt-5.2", "gpt-5-mini", "o1", "o3", "o4-mini"})


def openai_parameter_error(body: dict[str, Any]) -> dict[str, Any] | None:
    """The 400 body the real API sends for a reasoning model's unsupported parameter."""
    if body.get("model") not in REASONING_MODELS:
        return None
    if "max_tokens" in body:
        error = {
            "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            "type": "invalid_request_error",
            "param": "max_tokens",
            "code": "unsupported_parameter",
        }
    elif "temperature" in body and body["temperature"] != 1:
        value = body["temperature"]
        error = {
            "message": f"Unsupported value: 'temperature' does not support {value} with this "
            "model. Only the default (1) value is supported.",
            "type": "invalid_request_error",
            "param": "temperature",
            "code": "unsupported_value",
        }
    else:
        return None
    return {"error": error}


def default_responder(prompt: str) -> str:
    """Grades for grader prompts, a score for relevance prompts, else a short answer."""
    if "Final score:" in prompt:
        return "The result names the subject.\nFinal score: 2"
    if "Gold target:" in prompt:
        return "A"
    if "Search results:" in prompt:
        return "RuntimeError"
    return "I don't know"


@dataclass
class RecordedCall:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    raw: bytes = b""  # the body's bytes exactly as received

    @property
    def prompt(self) -> str:
        return "\n".join(str(m.get("content", "")) for m in self.body.get("messages", []))


@dataclass
class _State:
    responder: Callable[[str], str]
    delay_s: float = 0.0
    faults: deque = field(default_factory=deque)
    targeted: list = field(default_factory=list)  # [(status, (substrings...))], one use each
    echo_key_statuses: set = field(default_factory=set)  # faults whose message echoes the key
    calls: list[RecordedCall] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Handler(BaseHTTPRequestHandler):
    state: _State
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # small keep-alive writes must not wait for delayed ACKs

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        body = json.loads(raw or b"{}")
        call = RecordedCall(self.path, {k.lower(): v for k, v in self.headers.items()}, body, raw)
        with self.state.lock:
            self.state.calls.append(call)
            fault = self.state.faults.popleft() if self.state.faults else None
            for index, (status, needles) in enumerate(self.state.targeted):
                if fault is None and all(needle in call.prompt for needle in needles):
                    fault = status
                    del self.state.targeted[index]
                    break
        if self.state.delay_s:
            time.sleep(self.state.delay_s)
        if fault is not None:
            message = f"fault {fault}"
            if fault in self.state.echo_key_statuses:
                # The worst case of a vendor's "Incorrect API key provided: <key>" answer.
                presented = call.headers.get("x-api-key") or call.headers.get(
                    "authorization", ""
                ).removeprefix("Bearer ")
                message = f"Incorrect API key provided: {presented}"
            self._send(
                fault,
                {
                    "type": "error",
                    "error": {"type": "fake_fault", "message": message, "code": "invalid_api_key"},
                },
            )
            return
        text = self.state.responder(call.prompt)
        n = next(_IDS)
        if self.path.endswith("/v1/messages"):
            document = {
                "id": f"msg_fake{n}",
                "type": "message",
                "role": "assistant",
                "model": body.get("model"),
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 11 + n % 3, "output_tokens": 3},
            }
            self._send(200, document, {"request-id": f"req_fake{n}"})
        elif self.path.endswith("/chat/completions"):
            rejection = openai_parameter_error(body)
            if rejection is not None:
                self._send(400, rejection, {"x-request-id": f"req_oai{n}"})
                return
            document = {
                "id": f"chatcmpl-fake{n}",
                "object": "chat.completion",
                "created": 1_700_000_000,
                "model": body.get("model"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 21, "completion_tokens": 4, "total_tokens": 25},
            }
            self._send(200, document, {"x-request-id": f"req_oai{n}"})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def _send(self, status: int, document: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


class FakeLlmServer:
    def __init__(
        self, responder: Callable[[str], str] = default_responder, *, delay_s: float = 0.0
    ):
        self.state = _State(responder=responder, delay_s=delay_s)
        self._server: ThreadingHTTPServer | None = None

    def start(self, port: int = 0) -> FakeLlmServer:
        handler = type("Handler", (_Handler,), {"state": self.state})
        self._server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self._server.daemon_threads = True
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeLlmServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def add_faults(self, *statuses: int | None) -> None:
        with self.state.lock:
            self.state.faults.extend(statuses)

    def echo_key_in(self, *statuses: int) -> None:
        """Faults with these statuses answer with the presented key in the error message."""
        with self.state.lock:
            self.state.echo_key_statuses.update(statuses)

    def fail_when(self, status: int, *needles: str) -> None:
        with self.state.lock:
            self.state.targeted.append((status, needles))

    @property
    def calls(self) -> list[RecordedCall]:
        with self.state.lock:
            return list(self.state.calls)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.0)
    args = parser.parse_args(argv)
    server = FakeLlmServer(delay_s=args.delay).start()
    print(f"PORT {server.base_url.rsplit(':', 1)[1]}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
