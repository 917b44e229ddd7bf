"""`bench plan extraction --urls` and `bench run extraction --urls`: the live-URL benchmark.

Vendor engines read their keys from the environment (NIMBLE_API_KEY, FIRECRAWL_API_KEY,
EXA_API_KEY, TAVILY_API_KEY, PARALLEL_API_KEY) and honour BENCH_BASE_URL_<PROVIDER> (a proxy or
the loopback fakes). Local engines need nothing.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from bench.options import HomeOption, PlanJsonOption
from collectors.runs.shard import Shard
from warehouse.paths import BenchPaths

console = Console(stderr=True)
out = Console()

RenderOption = Annotated[
    str,
    typer.Option(
        help="Render path for URLs whose file row leaves it empty: auto | fast | full "
        "(engines without a render route record the path they used)."
    ),
]
DEFAULT_LIVE_SYSTEMS = "trafilatura,readability-lxml,html-text"


class LiveCliError(ValueError):
    """A bad --urls file or engine list: one line, exit 2."""


def _plan(urls: Path, systems: str | None, render: str, limit: int | None):
    from collectors.extraction.live.corpus import RENDERS, load_urls
    from collectors.extraction.live.runner import plan_live_extraction

    if render not in RENDERS:
        raise LiveCliError(f"--render must be one of {', '.join(RENDERS)}, got {render!r}")
    names = [n.strip() for n in (systems or DEFAULT_LIVE_SYSTEMS).split(",") if n.strip()]
    corpus = load_urls(urls, limit=limit)
    try:
        return plan_live_extraction(corpus, names, render=render)  # type: ignore[arg-type]
    except ValueError as exc:
        raise LiveCliError(f"--systems: {exc}") from None


def plan_cmd(
    urls: Path, systems: str | None, render: str, limit: int | None, as_json: bool
) -> None:
    plan = _plan(urls, systems, render, limit)
    if as_json:
        out.print_json(json.dumps(plan.as_json()))
        return
    info = plan.as_json()
    out.print(
        f"run {plan.run_id}: {info['urls']} URLs x {len(plan.systems)} engines = {info['units']} units, "
        f"{info['requests_to_vendors']} vendor requests, render {plan.render}, "
        f"verticals {', '.join(info['verticals'])}"
    )


def run_cmd(
    paths: BenchPaths,
    urls: Path,
    systems: str | None,
    render: str,
    limit: int | None,
    shard: Shard | None = None,
):
    """Collect; the caller prints the summary and refreshes the marts."""
    from bench import run_report
    from bench.qa_cli import _base_url_overrides
    from collectors.extraction.live.runner import run_live_extraction
    from transform import pipeline

    plan = _plan(urls, systems, render, limit).for_shard(shard)
    description = f"live extraction on {plan.corpus.dataset.name}"
    with run_report.unit_progress(console, description) as on_progress:
        return run_live_extraction(
            pipeline.event_log(paths),
            plan,
            base_urls=_base_url_overrides(os.environ),
            argv=sys.argv[1:],
            on_progress=on_progress,
        )


def run_demo(paths: BenchPaths) -> str:
    """The demo's live benchmark: the loopback site (benchmark pages + every failure path), the
    three reference engines through the local fetcher, no keys."""
    from bench import run_report
    from bench.settings import shared_data_dir
    from collectors.extraction.live.corpus import load_urls
    from collectors.extraction.live.loopback_site import LoopbackSite
    from collectors.extraction.live.runner import plan_live_extraction, run_live_extraction
    from transform import pipeline

    benchmark = _benchmark_pages(shared_data_dir() / "article-extraction-benchmark", paths)
    if benchmark is None:
        return (
            "live extraction: skipped (the article-extraction-benchmark pages the loopback site "
            "serves are not on this machine and could not be fetched; "
            "`bench run extraction --corpus article-extraction-benchmark` fetches them)"
        )
    with LoopbackSite(benchmark, articles=10, slow_s=0.5, port=DEMO_PORT) as site:
        corpus = load_urls(site.write_corpus(paths.cache_dir / "live-demo-urls.csv"))
        plan = plan_live_extraction(corpus, DEFAULT_LIVE_SYSTEMS.split(","), render="auto")
        with run_report.unit_progress(
            console, "live extraction on the loopback site"
        ) as on_progress:
            summary = run_live_extraction(
                pipeline.event_log(paths),
                plan,
                argv=sys.argv[1:],
                on_progress=on_progress,
            )
    return f"live extraction: {len(plan.systems)} local engines on {len(plan.items)} loopback URLs ({summary.status})"


def _benchmark_pages(shared: Path, paths: BenchPaths) -> Path | None:
    """The pinned benchmark pages: the shared copy, else the verified cache (fetched on first
    use); None when neither is here and the fetch fails (offline, no shared data)."""
    import httpx

    from collectors.extraction.article_benchmark import cached_copy_dir, load_article_benchmark
    from collectors.extraction.corpus import CorpusError

    if shared.exists():
        return shared
    try:
        load_article_benchmark(None, cache_dir=paths.cache_dir)  # fetched and sha256-verified
    except (httpx.HTTPError, OSError, CorpusError):
        return None
    return cached_copy_dir(paths.cache_dir)


DEMO_PORT = 47180  # a fixed port keeps the demo's URL file (and so its run id) stable across demos


def register(plan_app: typer.Typer) -> None:
    @plan_app.command("extraction")
    def plan_extraction_cmd(
        urls: Annotated[Path, typer.Option(help="A url,vertical[,render] CSV or JSONL.")],
        engines: Annotated[
            str | None,
            typer.Option(
                "--systems",
                "--engines",
                help=f"Comma-separated systems under test (default {DEFAULT_LIVE_SYSTEMS}); local "
                "engines and nimble_extract, firecrawl_scrape, exa_contents, tavily_extract_basic, "
                "tavily_extract_advanced, parallel_extract. Alias: --engines.",
            ),
        ] = None,
        render: RenderOption = "auto",
        limit: Annotated[int | None, typer.Option(min=1, help="Only the first N URLs.")] = None,
        as_json: PlanJsonOption = False,
        home: HomeOption = None,
    ) -> None:
        """Plan a live-URL extraction run: its id, engines, units and vendor requests; nothing is fetched."""
        plan_cmd(urls, engines, render, limit, as_json)
