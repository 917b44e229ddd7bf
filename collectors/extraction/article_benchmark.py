"""The pinned upstream corpus: scrapinghub/article-extraction-benchmark at one commit.

Every file's sha256 is pinned (`article_benchmark_pins`). A local copy is used only if it
matches byte for byte; otherwise it is refused, naming the file (methodology 5.3: mirrors
drift). When no local copy exists, the files are fetched from the repository's raw URLs at
the pinned commit into a cache directory, each verified before the directory is made visible.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import httpx

from collectors.extraction.article_benchmark_identity import (
    _LABEL,
    COMMIT,
    GROUND_TRUTH_SHA256,
    NAME,
    RAW_BASE_URL,
)
from collectors.extraction.article_benchmark_pins import FILE_SHA256
from collectors.extraction.corpus import Corpus, load_corpus
from collectors.extraction.corpus_format import GROUND_TRUTH_FILE, HTML_DIR, CorpusError
from collectors.pinned import PinError, get_pinned_bytes, new_client


def fetch_article_benchmark(
    dest: Path, *, client: httpx.Client | None = None, base_url: str = RAW_BASE_URL
) -> Path:
    """Download every pinned file into `dest` (which must not exist yet), verifying each."""
    dest = Path(dest)
    if dest.exists():
        raise FileExistsError(f"{dest}: already exists; refusing to overwrite it")
    dest.parent.mkdir(parents=True, exist_ok=True)
    # Build beside the destination and rename at the end: a half-fetched corpus never
    # appears under the real name.
    partial = dest.parent / f".{dest.name}.partial-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    (partial / HTML_DIR).mkdir(parents=True)
    own_client = client is None
    client = client or new_client()
    try:
        for relative, expected in sorted(FILE_SHA256.items()):
            url = f"{base_url.rstrip('/')}/{COMMIT}/{relative}"
            try:
                data = get_pinned_bytes(client, url, expected)
            except PinError as exc:
                raise CorpusError(f"{exc} ({relative} of {_LABEL})") from exc
            (partial / relative).write_bytes(data)
        partial.rename(dest)
    finally:
        if own_client:
            client.close()
        shutil.rmtree(partial, ignore_errors=True)
    return dest


def cached_copy_dir(cache_dir: Path) -> Path:
    return Path(cache_dir) / f"{NAME}-{COMMIT[:12]}"


def load_article_benchmark(
    data_dir: Path | None,
    *,
    cache_dir: Path,
    client: httpx.Client | None = None,
    base_url: str = RAW_BASE_URL,
) -> Corpus:
    """The pinned benchmark from `data_dir` if it exists, else from (or fetched into) the cache.

    Anything that is not byte-identical to the pinned files is refused with `CorpusError`."""
    if data_dir is not None and Path(data_dir).exists():
        root = Path(data_dir)
    else:
        root = cached_copy_dir(cache_dir)
        if not root.exists():
            fetch_article_benchmark(root, client=client, base_url=base_url)
    corpus = load_corpus(root)
    if corpus.dataset.sha256 != GROUND_TRUTH_SHA256:
        raise CorpusError(
            f"{root / GROUND_TRUTH_FILE}: sha256 {corpus.dataset.sha256} is not the pinned "
            f"{GROUND_TRUTH_SHA256} of {_LABEL}"
        )
    return corpus
