"""A loopback fake of three vendors' answer products, shaped as each vendor documents them.

    with AnswerProductsFake(knowledge={question: gold_answer}, memory={"nimble"}) as fake:
        answer_lanes([...], environ=keys, base_urls=fake.base_urls())

* `POST /exa/answer` `{query, text}` -> `{requestId, answer, citations[{id, url, title, text}],
  costDollars{total}}`;
* `POST /tavily/search` `{query, include_answer, max_results}` -> `{query, answer,
  results[{url, title, content, score}], response_time}`;
* `POST /nimble/v2/search` `{query, include_answer, max_results}` -> `{request_id, results[{url,
  title, description, content, metadata}], total_results, answer, answer_citations[{marker,
  result_index}]}` (nimble-python's SearchResponse).

Whether a vendor answers a question correctly is a deterministic draw from (vendor, question,
how many times the vendor has seen it) against the vendor's `skill`. A vendor in `memory`
remembers across requests: each earlier sighting of the question adds `memory_gain` to its
skill (Nimble's agents accumulate sources between runs, methodology §3), so its accuracy climbs
run over run while the others stay flat up to noise. Wrong answers alternate between a wrong
value and a declined answer. The gold answer's source URL is cited when correct.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PATHS = {"/exa/answer": "exa", "/tavily/search": "tavily", "/nimble/v2/search": "nimble"}
DEFAULT_SKILL = {"exa": 0.6, "tavily": 0.5, "nimble": 0.45}


def _draw(*parts: object) -> float:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def source_url(question: str) -> str:
    return f"https://source.example/{hashlib.sha256(question.encode()).hexdigest()[:12]}"


class AnswerProductsFake:
    def __init__(
        self,
        knowledge: dict[str, str],
        *,
        skill: dict[str, float] | None = None,
        memory: set[str] | frozenset[str] = frozenset(),
        memory_gain: float = 0.2,
    ):
        self.knowledge = dict(knowledge)
        self.skill = {**DEFAULT_SKILL, **(skill or {})}
        self.memory = set(memory)
        self.memory_gain = memory_gain
        self.seen: dict[tuple[str, str], int] = {}
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    # --- answers ------------------------------------------------------------------------------

    def respond(self, vendor: str, body: dict[str, Any]) -> dict[str, Any]:
        question = str(body.get("query", ""))
        with self.lock:
            self.requests.append((vendor, body))
            sighting = self.seen.get((vendor, question), 0)
            self.seen[(vendor, question)] = sighting + 1
        skill = self.skill[vendor]
        if vendor in self.memory:
            skill = min(1.0, skill + self.memory_gain * sighting)
        # without memory a vendor's draw is the same every run: only memory moves it
        draw = _draw(vendor, question, sighting if vendor in self.memory else 0)
        gold = self.knowledge.get(question)
        correct = gold is not None and draw < skill
        if correct:
            answer, url = gold, source_url(question)
        elif draw < skill + (1 - skill) / 2:
            answer, url = "The records point to a different answer.", "https://wrong.example/"
        else:
            answer, url = "", "https://unrelated.example/"
        citation = {"url": url, "title": f"About: {question[:40]}"}
        if vendor == "exa":
            return {
                "requestId": f"exa-{sighting}-{abs(hash(question)) % 10**6}",
                "answer": answer,
                "citations": [{"id": url, **citation, "text": answer or "no answer here"}],
                "costDollars": {"total": 0.005},
            }
        if vendor == "tavily":
            return {
                "query": question,
                "answer": answer or None,
                "results": [{**citation, "content": answer or "no answer here", "score": 0.9}],
                "response_time": 0.01,
            }
        result = {
            **citation,
            "description": answer or "no answer here",
            "content": answer or "no answer here",
            "metadata": {
                "country": "US",
                "entity_type": "OrganicResult",
                "locale": "en",
                "position": 1,
            },
        }
        return {
            "request_id": f"00000000-0000-4000-8000-{sighting:012d}",
            "results": [result],
            "total_results": 1,
            "answer": answer or None,
            "answer_citations": [{"marker": 1, "result_index": 0}] if answer else [],
        }

    # --- server -------------------------------------------------------------------------------

    def start(self) -> AnswerProductsFake:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                vendor = PATHS.get(self.path.split("?")[0])
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if vendor is None:
                    return self._send(404, {"error": f"no route {self.path}"})
                auth = self.headers.get("x-api-key") or self.headers.get("Authorization")
                if not auth:
                    return self._send(401, {"error": "missing key"})
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    return self._send(400, {"error": "body is not JSON"})
                self._send(200, fake.respond(vendor, body))

            def _send(self, status: int, document: dict[str, Any]) -> None:
                payload = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *_args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> AnswerProductsFake:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def base_urls(self) -> dict[str, str]:
        assert self._server is not None
        root = f"http://127.0.0.1:{self._server.server_address[1]}"
        return {"exa": f"{root}/exa", "tavily": f"{root}/tavily", "nimble": f"{root}/nimble"}
