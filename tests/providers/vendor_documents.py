"""Responses shaped like each vendor's documented search response (providers.md §1 fields, plus
the neighbouring fields the docs show), with the awkward cases a normaliser must survive: a
result missing its text, a non-object entry, inline markup, unicode."""

from __future__ import annotations

NIMBLE = {
    "results": [
        {
            "title": "Paris - Wikipedia",
            "url": "https://en.wikipedia.org/wiki/Paris",
            "description": "Paris is the capital and most populous city of France.",
            "extra_snippets": ["Population 2.1 million.", ""],
            "content": "Paris is the capital and most populous city of France.",
        },
        {
            "title": "France",
            "url": "https://en.wikipedia.org/wiki/France",
            "description": "",
            "content": "France is a country in Western Europe.",
        },
        "not-an-object",
    ],
    "answer": None,
    "answer_citations": [],
    "request_id": "req-1",
}

EXA = {
    "requestId": "b5947044c4b78efa9552a7c89b306d95",
    "resolvedSearchType": "neural",
    "searchType": "auto",
    "results": [
        {
            "id": "https://www.nobelprize.org/prizes/physics/1921/einstein/",
            "title": "Albert Einstein – Facts",
            "url": "https://www.nobelprize.org/prizes/physics/1921/einstein/",
            "publishedDate": "2021-01-01T00:00:00.000Z",
            "author": None,
            "score": 0.38,
            "summary": "Einstein received the 1921 Nobel Prize in Physics.",
        },
        {
            "id": "https://example.com/no-summary",
            "title": "No summary here",
            "url": "https://example.com/no-summary",
        },
    ],
    "costDollars": {"total": 0.007},
}

PARALLEL = {
    "search_id": "search_e749586f-00f3-4c39-b5e4-a7e9a5bd7c2b",
    "results": [
        {
            "url": "https://www.un.org/en/about-us/history-of-the-un",
            "title": "History of the United Nations",
            "publish_date": "2023-05-01",
            "excerpts": ["The UN was founded in 1945.", "Its charter was signed in San Francisco."],
        },
        {"url": "https://example.org/empty", "title": "Empty", "excerpts": []},
    ],
    "warnings": None,
    "usage": [{"name": "sku_search", "count": 1}],
}

TAVILY = {
    "query": "Who wrote Hamlet?",
    "follow_up_questions": None,
    "answer": None,
    "images": [],
    "results": [
        {
            "title": "Hamlet - Wikipedia",
            "url": "https://en.wikipedia.org/wiki/Hamlet",
            "content": "Hamlet is a tragedy written by William Shakespeare.",
            "score": 0.81,
            "raw_content": None,
        }
    ],
    "response_time": 1.09,
    "request_id": "123e4567-e89b-12d3-a456-426614174111",
}

BRAVE = {
    "type": "search",
    "query": {"original": "tallest building in the world", "more_results_available": True},
    "web": {
        "type": "search",
        "family_friendly": True,
        "results": [
            {
                "title": "Burj <strong>Khalifa</strong>",
                "url": "https://en.wikipedia.org/wiki/Burj_Khalifa",
                "is_source_local": False,
                "description": "The <strong>Burj Khalifa</strong> is 828&nbsp;m tall &amp; opened in 2010.",
                "extra_snippets": ["It has 163 floors.", "Designed by SOM."],
            },
            {
                "title": "Skyscrapers",
                "url": "https://example.org/skyscrapers",
                "description": "A list of skyscrapers.",
            },
        ],
    },
}

FIRECRAWL = {
    "success": True,
    "data": {
        "web": [
            {
                "url": "https://www.firecrawl.dev/",
                "title": "Firecrawl",
                "description": "Turn websites into LLM-ready data.",
                "position": 1,
            },
            {
                "url": "https://docs.firecrawl.dev/",
                "title": "Docs",
                "description": "Firecrawl documentation.",
                "position": 2,
            },
        ]
    },
    "warning": None,
    "id": "search-7d1c",
    "creditsUsed": 2,
}
