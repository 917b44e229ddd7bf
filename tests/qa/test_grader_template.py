"""The official grader template: fetched at a pin, read with ast, never executed or copied."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from collectors.qa import grader_template as gt
from warehouse.canonical import sha256_hex

STAND_IN_TEMPLATE = """
Stand-in grader (test only, not the upstream text).
Question: {question}
Gold target: {target}
Predicted answer: {predicted_answer}
Reply A, B or C.
"""
CANARY_FILE = "executed.txt"


def stand_in_source(template: str, *, canary_dir: Path) -> bytes:
    # Module-level code that would leave a file behind if anything imported or ran it.
    return (
        '"""Stand-in for simpleqa_eval.py."""\n'
        "import pathlib\n"
        f"pathlib.Path({str(canary_dir / CANARY_FILE)!r}).write_text('ran')\n"
        f"GRADER_TEMPLATE = {template!r}.strip()\n"
        "CHOICE_LETTERS = ['A', 'B', 'C']\n"
    ).encode()


def pin_for(url: str, source: bytes, template: str) -> gt.TemplatePin:
    text = template.strip()
    return gt.TemplatePin(url, "0" * 40, sha256_hex(source), sha256_hex(text), len(text))


class _Static(BaseHTTPRequestHandler):
    files: ClassVar[dict[str, bytes]] = {}
    hits: ClassVar[list[str]] = []

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        self.hits.append(self.path)
        data = self.files.get(self.path)
        self.send_response(200 if data is not None else 404)
        self.send_header("Content-Length", str(len(data or b"")))
        self.end_headers()
        self.wfile.write(data or b"")


@pytest.fixture
def static_server():
    handler = type("Handler", (_Static,), {"files": {}, "hits": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    try:
        yield handler, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_real_pins_are_the_published_ones():
    assert gt.COMMIT == "ee3b0318d8d1d9d72755a4120879be65f7c07e9e"
    assert gt.RAW_URL == (
        "https://raw.githubusercontent.com/openai/simple-evals/"
        "ee3b0318d8d1d9d72755a4120879be65f7c07e9e/simpleqa_eval.py"
    )
    assert gt.FILE_SHA256 == "d61a8f97132b29f6fe5d264dd9d619407ea14421525827fabd4cc21162e35c29"
    assert gt.TEMPLATE_SHA256 == "063c04ea798f91c4706c050b66a721afc77a458b12d8f0d72286d4b0eee8a3ee"
    assert gt.TEMPLATE_LENGTH == 5_964
    assert {"question", "target", "predicted_answer"} == gt.PLACEHOLDERS


def test_the_template_text_is_not_in_the_repository():
    root = Path(__file__).resolve().parents[2]
    # Split so that this file does not itself contain the phrase it looks for.
    marker = "Simply reply with " + "either CORRECT, INCORRECT"
    for path in [*root.joinpath("collectors").rglob("*"), *root.joinpath("tests").rglob("*.py")]:
        if path.is_file() and path.suffix in (".py", ".txt", ".md", ".json", ".jsonl"):
            assert marker not in path.read_text(encoding="utf-8", errors="replace"), path


def test_fetch_verify_and_read_without_executing(static_server, tmp_path):
    handler, base = static_server
    source = stand_in_source(STAND_IN_TEMPLATE, canary_dir=tmp_path)
    handler.files["/simpleqa_eval.py"] = source
    pin = pin_for(f"{base}/simpleqa_eval.py", source, STAND_IN_TEMPLATE)

    template = gt.load_grader_template(tmp_path / "cache", pin=pin)
    assert template.text == STAND_IN_TEMPLATE.strip()
    assert template.sha256 == pin.template_sha256 and template.source_url == pin.url
    assert template.prompt_id == f"simpleqa-grader-template@{'0' * 12}"
    assert "Gold target: Paris" in template.render(
        question="Q", target="Paris", predicted_answer="P"
    )
    assert not (tmp_path / CANARY_FILE).exists(), "the fetched file was executed"
    assert gt.cached_source_path(tmp_path / "cache", pin).read_bytes() == source

    gt.load_grader_template(tmp_path / "cache", pin=pin)  # from the cache
    assert handler.hits == ["/simpleqa_eval.py"]


def test_wrong_file_hash_is_refused_and_not_cached(static_server, tmp_path):
    handler, base = static_server
    source = stand_in_source(STAND_IN_TEMPLATE, canary_dir=tmp_path)
    handler.files["/simpleqa_eval.py"] = source + b"# edited\n"
    pin = pin_for(f"{base}/simpleqa_eval.py", source, STAND_IN_TEMPLATE)
    with pytest.raises(gt.TemplateError, match="does not match the pinned"):
        gt.load_grader_template(tmp_path / "cache", pin=pin)
    assert not gt.cached_source_path(tmp_path / "cache", pin).exists()


def test_edited_cache_file_is_refused_naming_it(static_server, tmp_path):
    handler, base = static_server
    source = stand_in_source(STAND_IN_TEMPLATE, canary_dir=tmp_path)
    handler.files["/simpleqa_eval.py"] = source
    pin = pin_for(f"{base}/simpleqa_eval.py", source, STAND_IN_TEMPLATE)
    gt.load_grader_template(tmp_path / "cache", pin=pin)
    cached = gt.cached_source_path(tmp_path / "cache", pin)
    cached.write_bytes(source.replace(b"Reply A", b"Reply X"))
    with pytest.raises(gt.TemplateError, match=str(cached)):
        gt.load_grader_template(tmp_path / "cache", pin=pin)


def test_template_pin_is_checked_after_the_file_pin(static_server, tmp_path):
    handler, base = static_server
    source = stand_in_source(STAND_IN_TEMPLATE, canary_dir=tmp_path)
    handler.files["/simpleqa_eval.py"] = source
    good = pin_for(f"{base}/simpleqa_eval.py", source, STAND_IN_TEMPLATE)
    wrong = gt.TemplatePin(good.url, good.commit, good.file_sha256, "f" * 64, good.template_length)
    with pytest.raises(gt.TemplateError, match="GRADER_TEMPLATE has sha256"):
        gt.load_grader_template(tmp_path / "cache", pin=wrong)


def test_placeholders_are_checked(static_server, tmp_path):
    handler, base = static_server
    template = "Question: {question}\nAnswer: {predicted_answer}"
    source = stand_in_source(template, canary_dir=tmp_path)
    handler.files["/simpleqa_eval.py"] = source
    with pytest.raises(gt.TemplateError, match="placeholders"):
        gt.load_grader_template(
            tmp_path / "cache", pin=pin_for(f"{base}/simpleqa_eval.py", source, template)
        )


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('GRADER_TEMPLATE = "  plain  "\n', "plain"),
        ('GRADER_TEMPLATE = """\n multi\n""".strip()\n', "multi"),
        ("x = 1\n", None),
        ('GRADER_TEMPLATE = f"{x}"\n', None),
        ('GRADER_TEMPLATE = "a" + "b"\n', None),
        ("def f(:\n", None),
    ],
)
def test_extract_template_reads_only_plain_literals(source, expected):
    if expected is None:
        with pytest.raises(gt.TemplateError):
            gt.extract_template(source, "x.py")
    else:
        assert gt.extract_template(source, "x.py") == expected


@pytest.mark.parametrize(
    ("completion", "grade", "parse_ok"),
    [
        ("A", "A", True),
        ("B", "B", True),
        ("C", "C", True),
        ("The answer is B", "B", True),  # upstream: first A|B|C anywhere, not word-bounded
        ("  c  ", "C", False),
        ("", "C", False),
        ("CORRECT", "C", True),
        ("INCORRECT", "C", True),
    ],
)
def test_parse_grade_is_upstreams_rule(completion, grade, parse_ok):
    assert gt.parse_grade(completion) == (grade, parse_ok)
    assert gt.GRADE_LABELS[grade] in ("correct", "incorrect", "not_attempted")
