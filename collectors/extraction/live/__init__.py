"""The live-URL extraction benchmark (methodology §4.1): a URL corpus, a local fetcher feeding the
local engines, vendor extraction engines (one module each), and the run on the shared kernel.

- `corpus`   `url,vertical[,render]` CSV or JSONL -> a validated, hashed URL corpus
- `fetcher`  httpx, redirects followed and recorded -> `page_fetched`
- `vendors/` Nimble extract, Firecrawl scrape, Exa contents, Tavily extract, Parallel extract
- `engines`  the registry: local engines over the fetcher + the vendor engines
- `runner`   plan -> remaining (url, engine) units -> events, on `collectors.runs.kernel`
"""
