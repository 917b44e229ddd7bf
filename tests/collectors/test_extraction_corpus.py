"""Corpus loading: the pinned upstream benchmark, tampered copies, bad input, the fetcher."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import httpx
import pytest

from collectors.extraction import article_benchmark_identity as pinned
from collectors.extraction.article_benchmark import (
    cached_copy_dir,
    fetch_article_benchmark,
    load_article_benchmark,
)
from collectors.extraction.article_benchmark_identity import COMMIT, GROUND_TRUTH_SHA256
from collectors.extraction.corpus import CorpusError, load_corpus
from warehouse.canonical import sha256_hex

PINNED = "512e9a9498912047a966e22f47302e849dfa45dca1f555d97588317dac7e5a3d"


def test_pinned_hash_is_the_documented_one():
    assert GROUND_TRUTH_SHA256 == PINNED
    assert len(pinned.ITEM_IDS) == 181


def test_real_benchmark_loads_181_items_with_the_pinned_hash(
    article_benchmark, article_benchmark_dir
):
    dataset = article_benchmark.dataset
    assert dataset.sha256 == PINNED
    assert dataset.item_count == len(article_benchmark.items) == 181
    assert dataset.name == "article-extraction-benchmark"
    assert dataset.revision == COMMIT
    ids = [item.item_id for item in article_benchmark.items]
    assert ids == sorted(ids)
    assert [item.position for item in article_benchmark.items] == list(range(181))
    first = article_benchmark.items[0]
    truth = json.loads((article_benchmark_dir / "ground-truth.json").read_text("utf-8"))
    assert first.truth_text == truth[first.item_id]["articleBody"]
    assert first.url == truth[first.item_id]["url"]
    page = first.read_html()
    raw = gzip.decompress(first.html_path.read_bytes())
    assert page.sha256 == first.html_sha256 == sha256_hex(raw)
    assert page.size == first.html_bytes == len(raw)


@pytest.fixture
def benchmark_copy(tmp_path: Path, article_benchmark_dir: Path) -> Path:
    copy = tmp_path / "article-extraction-benchmark"
    shutil.copytree(article_benchmark_dir, copy)
    return copy


def _flip_one_byte(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def test_tampered_ground_truth_is_refused(benchmark_copy: Path):
    truth = benchmark_copy / "ground-truth.json"
    text = truth.read_text("utf-8")
    # One byte inside an article body: still valid JSON, same ids, different bytes.
    offset = text.index('"articleBody": "') + len('"articleBody": "') + 5
    _flip_one_byte(truth, offset)
    json.loads(truth.read_text("utf-8"))  # still parses: only the pin catches it
    with pytest.raises(CorpusError) as caught:
        load_corpus(benchmark_copy)
    message = str(caught.value)
    assert str(truth) in message
    assert PINNED in message and "refusing" in message


def test_tampered_html_page_is_refused_naming_the_file(benchmark_copy: Path):
    page = sorted((benchmark_copy / "html").iterdir())[7]
    _flip_one_byte(page, 100)
    with pytest.raises(CorpusError, match="does not match the pinned") as caught:
        load_corpus(benchmark_copy)
    assert str(page) in str(caught.value)


def test_strict_loader_refuses_any_other_corpus(demo_corpus_dir: Path, tmp_path: Path):
    with pytest.raises(CorpusError, match="is not the pinned"):
        load_article_benchmark(demo_corpus_dir, cache_dir=tmp_path / "cache")


# --- bad input --------------------------------------------------------------------------------


def _write_corpus(root: Path, truth: object, pages: dict[str, bytes] | None = None) -> Path:
    (root / "html").mkdir(parents=True)
    (root / "ground-truth.json").write_text(json.dumps(truth), encoding="utf-8")
    for item_id, body in (pages or {}).items():
        (root / "html" / f"{item_id}.html.gz").write_bytes(gzip.compress(body, mtime=0))
    return root


def _page(text: str = "hello") -> bytes:
    return f"<html><body><p>{text}</p></body></html>".encode()


def test_user_corpus_is_accepted_with_its_own_hash(tmp_path: Path):
    root = _write_corpus(
        tmp_path / "mine",
        {"b": {"articleBody": "two", "url": None}, "a": {"articleBody": "one", "url": "u"}},
        {"a": _page(), "b": _page()},
    )
    corpus = load_corpus(root)
    assert corpus.dataset.sha256 == sha256_hex((root / "ground-truth.json").read_bytes())
    assert corpus.dataset.name == "mine"
    assert corpus.dataset.uri == root.resolve().as_uri()
    assert corpus.item_ids == ("a", "b")
    assert corpus.item("b").url is None


def test_missing_ground_truth_names_the_file(tmp_path: Path):
    with pytest.raises(CorpusError) as caught:
        load_corpus(tmp_path)
    assert str(tmp_path / "ground-truth.json") in str(caught.value)
    assert "not found" in str(caught.value)


def test_bad_json_names_the_file_and_position(tmp_path: Path):
    (tmp_path / "ground-truth.json").write_text('{"a": {"articleBody": "x",}}', encoding="utf-8")
    with pytest.raises(CorpusError, match=r"not valid JSON: .* line 1 column") as caught:
        load_corpus(tmp_path)
    assert str(tmp_path / "ground-truth.json") in str(caught.value)


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"articleBody": None}, "item 'a': field 'articleBody' must be a string, got null"),
        ({"articleBody": 3}, "item 'a': field 'articleBody' must be a string, got int"),
        ({"url": "u"}, "item 'a': field 'articleBody' is missing"),
        ({"articleBody": "x", "url": 5}, "item 'a': field 'url' must be a string"),
        ("text", "item 'a': expected an object, got str"),
    ],
)
def test_bad_entries_name_the_file_item_and_field(tmp_path: Path, entry, expected):
    root = _write_corpus(tmp_path / "c", {"a": entry}, {"a": _page()})
    with pytest.raises(CorpusError) as caught:
        load_corpus(root)
    assert str(root / "ground-truth.json") in str(caught.value)
    assert expected in str(caught.value)


def test_ids_that_could_escape_the_html_dir_are_refused(tmp_path: Path):
    root = _write_corpus(tmp_path / "c", {"../etc": {"articleBody": "x"}})
    with pytest.raises(CorpusError, match=r"item '\.\./etc': item ids may only use"):
        load_corpus(root)


def test_not_an_object_and_empty_are_refused(tmp_path: Path):
    root = _write_corpus(tmp_path / "list", [1, 2])
    with pytest.raises(CorpusError, match="expected a JSON object"):
        load_corpus(root)
    root = _write_corpus(tmp_path / "empty", {})
    with pytest.raises(CorpusError, match="has no items"):
        load_corpus(root)


def test_missing_html_names_the_file_and_id(tmp_path: Path):
    root = _write_corpus(
        tmp_path / "c",
        {"a": {"articleBody": "x"}, "b": {"articleBody": "y"}},
        {"a": _page()},
    )
    with pytest.raises(CorpusError) as caught:
        load_corpus(root)
    message = str(caught.value)
    assert str(root / "html" / "b.html.gz") in message and "item 'b'" in message


def test_broken_gzip_and_non_utf8_pages_are_refused(tmp_path: Path):
    root = _write_corpus(tmp_path / "gz", {"a": {"articleBody": "x"}})
    (root / "html" / "a.html.gz").write_bytes(b"<html>not compressed</html>")
    with pytest.raises(CorpusError, match=r"a\.html\.gz: not a valid gzip file"):
        load_corpus(root)
    root = _write_corpus(tmp_path / "latin1", {"a": {"articleBody": "x"}}, {"a": b"caf\xe9"})
    with pytest.raises(CorpusError, match=r"a.html.gz: the page is not UTF-8 \(byte 3"):
        load_corpus(root)


# --- fetching the pinned corpus (never the internet: a MockTransport serves the local copy) ---


def _upstream_stand_in(
    source: Path, overrides: dict[str, httpx.Response] | None = None, log=None
) -> httpx.Client:
    """raw.githubusercontent.com as an in-process MockTransport serving the local copy."""
    prefix = f"/scrapinghub/article-extraction-benchmark/{COMMIT}/"

    def handler(request: httpx.Request) -> httpx.Response:
        if log is not None:
            log.append(request.url.path)
        relative = request.url.path.removeprefix(prefix)
        if overrides and relative in overrides:
            return overrides.pop(relative)
        path = source / relative
        if request.url.host != "raw.githubusercontent.com" or not path.is_file():
            return httpx.Response(404, text="404: Not Found")
        return httpx.Response(200, content=path.read_bytes())

    return httpx.Client(transport=httpx.MockTransport(handler))


def test_fetch_downloads_verifies_and_loads(tmp_path: Path, article_benchmark_dir: Path):
    requests: list[str] = []
    with _upstream_stand_in(article_benchmark_dir, log=requests) as client:
        corpus = load_article_benchmark(
            tmp_path / "absent", cache_dir=tmp_path / "cache", client=client
        )
    assert corpus.dataset.sha256 == PINNED and len(corpus.items) == 181
    assert corpus.root == cached_copy_dir(tmp_path / "cache")
    assert len(requests) == 182
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == [corpus.root.name]

    def no_network(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"unexpected request {request.url}")

    with httpx.Client(transport=httpx.MockTransport(no_network)) as offline:
        again = load_article_benchmark(None, cache_dir=tmp_path / "cache", client=offline)
    assert again.dataset == corpus.dataset


def test_fetch_refuses_a_tampered_download_and_leaves_nothing(
    tmp_path: Path, article_benchmark_dir: Path
):
    some_page = f"html/{sorted(pinned.ITEM_IDS)[3]}.html.gz"
    bad = httpx.Response(200, content=b"\x1f\x8b tampered")
    dest = tmp_path / "cache" / "copy"
    with (
        _upstream_stand_in(article_benchmark_dir, {some_page: bad}) as client,
        pytest.raises(CorpusError) as caught,
    ):
        fetch_article_benchmark(dest, client=client)
    message = str(caught.value)
    assert some_page in message and "does not match the pinned" in message
    assert list((tmp_path / "cache").iterdir()) == []  # no partial directory left behind


def test_fetch_retries_transient_errors_and_reports_hard_ones(
    tmp_path: Path, article_benchmark_dir: Path
):
    flaky = {"ground-truth.json": httpx.Response(503, text="busy")}
    with _upstream_stand_in(article_benchmark_dir, flaky) as client:
        fetch_article_benchmark(tmp_path / "ok", client=client)
    assert load_corpus(tmp_path / "ok").dataset.sha256 == PINNED

    with (
        _upstream_stand_in(article_benchmark_dir) as client,
        pytest.raises(CorpusError, match=r"download failed .*404"),
    ):
        fetch_article_benchmark(tmp_path / "nope", client=client, base_url="https://elsewhere.test")
    assert not (tmp_path / "nope").exists()
