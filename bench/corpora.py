"""Resolve a corpus name or path given on the command line to a loaded extraction corpus."""

from __future__ import annotations

from pathlib import Path

from bench.settings import shared_data_dir
from warehouse.paths import BenchPaths

ARTICLE_BENCHMARK = "article-extraction-benchmark"
CORPUS_HELP = (
    f"'{ARTICLE_BENCHMARK}' (the pinned Zyte benchmark: ../shared/data, else fetched and "
    "sha256-checked), 'demo' (built offline from Python's own docs), or a corpus directory "
    "(ground-truth.json + html/<id>.html.gz)."
)


def resolve_corpus(spec: str, paths: BenchPaths):
    from collectors.demo.extraction_corpus import ensure_demo_corpus
    from collectors.extraction.article_benchmark import load_article_benchmark
    from collectors.extraction.corpus import load_corpus

    if spec == "demo":
        return ensure_demo_corpus(paths.corpora_dir / "demo")
    if spec == ARTICLE_BENCHMARK:
        return load_article_benchmark(
            shared_data_dir() / ARTICLE_BENCHMARK, cache_dir=paths.cache_dir
        )
    path = Path(spec).expanduser()
    if not path.is_dir():
        raise FileNotFoundError(
            f"--corpus {spec!r}: not 'demo', '{ARTICLE_BENCHMARK}' or a directory"
        )
    return load_corpus(path)
