"""LLM backends against a loopback server speaking the vendors' shapes (SDKs on httpx2)."""

from __future__ import annotations

import pytest

from collectors.llm import LlmCallError, LlmConfigError, PromptRef, make_backend
from collectors.llm.anthropic_backend import API_VERSION, AnthropicBackend
from collectors.llm.openai_backend import OpenAIBackend

PROMPT = PromptRef("test-prompt@1", "ab" * 32)
CANARY = "sk-canary-7f3a9c1e-do-not-log"


@pytest.fixture
def keys(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)


def test_anthropic_messages_shape_and_record(fake_llm, keys):
    backend = AnthropicBackend(base_url=fake_llm.base_url, max_retries=0)
    record = backend.complete(
        "Who? Search results: x",
        prompt=PROMPT,
        model="claude-test-1",
        temperature=0.0,
        max_tokens=64,
        system="be brief",
    )
    assert record.provider == "anthropic" and record.model == "claude-test-1"
    assert record.raw_completion == "RuntimeError"
    assert (record.input_tokens, record.output_tokens) == (
        record.input_tokens,
        3,
    ) and record.input_tokens >= 11
    assert record.vendor_request_id.startswith("req_fake")
    assert record.prompt_id == "test-prompt@1" and record.prompt_sha256 == "ab" * 32
    assert record.temperature == 0.0 and record.max_tokens == 64 and record.latency_ms > 0
    assert record.base_url == fake_llm.base_url
    (call,) = fake_llm.calls
    assert call.path == "/v1/messages"
    assert call.headers["anthropic-version"] == API_VERSION == "2023-06-01"
    assert call.headers["x-api-key"] == CANARY  # sent to the provider...
    assert CANARY not in record.model_dump_json()  # ...never recorded
    assert call.body["temperature"] == 0.0 and call.body["max_tokens"] == 64
    assert call.body["system"] == "be brief" and call.body["model"] == "claude-test-1"
    assert call.body["messages"] == [{"role": "user", "content": "Who? Search results: x"}]


def test_openai_chat_completions_shape_and_record(fake_llm, keys):
    backend = OpenAIBackend(base_url=f"{fake_llm.base_url}/v1", max_retries=0)
    record = backend.complete(
        [{"role": "user", "content": "Gold target: x"}],
        prompt=PROMPT,
        model="gpt-test",
        temperature=0.5,
        max_tokens=2048,
        system="You are a helpful assistant.",
    )
    assert record.provider == "openai" and record.model == "gpt-test"
    assert record.raw_completion == "A"
    assert (record.input_tokens, record.output_tokens) == (21, 4)
    assert record.vendor_request_id.startswith("req_oai")
    (call,) = fake_llm.calls
    assert call.path == "/v1/chat/completions"
    assert call.headers["authorization"] == f"Bearer {CANARY}"
    assert call.body["messages"][0] == {"role": "system", "content": "You are a helpful assistant."}
    assert call.body["temperature"] == 0.5 and call.body["max_completion_tokens"] == 2048
    assert "max_tokens" not in call.body  # deprecated in the SDK, rejected by reasoning models


@pytest.mark.parametrize("model", ["gpt-5.1", "o3"])
def test_fake_rejects_what_the_real_api_rejects(fake_llm, keys, model):
    """The loopback server answers like OpenAI does for a reasoning model, through the SDK."""
    import openai

    client = openai.OpenAI(base_url=f"{fake_llm.base_url}/v1", max_retries=0)
    messages = [{"role": "user", "content": "hi"}]
    with pytest.raises(openai.BadRequestError) as err:
        client.chat.completions.create(model=model, messages=messages, max_tokens=16)
    assert err.value.code == "unsupported_parameter" and err.value.param == "max_tokens"
    with pytest.raises(openai.BadRequestError) as err:
        client.chat.completions.create(
            model=model, messages=messages, max_completion_tokens=16, temperature=0
        )
    assert err.value.code == "unsupported_value" and err.value.param == "temperature"


@pytest.mark.parametrize(("model", "temperature"), [("gpt-5.1", 0.0), ("o3", 0.5), ("o4-mini", 1)])
def test_reasoning_models_get_max_completion_tokens_and_no_temperature(
    fake_llm, keys, model, temperature
):
    backend = OpenAIBackend(base_url=f"{fake_llm.base_url}/v1", max_retries=0)
    record = backend.complete(
        "Gold target: x", prompt=PROMPT, model=model, temperature=temperature, max_tokens=256
    )
    (call,) = fake_llm.calls
    assert call.body["max_completion_tokens"] == 256 and "max_tokens" not in call.body
    sent = call.body.get("temperature")
    assert sent == (1 if temperature == 1 else None)
    assert record.temperature == sent and record.raw_completion == "A"


def test_compatible_servers_keep_max_tokens(fake_llm, keys):
    backend = make_backend("openai-compatible", base_url=f"{fake_llm.base_url}/v1", max_retries=0)
    backend.complete("hi", prompt=PROMPT, model="llama-local", temperature=0.2, max_tokens=8)
    assert fake_llm.calls[0].body["max_tokens"] == 8
    assert fake_llm.calls[0].body["temperature"] == 0.2


def test_openai_compatible_needs_no_key_and_is_labelled(fake_llm, keys):
    backend = make_backend("openai-compatible", base_url=f"{fake_llm.base_url}/v1", max_retries=0)
    record = backend.complete(
        "hi", prompt=PROMPT, model="llama-local", temperature=None, max_tokens=8
    )
    assert record.provider == "openai-compatible" and record.base_url.endswith("/v1")
    assert "temperature" not in fake_llm.calls[0].body
    assert fake_llm.calls[0].headers["authorization"] != f"Bearer {CANARY}"


def test_missing_keys_fail_before_any_call(monkeypatch, fake_llm):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(LlmConfigError, match="ANTHROPIC_API_KEY is not set"):
        AnthropicBackend(base_url=fake_llm.base_url)
    with pytest.raises(LlmConfigError, match="OPENAI_API_KEY is not set"):
        make_backend("openai")
    with pytest.raises(LlmConfigError, match="needs a base URL"):
        make_backend("openai-compatible")
    with pytest.raises(LlmConfigError, match="unknown LLM provider"):
        make_backend("gemini")
    assert fake_llm.calls == []


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
@pytest.mark.parametrize(
    ("status", "error_class", "landed", "auth"),
    [
        (400, "http_status", True, False),
        (401, "auth", True, True),
        (503, "http_status", False, False),
    ],
)
def test_errors_are_mapped(fake_llm, keys, kind, status, error_class, landed, auth):
    base = fake_llm.base_url if kind == "anthropic" else f"{fake_llm.base_url}/v1"
    backend = make_backend(kind, base_url=base, max_retries=0)
    fake_llm.add_faults(status)
    with pytest.raises(LlmCallError) as err:
        backend.complete("q", prompt=PROMPT, model="m", temperature=0.0, max_tokens=5)
    exc = err.value
    assert (exc.status_code, exc.error_class, exc.landed, exc.is_auth) == (
        status,
        error_class,
        landed,
        auth,
    )
    assert exc.request["method"] == "POST" and exc.request["body"]["model"] == "m"
    assert CANARY not in repr(exc.request) and CANARY not in (exc.raw_body or "")


def test_bounded_retries_are_the_sdks(fake_llm, keys):
    backend = OpenAIBackend(base_url=f"{fake_llm.base_url}/v1", max_retries=1)
    fake_llm.add_faults(500, 500, 500)
    with pytest.raises(LlmCallError):
        backend.complete("q", prompt=PROMPT, model="m", temperature=0.0, max_tokens=5)
    assert len(fake_llm.calls) == 2  # one try + max_retries, never more


def test_unreachable_server_is_a_connection_error(keys):
    backend = OpenAIBackend(base_url="http://127.0.0.1:9/v1", max_retries=0, timeout_s=2)
    with pytest.raises(LlmCallError) as err:
        backend.complete("q", prompt=PROMPT, model="m", temperature=0.0, max_tokens=5)
    assert err.value.error_class in ("connection", "timeout") and not err.value.landed


def test_role_specs(fake_llm, keys, tmp_path):
    from collectors.llm.spec import LlmSpec, parse_llm_spec
    from collectors.qa.offline import (
        ExtractiveSynthesizer,
        LexicalRelevanceJudge,
        NormalizedMatchGrader,
    )
    from collectors.qa.role_specs import build_grader, build_relevance_judge, build_synthesizer
    from collectors.qa.roles import LlmSynthesizer, UmbrelaJudge

    assert parse_llm_spec("offline") is None
    assert parse_llm_spec("openai:gpt-4o") == LlmSpec("openai", "gpt-4o")
    assert parse_llm_spec("openai-compatible:llama3@http://127.0.0.1:11434/v1") == LlmSpec(
        "openai-compatible", "llama3", "http://127.0.0.1:11434/v1"
    )
    for bad in ("gpt-4o", "gemini:x", "openai-compatible:llama3", "anthropic:"):
        with pytest.raises(LlmConfigError, match="--llm"):
            parse_llm_spec(bad)
    assert isinstance(build_synthesizer("offline"), ExtractiveSynthesizer)
    assert isinstance(build_grader("offline", cache_dir=tmp_path), NormalizedMatchGrader)
    assert not list(tmp_path.iterdir())  # the offline grader fetches no template
    assert isinstance(build_relevance_judge("offline"), LexicalRelevanceJudge)
    assert build_relevance_judge(None) is None and build_relevance_judge("none") is None
    synth = build_synthesizer(f"openai-compatible:m@{fake_llm.base_url}/v1")
    assert isinstance(synth, LlmSynthesizer) and synth.system_ref().settings["base_url"].endswith(
        "/v1"
    )
    assert isinstance(build_relevance_judge("anthropic:claude-x"), UmbrelaJudge)


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
def test_record_keeps_the_request_as_sent_and_the_raw_response(fake_llm, keys, kind):
    import json

    base = fake_llm.base_url if kind == "anthropic" else f"{fake_llm.base_url}/v1"
    backend = make_backend(kind, base_url=base, max_retries=0)
    record = backend.complete(
        "Gold target: x", prompt=PROMPT, model="m-1", temperature=0.0, max_tokens=32, system="s"
    )
    (call,) = fake_llm.calls
    sent = record.request
    assert sent.method == "POST" and sent.url == f"{fake_llm.base_url}{call.path}"
    assert sent.body == call.body  # every message and parameter, exactly as on the wire
    auth = "x-api-key" if kind == "anthropic" else "authorization"
    assert call.headers[auth].endswith(CANARY) and sent.headers[auth] == "[REDACTED]"
    raw = json.loads(record.raw_body)
    assert raw["model"] == "m-1" and ("content" in raw or "choices" in raw)
    assert CANARY not in record.model_dump_json()


@pytest.mark.parametrize("model", ["gpt-5.1", "o3"])
def test_reasoning_model_record_shows_the_parameters_actually_sent(fake_llm, keys, model):
    backend = OpenAIBackend(base_url=f"{fake_llm.base_url}/v1", max_retries=0)
    record = backend.complete("q", prompt=PROMPT, model=model, temperature=0.0, max_tokens=64)
    assert record.request.body["max_completion_tokens"] == 64
    assert "max_tokens" not in record.request.body and "temperature" not in record.request.body
    assert record.temperature is None


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
def test_a_rejected_call_keeps_the_request_the_sdk_sent(fake_llm, keys, kind):
    base = fake_llm.base_url if kind == "anthropic" else f"{fake_llm.base_url}/v1"
    backend = make_backend(kind, base_url=base, max_retries=0)
    fake_llm.add_faults(400)
    with pytest.raises(LlmCallError) as err:
        backend.complete("q", prompt=PROMPT, model="m", temperature=0.0, max_tokens=5)
    (call,) = fake_llm.calls
    sent = err.value.request
    assert sent["body"] == call.body and sent["url"] == f"{fake_llm.base_url}{call.path}"
    assert CANARY not in repr(sent) and "[REDACTED]" in sent["headers"].values()


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
def test_a_refusal_that_echoes_the_key_is_redacted_everywhere(fake_llm, keys, kind):
    base = fake_llm.base_url if kind == "anthropic" else f"{fake_llm.base_url}/v1"
    backend = make_backend(kind, base_url=base, max_retries=0)
    fake_llm.echo_key_in(401)
    fake_llm.add_faults(401)
    with pytest.raises(LlmCallError) as err:
        backend.complete("q", prompt=PROMPT, model="m", temperature=0.0, max_tokens=5)
    exc = err.value
    assert exc.status_code == 401 and exc.is_auth
    # The vendor's body and the SDK's message both carried the key; what we keep does not.
    assert "Incorrect API key provided: [REDACTED]" in exc.raw_body
    assert "[REDACTED]" in exc.message
    for kept in (exc.message, exc.raw_body, str(exc), repr(exc)):
        assert CANARY not in kept


def test_llm_preflight_never_prints_an_echoed_key(fake_llm, keys):
    from types import SimpleNamespace

    from collectors.qa.preflight import preflight_qa

    role = SimpleNamespace(
        client=make_backend("openai", base_url=f"{fake_llm.base_url}/v1", max_retries=0),
        model="m",
        temperature=0.0,
    )
    fake_llm.echo_key_in(401)
    fake_llm.add_faults(None, 401)  # the synthesizer answers, the grader's key is refused
    synthesizer, grader = preflight_qa([], synthesizer=role, grader=role)
    assert synthesizer.ok and (grader.ok, grader.status) == (False, "auth_failed")
    assert "HTTP 401" in grader.detail and CANARY not in grader.detail
