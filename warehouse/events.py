"""The event contract: one envelope, one frozen payload model per event type.

A log line is the canonical JSON of an `Envelope`. Payload models are the only place an event's
shape is defined; ingest derives its checks from them and dbt staging unpacks exactly these
fields. Changing a shape means a new `SCHEMA_VERSION` here plus an upcaster in `upcasters.py`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from warehouse.canonical import canonical_json, sha256_hex
from warehouse.ids import event_id_for


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Producer(Frozen):
    """Which code wrote the event, and under which configuration."""

    package: str = "bench-warehouse"
    package_version: str
    git_sha: str
    config_sha256: str


class Payload(Frozen):
    event_type: ClassVar[str]
    schema_version: ClassVar[int]
    # Payload fields that, with the run id, identify the fact (not the attempt to record it).
    natural_key: ClassVar[tuple[str, ...]]

    def natural_key_values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.natural_key)


class DatasetRef(Frozen):
    name: str
    uri: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    item_count: int = Field(ge=0)
    revision: str | None = None


class SystemRef(Frozen):
    """An engine, provider lane or imported system, exactly as it was configured."""

    name: str
    version: str
    settings: dict[str, Any] = Field(default_factory=dict)


# --- run lifecycle -------------------------------------------------------------------------


class ShardFact(Payload):
    """A run-level fact that every shard of a run split across machines states for itself
    (`bench run … --shard K/N`, collectors/runs/shard.py): its start, its judge regime, its finish.

    Each shard's statement carries its K and N, which join the natural key, so every shard's
    copy is an event of its own: no two writers ever write one event id, and a warehouse never
    has to choose between two copies (which it would choose by the order they were loaded in).
    Models fold a run's shard facts (int_runs_started). Additive optional fields: version-1
    events without them are whole runs, and their ids stay what they always were."""

    shard: int | None = Field(default=None, ge=1)
    shards: int | None = Field(default=None, ge=1)

    def natural_key_values(self) -> tuple[object, ...]:
        own = super().natural_key_values()
        return own if self.shard is None else (*own, self.shard, self.shards)


class RunStarted(ShardFact):
    event_type: ClassVar[str] = "run_started"
    schema_version: ClassVar[int] = 1
    natural_key: ClassVar[tuple[str, ...]] = ()

    benchmark: Literal[
        "extraction", "simpleqa", "qa", "draco", "rubric", "vertical", "live_extraction"
    ]
    source: Literal["engine", "import"] = "engine"
    spec: dict[str, Any]
    spec_sha256: str
    dataset: DatasetRef
    systems: list[SystemRef]
    seed: int | None = None
    argv: list[str] = Field(default_factory=list)
    # Repeat-run series: same questions, identical lane config; additive optional fields, so
    # version-1 events without them stay valid.
    series: str | None = None
    run_index: int | None = Field(default=None, ge=1)


class RunFinished(ShardFact):
    event_type: ClassVar[str] = "run_finished"
    schema_version: ClassVar[int] = 1
    # A resumed run that does more work finishes again with new counts: a new fact. Two shards
    # may finish with the same count: each shard's finish is a fact of its own (ShardFact).
    natural_key: ClassVar[tuple[str, ...]] = ("terminal_events",)

    terminal_events: int
    completed: int
    failed: int
    duration_s: float


# --- items -----------------------------------------------------------------------------------


class ItemRegistered(Payload):
    """One benchmark item as the run saw it, with its ground truth."""

    event_type: ClassVar[str] = "item_registered"
    schema_version: ClassVar[int] = 1
    natural_key: ClassVar[tuple[str, ...]] = ("item_id",)

    item_id: str
    dataset_sha256: str
    position: int
    url: str | None = None
    vertical: str | None = None
    ground_truth_text: str
    anchors: list[str]
    anchor_rule_version: str
    input_sha256: str | None = None
    input_bytes: int | None = None


# Field blocks that open several payloads below, in the order those payloads list them (a
# parent's fields come first, so every payload's field order is unchanged). Not event types.


class _SystemAttempt(Payload):
    """One attempt of one configured system on one item."""

    item_id: str
    system: str
    system_version: str
    settings: dict[str, Any] = Field(default_factory=dict)
    attempt: int = Field(ge=1)


# --- extraction ---------------------------------------------------------------------------


class ExtractionCompleted(_SystemAttempt):
    """Raw output of one extractor on one item (v2; v1 named the system `engine`)."""

    event_type: ClassVar[str] = "extraction_completed"
    schema_version: ClassVar[int] = 2
    natural_key: ClassVar[tuple[str, ...]] = ("item_id", "system", "attempt")

    source: Literal["engine", "import"]
    render_path: str | None
    input_sha256: str | None
    output_text: str | None
    output_bytes: int = Field(ge=0)
    latency_ms: float | None = Field(default=None, ge=0)


class ExtractionFailed(_SystemAttempt):
    event_type: ClassVar[str] = "extraction_failed"
    schema_version: ClassVar[int] = 1
    natural_key: ClassVar[tuple[str, ...]] = ("item_id", "system", "attempt")

    error_class: str
    error_message: str
    latency_ms: float | None = Field(default=None, ge=0)


# --- provider calls (search / research / extract / LLM) --------------------------------------


class CallTimings(Frozen):
    """Three clocks per call: waiting for the client-side limiter, the provider round trip of
    the last HTTP attempt (inside the limiter, body read included: the published latency), and
    the whole call including retries and backoff."""

    queue_wait_ms: float = Field(ge=0)
    round_trip_ms: float | None = Field(default=None, ge=0)
    whole_call_ms: float = Field(ge=0)


class TextRef(Frozen):
    """A text the log stores once elsewhere, cut out of a recorded body (warehouse/bodies.py):
    e.g. a DRACO judge's judged report, whose one copy is its `report_normalized` event."""

    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")  # of the text's UTF-8 bytes
    offset: int = Field(ge=0)  # where its marker stands in `body`, in characters


class RecordedRequest(Frozen):
    """The request actually sent, with every secret replaced by a redaction marker.

    `body` is the JSON body parsed, or, when `body_refs` is not empty, the exact text sent with
    each referenced text replaced by its marker; `body_sha256` is then the sha256 of the bytes
    sent, which `warehouse.bodies.expand_body` gives back. Both are left out of the stored JSON
    when unused, so a request with nothing referenced is stored exactly as before."""

    method: str
    url: str
    headers: dict[str, str] = Field(default_factory=dict)
    body: Any = None
    body_sha256: str | None = Field(
        default=None, pattern=r"^[0-9a-f]{64}$", exclude_if=lambda value: value is None
    )
    body_refs: list[TextRef] = Field(default_factory=list, exclude_if=lambda value: not value)

    # Only the shape is checked here; whether each marker stands at its offset is checked where
    # the body is expanded (a line the log writer had to scrub must still load).
    @model_validator(mode="after")
    def _references_need_the_text_sent(self) -> RecordedRequest:
        if self.body_refs and (not isinstance(self.body, str) or self.body_sha256 is None):
            raise ValueError("a body with references is the text sent, with its body_sha256")
        return self


class _ProviderCall(Payload):
    """One call of a lane's provider at one stage of one item's attempt, as sent."""

    lane: str
    provider: str
    stage: str  # search | research | extract | synthesize | grade | relevance | preflight
    item_id: str
    attempt: int = Field(ge=1)
    request: RecordedRequest


class _LaneAttempt(Payload):
    """A fact about one attempt of one lane on one item (for a judge: the attempt judged)."""

    lane: str
    item_id: str
    attempt: int = Field(ge=1)


class _ResearchAttempt(Payload):
    """The outcome of one attempt of a research system on one task."""

    lane: str
    provider: str
    item_id: str
    attempt: int = Field(ge=1)
    vendor_run_id: str | None = None


class ProviderCallCompleted(_ProviderCall):
    """A request that landed and got an HTTP response (any status), stored raw."""

    event_type: ClassVar[str] = "provider_call_completed"
    schema_version: ClassVar[int] = 1
    natural_key: ClassVar[tuple[str, ...]] = ("lane", "item_id", "stage", "attempt")

    status_code: int
    response_headers: dict[str, str] = Field(default_factory=dict)
    raw_body: str
    vendor_request_id: str | None = None
    timings: CallTimings
    http_attempts: int = Field(ge=1)
    concurrency: int = Field(ge=1)
    rate_per_s: float | None = None


class ProviderCallFailed(_ProviderCall):
    """A call that never produced a usable response after bounded retries (terminal)."""

    event_type: ClassVar[str] = "provider_call_failed"
    schema_version: ClassVar[int] = 1
    natural_key: ClassVar[tuple[str, ...]] = ("lane", "item_id", "stage", "attempt")

    error_class: str  # timeout | connection | http_status | malformed_body | auth | ...
    error_message: str
    status_code: int | None = None
    landed: bool  # the provider answered (e.g. 400/422): a non-answer, not a failure to reach it
    raw_body: str | None = None
    # Optional, additive: Retry-After and request ids of failed calls are evidence too.
    response_headers: dict[str, str] = Field(default_factory=dict)
    vendor_request_id: str | None = None
    timings: CallTimings
    http_attempts: int = Field(ge=0)
    concurrency: int = Field(ge=1)
    rate_per_s: float | None = None


# --- live-URL extraction (methodology §4.1) ---------------------------------------------------


class LiveUrlRegistered(Payload):
    """One URL of a live-extraction corpus, as the run saw it."""

    event_type: ClassVar[str] = "live_url_registered"
    schema_version: ClassVar[int] = 1
    natural_key: ClassVar[tuple[str, ...]] = ("item_id",)

    item_id: str
    dataset_sha256: str
    position: int = Field(ge=0)
    url: str
    vertical: str
    render_requested: Literal["auto", "fast", "full"]


class RedirectHop(Frozen):
    """One response of a redirect chain, in the order it was received."""

    url: str
    status_code: int
    location: str | None = None


class PageFetched(Payload):
    """The local fetcher's raw exchange with a URL (redirects followed and recorded). The body
    is the decoded text exactly as the local engines were fed it."""

    event_type: ClassVar[str] = "page_fetched"
    schema_version: ClassVar[int] = 1
    natural_key: ClassVar[tuple[str, ...]] = ("item_id", "attempt")

    item_id: str
    attempt: int = Field(ge=1)
    url: str
    final_url: str | None = None
    status_code: int | None = None  # of the final response; None when none arrived
    redirect_chain: list[RedirectHop] = Field(default_factory=list)
    response_headers: dict[str, str] = Field(default_factory=dict)
    body: str | None = None
    body_bytes: int = Field(default=0, ge=0)  # bytes received (before decoding)
    body_sha256: str | None = None
    body_truncated: bool = False  # larger than the fetcher's cap; reading stopped
    encoding: str | None = None
    render_requested: Literal["auto", "fast", "full"]
    render_used: Literal["fast"] = "fast"  # the local fetcher never runs JavaScript
    error_class: str | None = None  # connection | timeout | redirect_loop | ...
    error_message: str | None = None
    elapsed_ms: float = Field(ge=0)


class LiveExtractionRecorded(Payload):
    """The terminal fact of one (URL, engine, attempt): what the engine returned (or why it
    returned nothing), the target's status as seen or reported, the render path, the billed
    requests, and the raw events it came from (page_fetched / provider_call_*)."""

    event_type: ClassVar[str] = "live_extraction_recorded"
    schema_version: ClassVar[int] = 1
    natural_key: ClassVar[tuple[str, ...]] = ("item_id", "system", "attempt")

    item_id: str
    url: str
    system: str
    system_version: str
    settings: dict[str, Any] = Field(default_factory=dict)
    attempt: int = Field(ge=1)
    outcome: Literal["extracted", "failed"]
    output_text: str | None = None
    output_bytes: int = Field(default=0, ge=0)
    target_status_code: int | None = None  # the origin's status (seen, or reported by a vendor)
    final_url: str | None = None
    redirect_chain: list[RedirectHop] = Field(default_factory=list)
    render_requested: Literal["auto", "fast", "full"]
    render_used: str | None = None  # as used or reported; None when the vendor does not say
    latency_ms: float | None = Field(default=None, ge=0)
    requests_sent: int = Field(default=1, ge=0)  # billable requests (the cost basis)
    error_class: str | None = None
    error_message: str | None = None
    source_event_ids: list[str] = Field(default_factory=list)


# --- question answering (SimpleQA lanes, user question sets, series) -------------------------


class QuestionRegistered(Payload):
    """One question as the run saw it: upstream row identity kept, gold answer and URLs raw."""

    event_type: ClassVar[str] = "question_registered"
    schema_version: ClassVar[int] = 1
    natural_key: ClassVar[tuple[str, ...]] = ("item_id",)

    item_id: str
    dataset_sha256: str
    row_position: int  # 0-based row in the upstream file
    sample_order: int  # position in the evaluation order (the seeded sample)
    problem: str
    gold_answer: str
    gold_urls_raw: list[str] = Field(default_factory=list)  # as in the file, before URL parsing
    topic: str | None = None
    answer_type: str | None = None


class Chunk(Frozen):
    rank: int = Field(ge=1)
    url: str
    title: str
    text: str


class ChunksNormalized(_LaneAttempt):
    event_type: ClassVar[str] = "chunks_normalized"
    schema_version: ClassVar[int] = 1
    natural_key: ClassVar[tuple[str, ...]] = ("lane", "item_id", "attempt", "normalizer_version")

    normalizer_version: str
    source_event_id: str  # the provider_call_completed it was derived from
    chunks: list[Chunk]


class LlmCallRecord(Frozen):
    """Everything needed to reproduce or audit one LLM call."""

    provider: str  # anthropic | openai | openai-compatible | offline
    model: str
    base_url: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    prompt_id: str
    prompt_sha256: str
    raw_completion: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    vendor_request_id: str | None = None
    latency_ms: float | None = Field(default=None, ge=0)
    # The request as the SDK sent it (method, URL, headers, JSON body: messages and every
    # parameter) and the response body as received, secrets redacted: what a search call keeps
    # too, so a grading can be audited and replayed. None in records written before they were.
    request: RecordedRequest | None = None
    raw_body: str | None = None


class AnswerSynthesized(_LaneAttempt):
    event_type: ClassVar[str] = "answer_synthesized"
    schema_version: ClassVar[int] = 1
    natural_key: ClassVar[tuple[str, ...]] = ("lane", "item_id", "attempt")

    outcome: Literal["answered", "zero_results", "refused", "rejected", "failed"]
    answer: str | None
    chunk_ranks_used: list[int] = Field(default_factory=list)
    source_event_ids: list[str] = Field(default_factory=list)
    llm: LlmCallRecord | None = None


class _JudgedSample(Frozen):
    """How one judge or grader sample ended, the same three ways in every family (a DRACO
    criterion verdict, a SimpleQA grade, an UMBRELA relevance grade):

    - parsed: the completion parsed into a verdict;
    - unparsed: it did not (after any re-ask); the sample scores as the least favourable verdict;
    - failed: the call produced no completion after bounded retries (`error_class`,
      `error_message` say why); it scores as the least favourable verdict too.

    What "least favourable" is depends on the verdict; the collector writes it into the event,
    and the marts apply the rule themselves, never trusting the stored value (DRACO:
    macros/draco.sql `draco_met_scored`; QA: int_qa_answers_graded, int_qa_chunks_graded)."""

    outcome: Literal["parsed", "unparsed", "failed"]
    error_class: str | None = None  # timeout | connection | http_status | malformed_body | ...
    error_message: str | None = None

    @model_validator(mode="after")
    def _failure_says_why(self) -> _JudgedSample:
        if self.outcome == "failed" and not self.error_class:
            raise ValueError("a failed sample says why: error_class is required")
        return self


class _GradedSample(_JudgedSample):
    """A QA grade (answer or relevance): v1 said only `parse_ok`, which v2 keeps beside the
    outcome for the readers that use it."""

    parse_ok: bool  # outcome == "parsed"

    @model_validator(mode="after")
    def _parse_flag_agrees(self) -> _GradedSample:
        if self.parse_ok != (self.outcome == "parsed"):
            raise ValueError("parse_ok must equal (outcome == 'parsed')")
        return self


class AnswerGraded(_LaneAttempt, _GradedSample):
    """One grade of one answer. v2 (issue #10): a failed grader call is this event with
    outcome "failed", as a failed DRACO judge call is a `judge_verdict`; the collector writes
    the least favourable grade (B / incorrect), and the marts apply that rule themselves
    (int_qa_answers_graded). v1 wrote `provider_call_failed` (stage "grade") instead, which the
    marts still read."""

    event_type: ClassVar[str] = "answer_graded"
    schema_version: ClassVar[int] = 2
    natural_key: ClassVar[tuple[str, ...]] = ("lane", "item_id", "attempt", "grader_id")

    grader_id: (
        str  # e.g. "simpleqa-official@<template sha>:<model>" or "offline-normalized-match@1"
    )
    official: bool  # the upstream template; False = a project-written grader, labelled as such
    grade: Literal["A", "B", "C"]
    label: Literal["correct", "incorrect", "not_attempted"]
    source_event_id: str  # the answer_synthesized graded
    llm: LlmCallRecord | None = None  # None: graded by rule (a landed non-answer) or failed


class RelevanceGraded(_LaneAttempt, _GradedSample):
    """One UMBRELA grade of one chunk. v2 (issue #10): a failed judge call is this event with
    outcome "failed" (written with grade 0; the marts score it 0 themselves,
    int_qa_chunks_graded); v1 wrote `provider_call_failed` (stage "relevance:<rank>"), which
    the marts still read."""

    event_type: ClassVar[str] = "relevance_graded"
    schema_version: ClassVar[int] = 2
    natural_key: ClassVar[tuple[str, ...]] = ("lane", "item_id", "attempt", "rank", "judge_id")

    rank: int = Field(ge=1)
    judge_id: str
    grade: int = Field(ge=0, le=3)
    source_event_id: str  # the chunks_normalized event
    llm: LlmCallRecord | None = None


# --- deep research (DRACO and the user's rubric-judged task sets) ----------------------------


class RubricTaskRegistered(Payload):
    """One rubric-judged research task as the run saw it (DRACO: the upstream UUID is the id)."""

    event_type: ClassVar[str] = "rubric_task_registered"
    schema_version: ClassVar[int] = 1
    natural_key: ClassVar[tuple[str, ...]] = ("item_id",)

    item_id: str
    dataset_sha256: str
    position: int = Field(ge=0)  # 0-based row in the dataset file
    domain: str
    problem: str
    rubric_id: str
    criteria_count: int = Field(ge=1)


# Rubric weights are small integers upstream (DRACO's lie in -500..20). The bound keeps every sum
# and product the scoring models compute far inside a 64-bit integer, so one absurd weight
# (2^62, say) is an error at collection instead of an overflow in every later build.
MAX_RUBRIC_WEIGHT = 10_000


class RubricCriterionRegistered(Payload):
    """One rubric criterion: every criterion is a row in the warehouse."""

    event_type: ClassVar[str] = "rubric_criterion_registered"
    schema_version: ClassVar[int] = 1
    natural_key: ClassVar[tuple[str, ...]] = ("item_id", "criterion_id")

    item_id: str
    criterion_id: str  # unique within its rubric
    axis: str  # the rubric section id, e.g. factual-accuracy
    axis_title: str
    position: int = Field(ge=0)  # order in the flat list of criteria
    weight: int = Field(ge=-MAX_RUBRIC_WEIGHT, le=MAX_RUBRIC_WEIGHT)  # negative = penalty; never 0
    requirement: str


class ReportCitation(Frozen):
    url: str
    title: str = ""


class ResearchCompleted(_ResearchAttempt):
    """A research system's final output, raw: text and citations exactly as the vendor gave them.

    The HTTP exchanges behind it (submit, every poll, the result) are `provider_call_*` events
    listed in `source_event_ids`."""

    event_type: ClassVar[str] = "research_completed"
    schema_version: ClassVar[int] = 1
    natural_key: ClassVar[tuple[str, ...]] = ("lane", "item_id", "attempt")

    raw_output: str
    raw_citations: list[ReportCitation] = Field(default_factory=list)
    instruction_sha256: str  # the report-shaped instruction every system is given
    submitted_at: str
    finished_at: str
    queue_ms: float | None = Field(default=None, ge=0)  # submit -> vendor reports it started
    wall_clock_ms: float = Field(ge=0)  # submit -> final result, polling included
    poll_interval_s: float | None = Field(default=None, ge=0)
    polls: int = Field(default=0, ge=0)
    cost_usd: float | None = Field(default=None, ge=0)
    # billed = the vendor reported it; imported = another harness's file stated it (we saw no
    # bill). A widened literal: every earlier event stays valid as written.
    cost_basis: Literal["billed", "list_price", "estimate", "imported"] | None = None
    usage: dict[str, Any] = Field(default_factory=dict)
    source_event_ids: list[str] = Field(default_factory=list)


class ResearchFailed(_ResearchAttempt):
    """A research attempt that produced no usable report (terminal; the item scores 0.0)."""

    event_type: ClassVar[str] = "research_failed"
    schema_version: ClassVar[int] = 1
    natural_key: ClassVar[tuple[str, ...]] = ("lane", "item_id", "attempt")

    stage: str  # submit | poll | result | parse
    error_class: str  # timeout | http_status | vendor_failed | empty_output | malformed_body ...
    error_message: str
    wall_clock_ms: float | None = Field(default=None, ge=0)
    source_event_ids: list[str] = Field(default_factory=list)


class BibliographyEntry(Frozen):
    number: int = Field(ge=1)
    url: str
    title: str = ""


class ReportNormalized(_LaneAttempt):
    """The text every judge sees: own bibliography stripped, one uniform bibliography appended."""

    event_type: ClassVar[str] = "report_normalized"
    schema_version: ClassVar[int] = 1
    natural_key: ClassVar[tuple[str, ...]] = ("lane", "item_id", "attempt", "normalizer_version")

    normalizer_version: str
    source_event_id: str  # the research_completed it was derived from
    raw_output_sha256: str
    stripped_bibliography: bool
    strip_heading: str | None = None  # the heading of the stripped block, when one was stripped
    stripped_text: str | None = None  # the block that was removed, kept for audit
    bibliography: list[BibliographyEntry] = Field(default_factory=list)
    judged_text: str


class JudgeRegimeRegistered(ShardFact):
    """A judge regime used on a run: model, provider, prompt, samples and sampling params.

    Scores are comparable only within one regime; `judge_id` names it in every verdict."""

    event_type: ClassVar[str] = "judge_regime_registered"
    schema_version: ClassVar[int] = 1
    natural_key: ClassVar[tuple[str, ...]] = ("judge_id",)

    judge_id: str
    judge: SystemRef  # provider, model, base_url, temperature, max_tokens ...
    official: bool  # False for the offline judge: labelled, never an LLM verdict
    prompt_id: str
    prompt_sha256: str
    samples: int = Field(ge=1)
    normalizer_version: str  # which judged text the verdicts are about
    argv: list[str] = Field(default_factory=list)


class JudgeVerdict(_LaneAttempt, _JudgedSample):
    """One judge sample on one criterion of one report.

    `met` is the verdict that scores: the parsed one, or for an unparsed or failed sample the
    verdict least favourable to the system (UNMET for a positive criterion, MET for a negative
    one). A failed sample is retried on resume as the next `judge_attempt`."""

    event_type: ClassVar[str] = "judge_verdict"
    schema_version: ClassVar[int] = 1
    natural_key: ClassVar[tuple[str, ...]] = (
        "lane",
        "item_id",
        "attempt",
        "judge_id",
        "criterion_id",
        "sample",
        "judge_attempt",
    )

    judge_id: str
    criterion_id: str
    sample: int = Field(ge=1)
    judge_attempt: int = Field(default=1, ge=1)
    polarity: Literal["positive", "negative"]
    verdict: Literal["MET", "UNMET"] | None  # as parsed; None when unparsed or failed
    met: bool
    justification: str | None = None
    reasks: int = Field(default=0, ge=0)
    source_event_id: str  # the report_normalized judged
    llm: LlmCallRecord | None = None  # the completion that decided the verdict
    # Earlier completions of this sample (an unparsable first answer before the re-ask): kept
    # raw for audit, never scored.
    earlier_calls: list[LlmCallRecord] = Field(default_factory=list)


# --- imported results (another harness's published files) ------------------------------------

IMPORTED_REGIME_LABEL = "imported, not judged here"


class ImportedItemFigure(Frozen):
    """What the file itself says about one item, verbatim (never recomputed on import)."""

    item_id: str
    domain: str | None = None
    score: float | None = None  # Valyu normalized_score / Nimble overall, 0-1
    pass_rate: float | None = None
    axes: dict[str, float] = Field(default_factory=dict)  # Nimble per-axis scores, 0-1
    latency_s: float | None = None
    # What the harness says answering the item cost, in USD (a QA row's cost column, inspect's
    # model usage). Additive and optional: events written before it read as None.
    cost_usd: float | None = Field(default=None, ge=0)
    runs: int = Field(default=0, ge=0)  # judge runs recorded for the item (Valyu runs[])
    error: str | None = None  # the file's own error for the item, when it has one


class ImportedFileRegistered(Payload):
    """A third-party results file as it was imported: its name, sha256 and format, the figures it
    publishes about itself (`header`, `item_figures`), and every id that did not join (`unmatched_ids`:
    in the file but not in the dataset; `absent_ids`: in the dataset but not in the file;
    `duplicate_ids`: repeated in the file, first record kept). Imported verdicts and grades
    point here (`source_event_id`)."""

    event_type: ClassVar[str] = "imported_file_registered"
    schema_version: ClassVar[int] = 1
    natural_key: ClassVar[tuple[str, ...]] = ("file_sha256", "kind")

    benchmark: Literal["draco", "simpleqa", "qa"]
    kind: Literal["grading", "inference", "qa_results"]
    format: str  # valyu | nimble | csv | simple-evals
    lane: str  # the system / lane the file is about (--system / --lane)
    judge_id: str | None = None  # the imported regime its verdicts or grades are filed under
    judge_model: str | None = None  # as the file names it
    judge_label: str = IMPORTED_REGIME_LABEL
    file_name: str
    file_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    file_bytes: int = Field(ge=0)
    header: dict[str, Any] = Field(default_factory=dict)
    item_figures: list[ImportedItemFigure] = Field(default_factory=list)
    unmatched_ids: list[str] = Field(default_factory=list)
    absent_ids: list[str] = Field(default_factory=list)
    duplicate_ids: list[str] = Field(default_factory=list)


class ImportedVerdict(Payload):
    """One criterion verdict as another harness's judge gave it (an imported regime, never
    mixed with ours). `met_rate` is the share of that harness's samples that said MET: 1 or 0
    for a single verdict (Valyu, the long CSV), a fraction for Nimble's averaged samples."""

    event_type: ClassVar[str] = "imported_verdict"
    schema_version: ClassVar[int] = 1
    natural_key: ClassVar[tuple[str, ...]] = (
        "lane",
        "item_id",
        "judge_id",
        "criterion_id",
        "run_index",
    )

    lane: str
    item_id: str
    judge_id: str
    criterion_id: str
    criterion_position: int = Field(ge=0)
    run_index: int = Field(ge=1)  # Valyu runs[] position / CSV sample, from 1
    verdict: Literal["MET", "UNMET"] | None
    met_rate: float = Field(ge=0, le=1)
    samples: int = Field(default=1, ge=1)  # the file's samples behind met_rate
    justification: str | None = None
    source_event_id: str  # the imported_file_registered event


# --- corrections (a correction is a new fact, never an edit) ----------------------------------


class CorrectionProvenance(Frozen):
    """Who made a correction and how: the command line, or the file it was imported from."""

    source: Literal["cli", "import"]
    actor: str | None = None  # e.g. the OS user; never a secret
    argv: list[str] = Field(default_factory=list)
    file_name: str | None = None
    file_sha256: str | None = None


class ItemExcluded(Payload):
    """An item taken out of (or, with `excluded=False`, put back into) every score of one
    family: all runs over `dataset_sha256`, or only `scope_run_id`. The latest event per
    (benchmark, dataset, item, scope) decides; the item's events stay in the log and the marts
    list what was excluded and why."""

    event_type: ClassVar[str] = "item_excluded"
    schema_version: ClassVar[int] = 1
    natural_key: ClassVar[tuple[str, ...]] = (
        "benchmark",
        "dataset_sha256",
        "item_id",
        "scope",
        "excluded",
        "reason",
    )

    benchmark: Literal["draco", "qa", "extraction"]  # the family whose marts honour it
    dataset_sha256: str
    item_id: str
    scope_run_id: str | None = None  # None = every run over the dataset
    excluded: bool = True  # False reinstates an earlier exclusion
    reason: str = Field(min_length=1)
    provenance: CorrectionProvenance

    @property
    def scope(self) -> str:
        return self.scope_run_id or "*"


class VerdictSuperseded(Payload):
    """A stored verdict replaced by a corrected one (the stored event is never edited): a
    DRACO `judge_verdict` / `imported_verdict` (verdict MET/UNMET) or a QA `answer_graded`
    (grade A/B/C). Marts score the replacement and keep both event ids."""

    event_type: ClassVar[str] = "verdict_superseded"
    schema_version: ClassVar[int] = 1
    natural_key: ClassVar[tuple[str, ...]] = ("superseded_event_id", "replacement", "reason")

    superseded_event_id: str
    superseded_event_type: Literal["judge_verdict", "imported_verdict", "answer_graded"]
    replacement: Literal["MET", "UNMET", "A", "B", "C"]
    reason: str = Field(min_length=1)
    provenance: CorrectionProvenance


PAYLOAD_MODELS: dict[str, type[Payload]] = {
    model.event_type: model
    for model in (
        RunStarted,
        RunFinished,
        ItemRegistered,
        ExtractionCompleted,
        ExtractionFailed,
        ProviderCallCompleted,
        ProviderCallFailed,
        QuestionRegistered,
        ChunksNormalized,
        AnswerSynthesized,
        AnswerGraded,
        RelevanceGraded,
        RubricTaskRegistered,
        RubricCriterionRegistered,
        ResearchCompleted,
        ResearchFailed,
        ReportNormalized,
        JudgeRegimeRegistered,
        JudgeVerdict,
        ImportedFileRegistered,
        ImportedVerdict,
        ItemExcluded,
        VerdictSuperseded,
        LiveUrlRegistered,
        PageFetched,
        LiveExtractionRecorded,
    )
}

# The outcome of one unit of work; resume skips units that have one.
TERMINAL_EXTRACTION_EVENTS = ("extraction_completed", "extraction_failed")


class Envelope(Frozen):
    event_id: str
    event_type: str
    schema_version: int
    run_id: str
    occurred_at: str
    producer: Producer
    payload: dict[str, Any]
    content_sha256: str
    prev_sha256: str = ""  # set by the log writer: the hash chain within a segment
    # The canonical JSON `content_sha256` was computed over, kept by `make_event` so the log
    # writer builds the line without serialising the event a second time.
    _hashed_json: str | None = PrivateAttr(default=None)

    def __eq__(self, other: object) -> bool:
        # The fields are the event; the cached JSON is not (pydantic compares private attrs).
        if not isinstance(other, Envelope):
            return NotImplemented
        return self.__dict__ == other.__dict__

    __hash__ = None  # the payload is a dict: an envelope was never hashable

    def hashed_content(self) -> dict[str, Any]:
        return hashed_content(self.model_dump())


ENVELOPE_FIELDS = tuple(Envelope.model_fields)


def hashed_content(envelope: dict[str, Any]) -> dict[str, Any]:
    """The part of an envelope that `content_sha256` covers: everything but the two hashes."""
    return {k: v for k, v in envelope.items() if k not in ("content_sha256", "prev_sha256")}


def utc_now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def make_event(
    payload: Payload, *, run_id: str, producer: Producer, occurred_at: str | None = None
) -> Envelope:
    body = {
        "event_id": event_id_for(payload.event_type, run_id, *payload.natural_key_values()),
        "event_type": payload.event_type,
        "schema_version": payload.schema_version,
        "run_id": run_id,
        "occurred_at": occurred_at or utc_now_iso(),
        "producer": producer.model_dump(),
        "payload": payload.model_dump(mode="json"),
    }
    text = canonical_json(body)
    envelope = Envelope(**body, content_sha256=sha256_hex(text))
    envelope._hashed_json = text
    return envelope


def parse_payload(event_type: str, payload: dict[str, Any]) -> Payload:
    """Validate a (current-version) payload against its model; raises on anything unexpected."""
    try:
        model = PAYLOAD_MODELS[event_type]
    except KeyError:
        raise ValueError(f"unknown event_type {event_type!r}") from None
    return model.model_validate(payload)
