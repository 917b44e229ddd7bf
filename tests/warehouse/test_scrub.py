"""Every configured secret is scrubbed at the log's append boundary, in every encoding a vendor
or a URL can carry it, and the line still verifies."""

from __future__ import annotations

import base64
from urllib.parse import quote

import pytest

from warehouse.events import DatasetRef, RunStarted, make_event
from warehouse.log import EventLog
from warehouse.provenance import producer_for
from warehouse.scrub import Scrubber, configured_secrets
from warehouse.verify import verify_log

CANARY = "sk-canary/7f3e+9c1d2b4a6e8f0a1b"
PRODUCER = producer_for({"test": "scrub"})
DATASET = DatasetRef(name="demo", uri="demo:", sha256="0" * 64, item_count=1)


def encodings(secret: str) -> dict[str, str]:
    b64 = base64.b64encode(f"user:{secret}".encode()).decode()
    return {
        "raw": f"Incorrect API key provided: {secret}.",
        "json-escaped": "".join(f"\\u{ord(c):04x}" for c in secret),
        "half-escaped": "".join(f"\\u{ord(c):04X}" if i % 2 else c for i, c in enumerate(secret)),
        "percent": f"https://h/v1?key={quote(secret, safe='')}",
        "percent-lower": quote(secret, safe="").lower().replace("sk-canary", "sk-canary"),
        "base64": base64.b64encode(secret.encode()).decode(),
        "base64-offset": f"Basic {b64}",
        "urlsafe-base64": base64.urlsafe_b64encode(b"xy" + secret.encode()).decode(),
        "url-credentials": "openai-compatible:m@http://user:other-password-123@host/v1",
    }


def leaked(data: bytes, secret: str) -> list[str]:
    text = data.decode("utf-8")
    found = [
        name
        for name, form in encodings(secret).items()
        if name != "url-credentials" and form in text
    ]
    if "other-password-123" in text:
        found.append("url-credentials")
    return found


@pytest.mark.parametrize("name", list(encodings(CANARY)))
def test_scrubber_removes_every_form(name):
    scrubber = Scrubber([CANARY])
    form = encodings(CANARY)[name]
    cleaned, count = scrubber.text(f"before {form} after")
    assert count >= 1, name
    assert form not in cleaned and "other-password-123" not in cleaned


def test_secrets_come_from_key_named_environment_variables():
    env = {
        "OPENAI_API_KEY": "sk-aaaaaaaaaaaa",
        "BRAVE_SEARCH_API_KEY": "x" * 20,
        "HOME": "/h" * 9,
        "GH_TOKEN": "short",
        "BENCH_LOG_SIGNING_KEY": "/root/.config/bench/log.key",
        "GOOGLE_CREDENTIALS_FILE": "/etc/creds.json",
    }
    assert configured_secrets(env) == ["sk-aaaaaaaaaaaa", "x" * 20]


def test_writer_scrubs_before_a_line_exists_and_the_line_verifies(tmp_path, monkeypatch):
    monkeypatch.setenv("EXAMPLE_API_KEY", CANARY)
    argv = list(encodings(CANARY).values())
    event = make_event(
        RunStarted(
            benchmark="simpleqa",
            source="engine",
            spec={"judge": {"base_url": "http://user:other-password-123@host/v1"}, "echo": argv},
            spec_sha256="0" * 64,
            dataset=DATASET,
            systems=[],
            argv=argv,
        ),
        run_id="run-scrub",
        producer=PRODUCER,
    )
    log = EventLog(tmp_path / "log")
    with log.writer() as writer:
        assert writer.append([event]) == 1
    assert writer.scrubbed >= len(argv) + 1
    data = b"".join(p.read_bytes() for p in (tmp_path / "log").rglob("*") if p.is_file())
    assert leaked(data, CANARY) == []
    assert b"[REDACTED]" in data
    seal = log.manifest()[log.segments()[0].name]
    assert seal["scrubbed"] == writer.scrubbed  # the count is recorded, the value never
    assert verify_log(log).intact


def test_events_without_secrets_are_written_unchanged(tmp_path, monkeypatch):
    monkeypatch.setenv("EXAMPLE_API_KEY", CANARY)
    event = make_event(
        RunStarted(
            benchmark="simpleqa",
            source="engine",
            spec={"a": "\u0007 bell"},
            spec_sha256="0" * 64,
            dataset=DATASET,
            systems=[],
            argv=["x"],
        ),
        run_id="run-plain",
        producer=PRODUCER,
    )
    log = EventLog(tmp_path / "log")
    with log.writer() as writer:
        writer.append([event])
    assert writer.scrubbed == 0
    ((_, stored),) = list(log.read(upcasted=False))
    assert stored["content_sha256"] == event.content_sha256
