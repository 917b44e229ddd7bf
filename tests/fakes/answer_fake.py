"""A loopback fake of four vendors' answer products, shaped as each vendor documents them.

    with AnswerProductsFake(knowledge={question: gold_answer}, memory={"nimble"}) as fake:
        answer_lanes([...], environ=keys, base_urls=fake.base_urls())

* `POST /exa/answer` `{query, text}` -> `{requestId, answer, citations[{id, url, title, text}],
  costDollars{total}}`;
* `POST /tavily/search` `{query, include_answer, max_results}` -> `{query, answer,
  results[{url, title, content, score}], response_time}`;
* `POST /nimble/v2/search` `{query, include_answer, max_results}` -> `{request_id, results[{url,
  title, description, content, metadata}], total_results, answer, answer_citations[{marker,
  result_index}]}` (nimble-python's SearchResponse);
* Parallel's Task API, as parallel-web 1.3.7 speaks it: `POST /parallel/v1/tasks/runs` `{input,
  processor, task_spec}` -> a TaskRun `{run_id: "trun_…", interaction_id, status: "queued",
  is_active, processor, created_at, modified_at}`; `GET /parallel/v1/tasks/runs/{run_id}` -> the
  TaskRun (completed); `GET /parallel/v1/tasks/runs/{run_id}/result[?timeout=s]` -> a
  TaskRunResult `{run, output{type: "text", content, basis[{field: "output", reasoning,
  citations[{url, title, excerpts}], confidence}]}}`, after `pending_results` 408 answers per run
  (the API's "not finished within timeout"); an unknown run id is a 404.

A vendor in `refuse` answers every request with that status (a refused key: 401, 402, 403);
`refuse={"parallel/result": 402}` refuses only Parallel's result calls (a run submitted, then the
key's credit gone).

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
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

PATHS = {
    "/exa/answer": "exa",
    "/tavily/search": "tavily",
    "/nimble/v2/search": "nimble",
    "/parallel/v1/tasks/runs": "parallel",
}
PARALLEL_RUN = re.compile(r"^/parallel/v1/tasks/runs/(?P<run_id>[^/]+)(?P<result>/result)?$")
DEFAULT_SKILL = {"exa": 0.6, "tavily": 0.5, "nimble": 0.45, "parallel": 0.55}
CREATED_AT = "2026-12-05T00:00:00Z"


@dataclass
class _TaskRun:
    run_id: str
    processor: str
    question: str
    answer: str
    url: str
    pending: int  # 408 answers left before the result is given
    result_calls: list[dict[str, list[str]]] = field(default_factory=list)  # their query params


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
        pending_results: int = 0,
        refuse: dict[str, int] | None = None,
    ):
        self.knowledge = dict(knowledge)
        self.skill = {**DEFAULT_SKILL, **(skill or {})}
        self.memory = set(memory)
        self.memory_gain = memory_gain
        self.pending_results = pending_results
        self.refuse = dict(refuse or {})
        self.seen: dict[tuple[str, str], int] = {}
        self.requests: list[tuple[str, dict[str, Any]]] = []  # every POST body, in order
        self.runs: dict[str, _TaskRun] = {}  # Parallel's task runs by run_id
        self.lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    # --- answers ------------------------------------------------------------------------------

    def respond(self, vendor: str, body: dict[str, Any]) -> dict[str, Any]:
        question = str(body.get("input" if vendor == "parallel" else "query", ""))
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
        if vendor == "parallel":
            return self._submit_task_run(body, question, answer, url)
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

    # --- Parallel's Task API: the answer is drawn at submit and kept with the run ---------------

    def _submit_task_run(
        self, body: dict[str, Any], question: str, answer: str, url: str
    ) -> dict[str, Any]:
        with self.lock:
            run_id = f"trun_{len(self.runs) + 1:08d}"
            run = _TaskRun(
                run_id=run_id,
                processor=str(body.get("processor", "")),
                question=question,
                answer=answer,
                url=url,
                pending=self.pending_results,
            )
            self.runs[run_id] = run
        return self._task_run(run, "queued")

    @staticmethod
    def _task_run(run: _TaskRun, status: str) -> dict[str, Any]:
        return {
            "run_id": run.run_id,
            "interaction_id": f"int_{run.run_id}",
            "status": status,
            "is_active": status in ("queued", "running"),
            "processor": run.processor,
            "created_at": CREATED_AT,
            "modified_at": CREATED_AT,
            "metadata": None,
            "error": None,
            "warnings": None,
            "taskgroup_id": None,
        }

    def task_run_status(self, run_id: str) -> tuple[int, dict[str, Any]]:
        run = self.runs.get(run_id)
        if run is None:
            return 404, {"error": {"message": f"run {run_id} not found", "ref_id": "fake"}}
        return 200, self._task_run(run, "running" if run.pending else "completed")

    def task_run_result(self, run_id: str, query: dict[str, list[str]]) -> tuple[int, Any]:
        with self.lock:
            run = self.runs.get(run_id)
            if run is None:
                return 404, {"error": {"message": f"run {run_id} not found", "ref_id": "fake"}}
            run.result_calls.append(query)
            if run.pending:
                run.pending -= 1
                return 408, {"error": {"message": "run not complete within timeout"}}
        citation = {
            "url": run.url,
            "title": f"About: {run.question[:40]}",
            "excerpts": [run.answer or "no answer here"],
        }
        return 200, {
            "run": self._task_run(run, "completed"),
            "output": {
                "type": "text",
                "content": run.answer,
                "basis": [
                    {
                        "field": "output",
                        "reasoning": "from the cited page",
                        "citations": [citation],
                        "confidence": "high" if run.answer else "low",
                    }
                ],
            },
        }

    # --- server -------------------------------------------------------------------------------

    def start(self, port: int = 0) -> AnswerProductsFake:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                vendor = PATHS.get(self.path.split("?")[0])
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if vendor is None:
                    return self._send(404, {"error": f"no route {self.path}"})
                if self._refused(vendor):
                    return None
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    return self._send(400, {"error": "body is not JSON"})
                self._send(200, fake.respond(vendor, body))

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                match = PARALLEL_RUN.match(url.path)
                if match is None:
                    return self._send(404, {"error": f"no route {self.path}"})
                if self._refused("parallel/result" if match["result"] else "", "parallel"):
                    return None
                if match["result"]:
                    query = parse_qs(url.query)
                    return self._send(*fake.task_run_result(match["run_id"], query))
                self._send(*fake.task_run_status(match["run_id"]))

            def _refused(self, *routes: str) -> bool:
                auth = self.headers.get("x-api-key") or self.headers.get("Authorization")
                refusals = [fake.refuse[r] for r in routes if r in fake.refuse]
                status = 401 if not auth else next(iter(refusals), None)
                if status is not None:
                    self._send(status, {"error": {"message": f"refused ({status})"}})
                return status is not None

            def _send(self, status: int, document: dict[str, Any]) -> None:
                payload = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *_args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
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
        return {vendor: f"{root}/{vendor}" for vendor in ("exa", "tavily", "nimble", "parallel")}


def main(argv: list[str] | None = None) -> int:
    """Serve the fake for a question set, for `bench run qa` from the command line:

    python -m tests.fakes.answer_fake --questions questions.csv --memory nimble
    # prints BENCH_BASE_URL_<VENDOR>=... lines; export them (and any *_API_KEY value), then
    # bench run qa --questions questions.csv --lanes parallel_answer --series s
    """
    import argparse
    from pathlib import Path

    from collectors.qa.question_sets import load_question_set

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, required=True, help="a question set CSV/JSONL")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--memory", action="append", default=[], help="a vendor that learns")
    parser.add_argument(
        "--skill", action="append", default=[], metavar="VENDOR=P", help="P(correct) of a vendor"
    )
    parser.add_argument("--pending-results", type=int, default=0)
    args = parser.parse_args(argv)
    dataset = load_question_set(args.questions)
    knowledge = {q.problem: q.gold_answer for q in dataset.questions}
    skill = {vendor: float(p) for vendor, p in (s.split("=", 1) for s in args.skill)}
    fake = AnswerProductsFake(
        knowledge, skill=skill, memory=set(args.memory), pending_results=args.pending_results
    )
    fake.start(args.port)
    for vendor, url in fake.base_urls().items():
        print(f"BENCH_BASE_URL_{vendor.upper()}={url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        fake.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
