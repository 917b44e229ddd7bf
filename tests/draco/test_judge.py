"""The rubric judge: strict parsing, one re-ask, least-favourable fallbacks, regime ids, the
prompt and record end to end through the real OpenAI backend against a loopback fake, and the
labelled offline judge."""

from __future__ import annotations

import json

import pytest

from collectors.draco.judge import (
    DEFAULT_JUDGE_SPEC,
    LlmJudge,
    build_judge,
    judge_regime_payload,
    llm_judge_id,
    parse_verdict,
)
from collectors.draco.model import Criterion, Judge, RubricTask
from collectors.draco.normalize import NORMALIZER_VERSION
from collectors.draco.offline_judge import (
    NEGATIVE_MET_SHARE,
    POSITIVE_MET_SHARE,
    OfflineJudge,
    content_stems,
)
from collectors.draco.prompts import JUDGE_PROMPT_ID, load_prompt
from collectors.llm import LlmCallError, LlmConfigError
from collectors.llm.openai_backend import OpenAIBackend
from tests.qa.llm_fake import FakeLlmServer
from warehouse.events import LlmCallRecord

POSITIVE = Criterion("p1", "factual-accuracy", "Factual Accuracy", 0, 10, "States that X is 42")
NEGATIVE = Criterion("n1", "factual-accuracy", "Factual Accuracy", 1, -20, "Claims that X is 7")
TASK = RubricTask("task-1", 0, "Demo", "What is X?", "x-rubric", (POSITIVE, NEGATIVE))
REPORT = "# X\n\nX is 42 [1].\n\n## Sources\n\n[1] https://x.example"
CANARY = "sk-canary-draco-judge-do-not-log"


class ScriptedClient:
    """An LlmClient that answers from a script: text, or an exception to raise."""

    provider = "anthropic"
    base_url = "https://api.anthropic.com"

    def __init__(self, *replies):
        self.replies = list(replies)
        self.calls: list[dict] = []

    def complete(
        self, messages, *, prompt, model, temperature, max_tokens, system=None, stored_texts=()
    ):
        self.calls.append(
            {
                "messages": messages,
                "prompt": prompt,
                "model": model,
                "temperature": temperature,
                "stored_texts": stored_texts,
            }
        )
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return LlmCallRecord(
            provider=self.provider,
            model=model,
            base_url=self.base_url,
            temperature=temperature,
            max_tokens=max_tokens,
            prompt_id=prompt.prompt_id,
            prompt_sha256=prompt.sha256,
            raw_completion=reply,
        )


def _error(status: int | None, error_class: str = "http_status") -> LlmCallError:
    return LlmCallError(
        message=f"fault {status}",
        provider="anthropic",
        model="m",
        error_class=error_class,
        status_code=status,
    )


# --- parsing -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ('{"verdict": "MET", "justification": "It says 42."}', ("MET", "It says 42.")),
        ('```json\n{"verdict": "UNMET", "justification": "No."}\n```', ("UNMET", "No.")),
        (
            'Let me check.\n{"justification": "Warns only.", "verdict": "UNMET"}\nDone.',
            ("UNMET", "Warns only."),
        ),
        ('{"verdict": "met"}', ("MET", None)),
        ('{"verdict": " Unmet ", "justification": 3}', ("UNMET", None)),
        ('{"verdict": "MET"} and again {"verdict": "MET"}', ("MET", None)),
        ('{"reasoning": {"a": 1}, "verdict": "UNMET", "justification": "x"}', ("UNMET", "x")),
        ('{"verdict": "MET"} but really {"verdict": "UNMET"}', None),  # disagree
        ('{"verdict": "NOT MET"}', None),
        ('{"verdict": "PARTIALLY MET"}', None),
        ('{"verdict": true}', None),
        ("MET", None),  # no JSON object
        ("The criterion is met.", None),
        ('{"verdict": "MET"', None),  # truncated
        ('{"answer": "MET"}', None),
        ("", None),
        (None, None),
    ],
)
def test_parse_verdict(completion, expected):
    assert parse_verdict(completion) == expected


# --- the sample outcomes -----------------------------------------------------------------------


def test_parsed_first_time():
    client = ScriptedClient('{"verdict": "MET", "justification": "Says 42."}')
    result = LlmJudge(client, model="claude-x").judge(TASK, POSITIVE, REPORT, sample=1)
    assert (result.outcome, result.verdict, result.met, result.reasks) == ("parsed", "MET", True, 0)
    assert result.justification == "Says 42." and result.calls == (result.llm,)
    assert result.error_class is None
    (call,) = client.calls
    assert call["model"] == "claude-x" and call["temperature"] is None
    assert call["prompt"].prompt_id == JUDGE_PROMPT_ID


def test_one_reask_then_parsed():
    client = ScriptedClient("I think it is met.", '{"verdict": "UNMET", "justification": "No 42."}')
    judge = LlmJudge(client, model="claude-x")
    result = judge.judge(TASK, POSITIVE, REPORT, sample=2)
    assert (result.outcome, result.verdict, result.met, result.reasks) == (
        "parsed",
        "UNMET",
        False,
        1,
    )
    assert [c.raw_completion for c in result.calls] == [
        "I think it is met.",
        '{"verdict": "UNMET", "justification": "No 42."}',
    ]
    assert result.llm is result.calls[-1]
    first, second = client.calls
    rendered = judge.render(TASK, POSITIVE, REPORT)
    assert first["messages"] == [{"role": "user", "content": rendered}]
    assert second["messages"] == [
        {"role": "user", "content": rendered},
        {"role": "assistant", "content": "I think it is met."},
        {"role": "user", "content": load_prompt(JUDGE_PROMPT_ID).section("reask")},
    ]
    assert '{"verdict": "MET" or "UNMET"' in second["messages"][2]["content"]


def test_an_empty_reply_is_reasked_in_one_user_message():
    client = ScriptedClient("", '{"verdict": "MET"}')
    judge = LlmJudge(client, model="claude-x")
    assert judge.judge(TASK, POSITIVE, REPORT, sample=1).met is True
    (message,) = client.calls[1]["messages"]
    assert message["role"] == "user" and message["content"].startswith(
        judge.render(TASK, POSITIVE, REPORT)
    )


@pytest.mark.parametrize(("criterion", "least_favourable"), [(POSITIVE, False), (NEGATIVE, True)])
def test_unparsed_after_reask_is_least_favourable(criterion, least_favourable):
    client = ScriptedClient("garbage", "still garbage")
    result = LlmJudge(client, model="m").judge(TASK, criterion, REPORT, sample=1)
    assert (result.outcome, result.verdict, result.met, result.reasks) == (
        "unparsed",
        None,
        least_favourable,
        1,
    )
    assert result.llm.raw_completion == "still garbage" and len(result.calls) == 2
    assert len(client.calls) == 2  # one re-ask, never more


@pytest.mark.parametrize(("criterion", "least_favourable"), [(POSITIVE, False), (NEGATIVE, True)])
def test_failed_call_is_least_favourable_with_error_fields(criterion, least_favourable):
    client = ScriptedClient(_error(503))
    result = LlmJudge(client, model="m").judge(TASK, criterion, REPORT, sample=3)
    assert (result.outcome, result.verdict, result.met) == ("failed", None, least_favourable)
    assert result.error_class == "http_status" and "fault 503" in result.error_message
    assert result.llm is None and result.calls == () and result.reasks == 0


def test_failure_on_the_reask_keeps_the_first_reply():
    client = ScriptedClient("garbage", _error(None, "timeout"))
    result = LlmJudge(client, model="m").judge(TASK, NEGATIVE, REPORT, sample=1)
    assert (result.outcome, result.met, result.reasks, result.error_class) == (
        "failed",
        True,
        1,
        "timeout",
    )
    assert result.llm.raw_completion == "garbage"


@pytest.mark.parametrize("status", [401, 402, 403])
def test_auth_errors_propagate(status):
    judge = LlmJudge(ScriptedClient(_error(status, "auth")), model="m")
    with pytest.raises(LlmCallError) as err:
        judge.judge(TASK, POSITIVE, REPORT, sample=1)
    assert err.value.is_auth


def test_config_errors_propagate():
    judge = LlmJudge(ScriptedClient(LlmConfigError("no key")), model="m")
    with pytest.raises(LlmConfigError):
        judge.judge(TASK, POSITIVE, REPORT, sample=1)


# --- prompt and regime -------------------------------------------------------------------------


def test_prompt_tells_what_met_means_per_type():
    judge = LlmJudge(ScriptedClient(), model="m")
    positive = judge.render(TASK, POSITIVE, REPORT)
    negative = judge.render(TASK, NEGATIVE, REPORT)
    for text, criterion in ((positive, POSITIVE), (negative, NEGATIVE)):
        assert TASK.problem in text and REPORT in text and criterion.requirement in text
        assert '{"verdict": "MET" or "UNMET", "justification":' in text
        assert "{{" not in text and "===" not in text
    assert 'type="POSITIVE"' in positive and "MET means the report satisfies" in positive
    assert "COMMITS" not in positive
    assert 'type="NEGATIVE"' in negative and "MET means the report COMMITS" in negative
    assert "warn against it" in negative and "satisfies the requirement" not in negative
    # braces in the report or problem are data, not placeholders
    braces = "Use {x} and {{y}} and {"
    assert braces in judge.render(TASK, POSITIVE, braces)


def test_judge_id_names_the_regime():
    def make(client=None, **kwargs):
        return LlmJudge(client or ScriptedClient(), **{"model": "claude-sonnet-5", **kwargs})

    sha = load_prompt(JUDGE_PROMPT_ID).sha256
    base = make()
    assert base.judge_id == f"anthropic:claude-sonnet-5|p={sha[:8]}|n=3|t=default|mt=1024"
    assert make().judge_id == base.judge_id
    others = {
        make(model="claude-opus-5").judge_id,
        make(samples=1).judge_id,
        make(temperature=0.0).judge_id,
        make(temperature=1).judge_id,
        make(max_tokens=512).judge_id,
        make(provider_label="bedrock").judge_id,
    }
    assert len(others) == 6 and base.judge_id not in others
    assert make(temperature=0.0).judge_id.endswith("|t=0|mt=1024")
    proxied = ScriptedClient()
    proxied.base_url = "http://127.0.0.1:8080/"
    assert "|u=http://127.0.0.1:8080|" in make(proxied).judge_id
    common = {"base_url": None, "samples": 3, "temperature": None, "max_tokens": 1024}
    assert llm_judge_id("anthropic", "m", prompt_sha256="a" * 64, **common) != llm_judge_id(
        "anthropic", "m", prompt_sha256="b" * 64, **common
    )


def test_regime_payload():
    judge = LlmJudge(ScriptedClient(), model="claude-sonnet-5", samples=3)
    assert isinstance(judge, Judge)
    payload = judge_regime_payload(judge, NORMALIZER_VERSION, ["bench", "run", "draco"])
    assert payload.judge_id == judge.judge_id and payload.official is True
    assert (payload.prompt_id, payload.prompt_sha256) == (
        JUDGE_PROMPT_ID,
        load_prompt(JUDGE_PROMPT_ID).sha256,
    )
    assert payload.samples == 3 and payload.normalizer_version == "draco-bibliography@1"
    assert payload.argv == ["bench", "run", "draco"]
    settings = payload.judge.settings
    assert settings["model"] == "claude-sonnet-5" and settings["temperature"] is None
    assert settings["prompt"]["sha256"] == judge.prompt_sha256


def test_build_judge(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    default = build_judge()
    assert DEFAULT_JUDGE_SPEC == "anthropic:claude-sonnet-5"
    assert isinstance(default, LlmJudge) and default.judge_id.startswith(
        "anthropic:claude-sonnet-5|p="
    )
    assert isinstance(build_judge("offline", samples=2), OfflineJudge)
    local = build_judge("openai-compatible:llama3@http://127.0.0.1:11434/v1", samples=1)
    assert local.judge_id.startswith("openai-compatible:llama3|u=http://127.0.0.1:11434/v1|p=")
    with pytest.raises(LlmConfigError, match="--judge"):
        build_judge("claude-sonnet-5")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(LlmConfigError, match="ANTHROPIC_API_KEY"):
        build_judge()


# --- end to end through the real OpenAI backend --------------------------------------------------


def _verdict_for(prompt: str) -> str:
    """A judge that finds 42 in the report: fenced JSON, lowercase verdict for the negative."""
    if 'type="NEGATIVE"' in prompt:
        return json.dumps({"verdict": "unmet", "justification": "It never claims 7."})
    return '```json\n{"verdict": "MET", "justification": "It says X is 42."}\n```'


@pytest.fixture
def openai_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)


def test_end_to_end_through_openai_backend(openai_key):
    with FakeLlmServer(_verdict_for) as fake:
        backend = OpenAIBackend(base_url=f"{fake.base_url}/v1", max_retries=0)
        judge = LlmJudge(backend, model="gpt-judge", temperature=0.0, max_tokens=300, samples=2)
        results = [
            judge.judge(TASK, c, REPORT, sample=s) for c in (POSITIVE, NEGATIVE) for s in (1, 2)
        ]
        calls, base_url = fake.calls, fake.base_url
    assert [(r.outcome, r.verdict, r.met) for r in results] == [
        ("parsed", "MET", True),
        ("parsed", "MET", True),
        ("parsed", "UNMET", False),
        ("parsed", "UNMET", False),
    ]
    assert len(calls) == 4  # one call per sample, no shared context
    for call, criterion in zip(calls, (POSITIVE, POSITIVE, NEGATIVE, NEGATIVE), strict=True):
        assert call.path == "/v1/chat/completions"
        assert call.body["messages"] == [
            {"role": "user", "content": judge.render(TASK, criterion, REPORT)}
        ]
        assert call.body["model"] == "gpt-judge" and call.body["temperature"] == 0.0
        assert call.body["max_completion_tokens"] == 300  # the OpenAI API itself
    record = results[0].llm
    assert record.provider == "openai" and record.model == "gpt-judge"
    assert record.prompt_id == JUDGE_PROMPT_ID
    assert record.prompt_sha256 == load_prompt(JUDGE_PROMPT_ID).sha256 == judge.prompt_sha256
    assert (record.temperature, record.max_tokens) == (0.0, 300)
    assert record.base_url == f"{base_url}/v1" and record.vendor_request_id
    assert f"|u={base_url}/v1|" in judge.judge_id
    assert CANARY not in record.model_dump_json()


def test_end_to_end_faults(openai_key):
    with FakeLlmServer(_verdict_for) as fake:
        backend = OpenAIBackend(base_url=f"{fake.base_url}/v1", max_retries=0)
        judge = LlmJudge(backend, model="gpt-judge")
        fake.add_faults(503)
        failed = judge.judge(TASK, NEGATIVE, REPORT, sample=1)
        fake.add_faults(401)
        with pytest.raises(LlmCallError) as err:
            judge.judge(TASK, POSITIVE, REPORT, sample=1)
        assert "temperature" not in fake.calls[0].body  # provider default when None
    assert (failed.outcome, failed.met, failed.error_class) == ("failed", True, "http_status")
    assert "503" in failed.error_message
    assert err.value.is_auth


def test_end_to_end_reask(openai_key):
    replies = iter(["Sure! The verdict is MET.", '{"verdict": "MET", "justification": "ok"}'])
    with FakeLlmServer(lambda prompt: next(replies)) as fake:
        backend = OpenAIBackend(base_url=f"{fake.base_url}/v1", max_retries=0)
        result = LlmJudge(backend, model="m").judge(TASK, POSITIVE, REPORT, sample=1)
        second = fake.calls[1].body["messages"]
    assert (result.outcome, result.met, result.reasks) == ("parsed", True, 1)
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[1]["content"] == "Sure! The verdict is MET."


# --- offline judge -----------------------------------------------------------------------------


def test_offline_judge_is_labelled_and_deterministic():
    judge = OfflineJudge(samples=3)
    assert isinstance(judge, Judge) and judge.official is False
    assert judge.judge_id == "offline-lexical-judge@1|n=3"
    a = judge.judge(TASK, POSITIVE, REPORT, sample=1)
    b = judge.judge(TASK, POSITIVE, REPORT, sample=2)
    assert (a.outcome, a.verdict, a.met, a.justification) == (
        b.outcome,
        b.verdict,
        b.met,
        b.justification,
    )
    assert a.llm.provider == "offline" and a.llm.model == "offline-lexical-judge@1"
    assert json.loads(a.llm.raw_completion)["verdict"] == a.verdict
    assert a.llm.prompt_sha256 == judge.prompt_sha256
    regime = judge_regime_payload(judge, NORMALIZER_VERSION)
    assert regime.official is False and regime.judge.settings["provider"] == "offline"


def test_offline_rule_and_thresholds():
    assert content_stems("States that the assert statement raises AssertionError") == {
        "assert",
        "statement",
        "rais",
        "assertionerror",
    }
    judge = OfflineJudge()
    positive = Criterion(
        "p", "a", "A", 0, 10, "Explains that assert statements raise AssertionError when false"
    )
    # content: assert, statement, rais, assertionerror, false -> 5 words
    hits = {
        "The assert statement raises AssertionError.": True,  # 4/5
        "An assert statement is a debugging aid.": False,  # 2/5 < 0.5
        "Assertions are removed with -O.": False,
    }
    for text, met in hits.items():
        assert judge.judge(TASK, positive, text, sample=1).met is met, text
    negative = Criterion(
        "n", "a", "A", 1, -10, "Claims that assert statements run even under python -O"
    )
    # content: assert, statement, run, even, python, o -> needs >= 0.75 (5 of 6). Crude: a
    # good text that repeated most of these words would trip it too (documented limitation).
    good = "Assert statements are removed under optimisation (-O); never rely on them."
    bad = "Assert statements still run even under python -O."
    assert judge.judge(TASK, negative, good, sample=1).met is False
    assert judge.judge(TASK, negative, bad, sample=1).met is True
    empty = Criterion("e", "a", "A", 2, 5, "States the the of")
    assert judge.judge(TASK, empty, "anything", sample=1).met is False
    assert (POSITIVE_MET_SHARE, NEGATIVE_MET_SHARE) == (0.5, 0.75)


def test_seeded_offline_samples_disagree_near_the_bar_and_repeat_per_seed():
    """With a seed, samples after the first move the bar by a seeded offset: a criterion whose
    share sits near the bar can be MET in one sample and UNMET in another; the same seed gives
    the same verdicts again, another seed other ones; sample 1 is always the plain rule."""
    from collectors.draco.offline_judge import SAMPLE_JITTER

    plain = OfflineJudge(samples=5)
    seeded = OfflineJudge(samples=5, seed=7)
    assert seeded.judge_id == "offline-lexical-judge@1|n=5|seed=7" and seeded.official is False
    assert seeded.system_ref().settings["seed"] == 7
    assert "seed" not in plain.system_ref().settings  # the unseeded regime is unchanged
    # content words: assert, statement, rais, assertionerror, false; the text has 2 of 5
    # (share 0.4, below the plain bar 0.5, within its reach: 0.5 - SAMPLE_JITTER <= 0.4)
    criteria = [
        Criterion(f"c{i}", "a", "A", i, 5, "Explains that assert statements raise AssertionError when false")
        for i in range(12)
    ]  # fmt: skip
    text = "An assert statement is a debugging aid."
    assert 0.5 - SAMPLE_JITTER <= 0.4

    def verdicts(judge):
        return [[judge.judge(TASK, c, text, sample=s).met for s in range(1, 6)] for c in criteria]

    got = verdicts(seeded)
    assert got == verdicts(OfflineJudge(samples=5, seed=7))  # reruns: identical
    assert all(row[0] is False for row in got)  # sample 1: the plain rule (0.4 < 0.5)
    assert any(len(set(row)) == 2 for row in got)  # some criterion's samples disagree
    assert got != verdicts(OfflineJudge(samples=5, seed=8))
    assert all(set(row) == {False} for row in verdicts(plain))  # no seed: no disagreement
    offsets = [seeded.bar_offset(TASK, c, s) for c in criteria for s in range(2, 6)]
    assert all(-SAMPLE_JITTER <= o <= SAMPLE_JITTER for o in offsets)


# --- prompt files ------------------------------------------------------------------------------


def test_prompt_files_and_research_instruction():
    from collectors.draco.prompts import PROMPTS, PROMPTS_DIR, research_instruction
    from warehouse.canonical import sha256_hex

    for prompt_id, (file_name, _, _) in PROMPTS.items():
        prompt = load_prompt(prompt_id)
        assert prompt.sha256 == sha256_hex((PROMPTS_DIR / file_name).read_bytes())
    problem = "Compare {a} and {b} for 2026."
    text, sha = research_instruction(problem)
    assert problem in text and "[n] title — URL" in text and "Sources" in text
    assert sha == load_prompt("draco-research-instruction@1").sha256
    assert research_instruction("other")[1] == sha  # one instruction hash per run


def test_preflight_passes_on_a_working_judge_and_stops_on_a_refused_or_failing_one():
    from collectors.draco.judge import JudgePreflightError, LlmJudge, preflight_judge
    from collectors.llm import make_backend
    from collectors.llm.base import LlmCallError
    from tests.qa.llm_fake import FakeLlmServer

    answer = '{"verdict": "MET", "justification": "It says so."}'
    with FakeLlmServer(lambda prompt: answer) as fake:
        backend = make_backend("openai-compatible", base_url=f"{fake.base_url}/v1", max_retries=0)
        judge = LlmJudge(backend, model="preflight-judge", samples=3)
        assert preflight_judge(judge).verdict == "MET"
        assert len(fake.state.calls) == 1
        fake.state.faults.append(401)
        with pytest.raises(LlmCallError) as refused:
            preflight_judge(judge)
        assert refused.value.is_auth
        fake.state.faults.append(500)
        with pytest.raises(JudgePreflightError, match="preflight failed"):
            preflight_judge(judge)
