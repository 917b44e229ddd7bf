"""The extraction and question-answering app snapshot, built from REAL events by the real pipeline.

`build_app_snapshot(home)` runs the real offline runners into `home`, then the real downstream
half (`transform.pipeline.refresh`: dlt ingest -> dbt build -> publish), so a regression in a mart
fails the app tests:

* extraction: the three reference engines (trafilatura, readability-lxml, html-text) on two
  small corpora written here. `app-articles` has a page whose text and ground truth carry an
  HTML/JS payload (escaped in the HTML, so the engines extract it as text) and an empty page
  that readability-lxml refuses (a real `Unparseable: Document is empty` failure); `app-live`
  has an access-denied interstitial (a non-content page), and its run is interrupted (Ctrl-C)
  after its second page, so its third page is missing and the run stays in progress.
* question answering: a repeat-run series of two runs on five SimpleQA questions (the real test
  set, sampled with the simple-evals sampler), lanes `local-bm25` (the baseline, over a small
  document corpus written here) and the `brave_search` and `tavily_search_basic` vendor lanes
  against the loopback vendor fake (`tests.fakes.fake_server`). The fake answers its
  generic snippets (the offline synthesiser then answers wrongly); `VENDOR_PLAN` queues, per
  run, the bodies that answer correctly and the 503s that make tavily's first search fail after
  its retries. Brave's first body in run 1 carries the payload, and `EchoingGrader` (the offline
  grader, but echoing the payload in its raw completion for the first question, as LLM graders
  quote what they read) plants it in the grader completion.

Built once per pytest process (`app_snapshot`); every test copies the published file.
"""

from __future__ import annotations

import gzip
import html
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from bench.settings import shared_data_dir
from collectors.extraction.corpus import load_corpus
from collectors.extraction.runner import plan_extraction, run_extraction
from collectors.llm.base import LlmCallError
from collectors.local_corpus import from_documents_jsonl
from collectors.qa.lane_registry import build_lanes
from collectors.qa.offline import (
    ExtractiveSynthesizer,
    LexicalRelevanceJudge,
    NormalizedMatchGrader,
)
from collectors.qa.plan import plan_qa
from collectors.qa.roles import Grade
from collectors.qa.runner import execute_plan
from collectors.qa.simpleqa import load_simpleqa
from tests.fakes.fake_server import FakeVendorServer, Fault
from tests.fakes.vendor_responses import search_response
from tests.shared_build import built_once
from transform.pipeline import event_log, refresh
from warehouse.events import SystemRef
from warehouse.paths import BenchPaths

MALICIOUS = "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned2'\">"

# --- extraction ------------------------------------------------------------------------------

ENGINES = ("html-text", "readability-lxml", "trafilatura")
NAV = "<nav>Home | News | Sport | Weather | Sign in | Subscribe</nav>"
FOOTER = "<footer>Cookie settings. Privacy policy. All rights reserved.</footer>"
RIVER = (
    "The city council approved the river restoration plan on Tuesday. Engineers will remove "
    "two concrete weirs and replant three kilometres of bank with willow and alder. Work "
    "starts in spring and should take eighteen months."
)
BREAD = (
    "Mix the flour, water and salt, then rest the dough for thirty minutes. Fold it four "
    "times over two hours. Shape a round loaf and bake at 240 degrees for forty minutes."
)
COMET = (
    "Astronomers tracked the comet for six weeks as it brightened near the sun. Its tail "
    "stretched across two degrees of sky, and amateur observers sent more than nine hundred "
    "photographs to the survey."
)
NOTICE = (
    "Security advisory for site editors. The comment form stored this text verbatim: "
    f"{MALICIOUS} Patch the template escaping before Friday."
)
HARBOUR = (
    "The harbour authority extended the ferry timetable for the summer season. Boats now "
    "leave every twenty minutes between seven and nine in the evening."
)
LIBRARY = (
    "The new public library opens with forty thousand books, a maker space and a reading "
    "garden on the roof. Membership is free for residents."
)
MARKET = (
    "Farmers at the Saturday market reported record sales of heritage apples, with twelve "
    "varieties on sale and queues before eight in the morning."
)


def _article(title: str, text: str) -> str:
    return (
        f"<html><head><title>{html.escape(title)}</title></head><body>{NAV}<article>"
        f"<h1>{html.escape(title)}</h1><p>{html.escape(text)}</p></article>{FOOTER}</body></html>"
    )


# corpus name -> item id -> (url, ground truth, html)
CORPORA: dict[str, dict[str, tuple[str, str, str]]] = {
    "app-articles": {
        "aeb-0001": ("https://news.example.org/river", RIVER, _article("River plan", RIVER)),
        "aeb-0002": ("https://food.example.org/loaf", BREAD, _article("A simple loaf", BREAD)),
        "aeb-0003": ("https://science.example.org/comet", COMET, ""),  # an empty response body
        "aeb-0004": ("https://forum.example.org/advisory", NOTICE, _article("Advisory", NOTICE)),
    },
    "app-live": {
        "live-0001": ("https://harbour.example.net/ferries", HARBOUR, _article("Ferries", HARBOUR)),
        "live-0002": (
            "https://library.example.net/opening",
            LIBRARY,
            "<html><body><p>Access denied. Please verify you are human.</p></body></html>",
        ),
        "live-0003": ("https://market.example.net/apples", MARKET, _article("Apples", MARKET)),
    },
}
INTERRUPTED = {"app-live": 2}  # corpus -> pages done when Ctrl-C arrives
MALICIOUS_PAGE = ("app-articles", "trafilatura", "aeb-0004")
FAILED_PAGE = ("app-articles", "readability-lxml", "aeb-0003")


def extraction_argv(corpus: str) -> list[str]:
    """The command line an extraction run records (what the Runs page shows)."""
    return ["run", "extraction", "--corpus", corpus, "--engines", ",".join(ENGINES)]


def _write_corpus(root: Path, items: dict[str, tuple[str, str, str]]) -> Path:
    (root / "html").mkdir(parents=True)
    truth = {item: {"articleBody": text, "url": url} for item, (url, text, _) in items.items()}
    (root / "ground-truth.json").write_text(json.dumps(truth, indent=1), encoding="utf-8")
    for item, (_, _, page) in items.items():
        (root / "html" / f"{item}.html.gz").write_bytes(gzip.compress(page.encode("utf-8")))
    return root


def _extract(paths: BenchPaths, corpus, name: str) -> str:
    """Run the engines on `corpus`; for an INTERRUPTED corpus, Ctrl-C after that many pages."""
    plan = plan_extraction(corpus, ENGINES)
    stop_after = INTERRUPTED.get(name)

    def progress(done: int, total: int) -> None:
        if stop_after is not None and done == stop_after * len(ENGINES):
            raise KeyboardInterrupt

    try:
        run_extraction(
            event_log(paths), corpus, ENGINES, argv=extraction_argv(name), on_progress=progress
        )
    except KeyboardInterrupt:
        assert stop_after is not None
    return plan.run_id


# --- question answering ------------------------------------------------------------------------

SERIES = "simpleqa-weekly"
BASELINE = "local-bm25"
LANES = ("local-bm25", "brave_search", "tavily_search_basic")
VENDOR_KEYS = {"BRAVE_SEARCH_API_KEY": "k-brave", "TAVILY_API_KEY": "k-tavily"}
N_QUESTIONS = 5
# Per run, per vendor lane, per sampled question: "C" a body that answers it, "F" a search that
# fails (503 on every attempt), "-" the fake's own generic snippets (answered wrongly).
VENDOR_PLAN = {
    1: {"brave_search": "CCC-C", "tavily_search_basic": "FCC-C"},
    2: {"brave_search": "CCCCC", "tavily_search_basic": "CC-CC"},
}
PROVIDER = {"brave_search": "brave", "tavily_search_basic": "tavily"}
MALICIOUS_SEARCH = (1, "brave_search", 0)  # run index, lane, question index
FAILED_SEARCH = (1, "tavily_search_basic", 0)
# In run 2 every grader call for question 2 fails (an LLM API's 529): a failed grade, scored B.
FAILED_GRADE = (2, "brave_search", 2)  # run index, a lane that answered it, question index
# FAST backoff: the failed search retries in milliseconds, not seconds.
POLICY = {"backoff_base_s": 0.001, "backoff_cap_s": 0.005}
# The local corpus answers questions 0, 2 and 4, states a wrong count for question 3 and shares
# no word with question 1 (BM25 finds nothing: a landed zero-results non-answer, graded C).
LOCAL_DOCUMENTS = (
    (
        "https://en.wikipedia.org/wiki/Mandi_Bahauddin",
        "Muhammad Rafiq Tarar",
        "Muhammad Rafiq Tarar, a Pakistani politician, was born in the city of Mandi "
        "Bahauddin, Punjab.",
    ),
    (
        "https://en.wikipedia.org/wiki/List_of_prime_ministers_of_Japan",
        "Prime ministers of Japan",
        "Tanzan Ishibashi became Japan's Prime Minister after Ichirō Hatoyama left office "
        "on December 23, 1956.",
    ),
    (
        "https://en.wikipedia.org/wiki/1906_Bodmin_by-election",
        "1906 Bodmin by-election",
        "In the 1906 Bodmin by-election Freeman Freeman-Thomas won 1,039 more votes than "
        "George Sandys.",
    ),
    (
        "https://en.wikipedia.org/wiki/Henri_d'Angoulême",
        "Henri d'Angoulême",
        "While Henri d'Angoulême served as the governor of Provence, his secretary was the "
        "poet François de Malherbe.",
    ),
)


class EchoingGrader(NormalizedMatchGrader):
    """The offline normalized-match grader whose raw completion, for one question, quotes the
    payload it read (the way an LLM grader's explanation quotes an answer); while
    `failing_question` is set, its calls for that question fail as an overloaded LLM API's do."""

    grader_id = "fixture-echoing-match@1"

    def __init__(self, planted_question: str):
        self.planted_question = planted_question
        self.failing_question: str | None = None

    def system_ref(self) -> SystemRef:
        ref = super().system_ref()
        return ref.model_copy(update={"name": self.grader_id})

    def grade(self, question: str, target: str, answer: str) -> Grade:
        if question == self.failing_question:
            raise LlmCallError(
                message="Overloaded (fixture)",
                provider="anthropic",
                model="fixture-grader",
                error_class="http_status",
                status_code=529,
            )
        graded = super().grade(question, target, answer)
        if question != self.planted_question:
            return graded
        llm = graded.llm.model_copy(update={"raw_completion": f"{graded.grade}\n{MALICIOUS}"})
        return Grade(grade=graded.grade, parse_ok=graded.parse_ok, llm=llm)


def _answering_body(provider: str, question: str, gold: str, gold_url: str, planted: bool) -> bytes:
    """The fake's own response for `question`, its first result rewritten to answer it from the
    gold URL (a sentence with every word of the question, so the extractive synthesiser picks
    it over the generic snippets, which tie with it but rank lower)."""
    document = search_response(provider, question, 10)
    results = document["web"]["results"] if provider == "brave" else document["results"]
    text = f"{question.rstrip('?')}: {gold}"
    first = results[0]
    first["url"] = gold_url
    first["description" if provider == "brave" else "content"] = text
    if planted:
        results[1]["description"] = f"Comment: {MALICIOUS}"
    return json.dumps(document, indent=2).encode()


def _queue_vendor_bodies(fake: FakeVendorServer, run_index: int, questions) -> None:
    for lane, plan in VENDOR_PLAN[run_index].items():
        provider = PROVIDER[lane]
        for index, (code, question) in enumerate(zip(plan, questions, strict=True)):
            if code == "F":
                fake.add_faults(provider, *[Fault.status(503)] * 3)
            elif code == "C":
                planted = (run_index, lane, index) == MALICIOUS_SEARCH
                body = _answering_body(
                    provider,
                    question.problem,
                    question.gold_answer,
                    question.gold_urls_raw[0],
                    planted,
                )
                fake.add_faults(provider, Fault.status(200, body=body))
            else:
                fake.add_faults(provider, None)


def _qa_series(paths: BenchPaths) -> tuple[list[str], list[str]]:
    dataset = load_simpleqa(shared_data_dir() / "simpleqa" / "simple_qa_test_set.csv")
    documents = paths.home / "qa-documents.jsonl"
    documents.write_text(
        "".join(
            json.dumps({"url": u, "title": t, "text": x}) + "\n" for u, t, x in LOCAL_DOCUMENTS
        ),
        encoding="utf-8",
    )
    corpus = from_documents_jsonl(documents)
    roles = {"synthesizer": ExtractiveSynthesizer(), "relevance_judge": LexicalRelevanceJudge()}
    run_ids: list[str] = []
    with FakeVendorServer() as fake:
        lanes = build_lanes(
            LANES,
            corpus=corpus,
            environ=VENDOR_KEYS,
            base_urls=fake.base_urls(),
            concurrency=1,  # one search at a time per lane: each queued body meets its question
            rate_per_s=1000.0,  # a loopback fake needs no vendor pacing (Brave's is 1 request/s)
            policy_changes=POLICY,
        )
        # The sample does not depend on the roles: a plan outside the series names it.
        sample = plan_qa(
            dataset, lanes, limit=N_QUESTIONS, grader=NormalizedMatchGrader(), **roles
        ).selected
        questions = [s.question for s in sample]
        grader = EchoingGrader(questions[MALICIOUS_SEARCH[2]].problem)
        for run_index in (1, 2):
            plan = plan_qa(
                dataset, lanes, limit=N_QUESTIONS, series=SERIES, log=event_log(paths),
                grader=grader, **roles,
            )  # fmt: skip
            assert plan.run_index == run_index
            failing = FAILED_GRADE[2] if run_index == FAILED_GRADE[0] else None
            grader.failing_question = None if failing is None else questions[failing].problem
            _queue_vendor_bodies(fake, run_index, questions)
            summary = execute_plan(event_log(paths), plan, argv=["run", "simpleqa", "--fixture"])
            assert summary.status.startswith("finished"), summary
            run_ids.append(summary.run_id)
    return run_ids, [q.item_id for q in questions]


# --- the snapshot -------------------------------------------------------------------------------


@dataclass(frozen=True)
class AppSnapshot:
    home: Path
    serve_db: Path
    extraction_runs: dict[str, str]  # corpus name -> run id
    dataset_sha256: dict[str, str]  # corpus name -> dataset sha256
    systems: tuple[str, ...]
    malicious: dict[str, str]  # run, system, item: the page whose output carries MALICIOUS
    failed: dict[str, str]  # run, system, item, error_class: the engine's failure
    qa_run_ids: list[str]  # run index 1, run index 2
    series: str
    lanes: list[str]
    baseline: str
    grader_id: str
    questions: list[str]  # item ids in sample order
    qa_malicious: dict[str, str]  # run, lane, item: raw search body + grader completion
    qa_failed: dict[str, str]  # run, lane, item: the search that never landed
    qa_failed_grade: dict[str, str]  # run, lane, item: an answer whose grader call failed


def build_app_snapshot(home: Path) -> AppSnapshot:
    paths = BenchPaths(Path(home)).ensure()
    runs: dict[str, str] = {}
    shas: dict[str, str] = {}
    for name, items in CORPORA.items():
        corpus = load_corpus(_write_corpus(paths.home / "corpora" / name, items), name=name)
        runs[name] = _extract(paths, corpus, name)
        shas[name] = corpus.dataset.sha256
    qa_runs, questions = _qa_series(paths)
    refresh(paths)
    corpus, system, item = MALICIOUS_PAGE
    failed_corpus, failed_system, failed_item = FAILED_PAGE
    qa_run = qa_runs[MALICIOUS_SEARCH[0] - 1]
    return AppSnapshot(
        home=paths.home,
        serve_db=paths.serve_db,
        extraction_runs=runs,
        dataset_sha256=shas,
        systems=ENGINES,
        malicious={"run": runs[corpus], "system": system, "item": item},
        failed={
            "run": runs[failed_corpus],
            "system": failed_system,
            "item": failed_item,
            "error_class": "Unparseable",
        },
        qa_run_ids=qa_runs,
        series=SERIES,
        lanes=list(LANES),
        baseline=BASELINE,
        grader_id=EchoingGrader.grader_id,
        questions=questions,
        qa_malicious={
            "run": qa_run,
            "lane": MALICIOUS_SEARCH[1],
            "item": questions[MALICIOUS_SEARCH[2]],
        },
        qa_failed={
            "run": qa_runs[FAILED_SEARCH[0] - 1],
            "lane": FAILED_SEARCH[1],
            "item": questions[FAILED_SEARCH[2]],
        },
        qa_failed_grade={
            "run": qa_runs[FAILED_GRADE[0] - 1],
            "lane": FAILED_GRADE[1],
            "item": questions[FAILED_GRADE[2]],
        },
    )


def app_snapshot(tmp_path_factory: pytest.TempPathFactory) -> AppSnapshot:
    """The snapshot, built once per pytest session for every xdist worker (every extraction and QA app test shares it)."""
    return built_once(tmp_path_factory, "app-home", build_app_snapshot)


def install(snapshot: AppSnapshot, target: Path) -> Path:
    """Copy the published file to `target` (never read the build's copy)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(snapshot.serve_db, target)
    return target


def install_without(snapshot: AppSnapshot, target: Path, tables) -> Path:
    """The published file without some marts tables: a snapshot published before they existed."""
    install(snapshot, target)
    with duckdb.connect(str(target)) as con:
        for table in tables:
            con.execute(f"drop table marts.{table}")
    return target


def install_empty(snapshot: AppSnapshot, target: Path, tables=None) -> Path:
    """The published file with `tables` (default: every marts table) emptied: a publish of
    those marts before anything of theirs ran."""
    install(snapshot, target)
    with duckdb.connect(str(target)) as con:
        if tables is None:
            tables = [
                name
                for (name,) in con.execute(
                    "select table_name from information_schema.tables "
                    "where table_schema = 'marts' and table_type = 'BASE TABLE'"
                ).fetchall()
            ]
        for table in tables:
            con.execute(f"delete from marts.{table}")
    return target
