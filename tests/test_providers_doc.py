"""docs/providers.md §2/§4 describe the wire shapes the vendor modules send and read, taken
from the modules' own constants, so a shape fixed in code cannot stay wrong in the reference."""

from __future__ import annotations

from pathlib import Path

from collectors.vendors.firecrawl import search as firecrawl
from collectors.vendors.gemini import research as gemini
from collectors.vendors.nimble import research as nimble
from collectors.vendors.perplexity import research as perplexity
from collectors.vendors.tavily import research as tavily

DOC = (Path(__file__).resolve().parents[1] / "docs" / "providers.md").read_text(encoding="utf-8")


def section(number: str) -> str:
    start = DOC.index(f"\n## {number}. ")
    end = DOC.find("\n## ", start + 1)
    return DOC[start : end if end != -1 else None]


def test_research_section_gives_the_shapes_the_modules_use():
    research = section("2")
    assert f"{gemini.BASE_URL}{gemini.INTERACTIONS_PATH}" in research
    assert "steps[]" in research and "model_output" in research
    assert "incomplete" in research and "budget_exceeded" in research
    assert f"{perplexity.BASE_URL}{perplexity.RESPONSES_PATH}" in research
    assert f'preset: "{perplexity.PRESET}"' in research
    assert f"`{nimble.AGENT_ID}`" in research and nimble.RUN_PATH in research
    assert "`numResults: 10`" in research and "`costDollars.total`" in research
    assert all(f"**{status}**" in DOC for status, _ in tavily.ABORT_STATUSES)


def test_research_section_no_longer_gives_the_retired_shapes():
    research = section("2")
    for stale in (
        "v1beta/interactions",
        "result in `outputs[]`",
        "api.perplexity.ai/chat/completions`, `Authorization",
        "`num_results: 10`",
        "/v2/agents/{agent_id}/runs",
    ):
        assert stale not in research, stale


def test_llm_and_search_sections_match_the_clients():
    assert "`max_completion_tokens`" in section("4")
    body = firecrawl.build_request("http://h", "k", "q", 10).json_body
    assert body["sources"] == [{"type": "web"}] and '`sources: [{"type": "web"}]`' in section("1")
