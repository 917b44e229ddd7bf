"""A deterministic demo corpus built offline from text that ships with Python.

Articles are topics of the Python language reference as bundled for `help()` in
`pydoc_data.topics` (30 topics of 1-10 kB, by sorted name). Each is wrapped in the clutter
real pages have (cookie banner, navigation, breadcrumbs, byline, share bar, sidebar, ad slot,
comments, footer, inline <script> and <style>), so extractors have something to strip. The
ground truth is the article body as plain text, known by construction: headings, paragraphs,
list items and code blocks, without the page title, byline or anything around the article.

The first article carries one extra paragraph quoting `<script>document.title='pwned'</script>`:
HTML-escaped in the page, literal in the ground truth, for the app's XSS test.

Same Python version in -> byte-identical files out (gzip mtime 0, sorted JSON). The text of
`pydoc_data` changes between Python releases, so the dataset sha256 is per Python version.
"""

from __future__ import annotations

import gzip
import hashlib
import html
import json
import os
import platform
import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path

from collectors.extraction.corpus import (
    GROUND_TRUTH_FILE,
    HTML_DIR,
    HTML_SUFFIX,
    Corpus,
    load_corpus,
)

DEMO_CORPUS_VERSION = "1"  # bump when the builder's output changes for the same Python
DEMO_NAME = "demo-pydoc-topics"
TOPIC_COUNT = 30
MIN_TOPIC_CHARS, MAX_TOPIC_CHARS = 1_000, 10_000
SITE = "https://pyref-daily.example"  # reserved example domain: never resolves to anyone
XSS_PAYLOAD = "<script>document.title='pwned'</script>"
XSS_PARAGRAPH = (
    f"Editor's note: this page quotes markup such as {XSS_PAYLOAD} as plain text; "
    "a reader should see it written out, and no browser should ever run it."
)


def demo_uri() -> str:
    return f"python-stdlib:pydoc_data.topics?python={platform.python_version()}"


# --- the article: topic text -> blocks -----------------------------------------------------


@dataclass(frozen=True)
class Block:
    kind: str  # "h2" | "p" | "ul" | "pre"
    lines: tuple[str, ...]  # one entry for h2/p; one per item for ul; code lines for pre

    def html(self) -> str:
        if self.kind == "ul":
            items = "".join(f"<li>{html.escape(line)}</li>" for line in self.lines)
            return f"<ul>{items}</ul>"
        if self.kind == "pre":
            code = html.escape("\n".join(self.lines))
            return f"<pre><code>{code}</code></pre>"
        return f"<{self.kind}>{html.escape(self.lines[0])}</{self.kind}>"

    def text(self) -> str:
        return "\n".join(self.lines)


def _is_underline(line: str) -> bool:
    stripped = line.strip()
    return len(stripped) >= 3 and len(set(stripped)) == 1 and stripped[0] in "*=-~^"


def _block(chunk: list[str]) -> Block:
    if all(line[:1].isspace() for line in chunk):
        return Block("pre", tuple(textwrap.dedent("\n".join(chunk)).splitlines()))
    if len(chunk) == 2 and _is_underline(chunk[1]):
        return Block("h2", (" ".join(chunk[0].split()),))
    if chunk[0].startswith(("* ", "- ")):
        items: list[str] = []
        for line in chunk:
            if line.startswith(("* ", "- ")):
                items.append(" ".join(line[2:].split()))
            else:
                items[-1] += " " + " ".join(line.split())
        return Block("ul", tuple(items))
    # Whitespace collapsed as a browser shows it (the source double-spaces after periods).
    return Block("p", (" ".join(" ".join(chunk).split()),))


def parse_topic(text: str) -> tuple[str, list[Block]]:
    """(title, body blocks) of one pydoc topic: blank-line separated chunks, title underlined."""
    chunks: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.strip():
            chunks[-1].append(line.rstrip())
        elif chunks[-1]:
            chunks.append([])
    chunks = [chunk for chunk in chunks if chunk]
    title_chunk, body = chunks[0], chunks[1:]
    title = title_chunk[0].strip()
    underlined = len(title_chunk) > 1 and _is_underline(title_chunk[1])
    rest = title_chunk[2:] if underlined else title_chunk[1:]
    if rest:
        body.insert(0, rest)
    return title, [_block(chunk) for chunk in body]


# --- the page around it --------------------------------------------------------------------

_STYLE = (
    "body{font-family:Georgia,serif;margin:0}.site-header{background:#123;color:#fff}"
    ".cookie-banner{position:fixed;bottom:0;width:100%;background:#eee}"
    ".sidebar{float:right;width:30%}.comments{clear:both}footer{font-size:small}"
)
_HEAD_SCRIPT = (
    "window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments);}"
    "gtag('js',new Date());gtag('config','G-DEMO000000');"
)
_TAIL_SCRIPT = (
    "document.querySelectorAll('.cookie-banner button').forEach(function(b){"
    "b.addEventListener('click',function(){document.cookie='consent=1;path=/';"
    "b.closest('.cookie-banner').remove();});});"
)
_COMMENTS = (
    ("Maria K.", "Great write-up, I finally understand how this works after years of guessing."),
    ("devops_dan", "Bookmarked this for my team, we keep running into exactly this problem."),
    ("Priya", "Could you do a follow-up article with more real-world examples please?"),
    ("Tom H.", "The second example confused me at first but reading it twice helped a lot."),
    ("anon1987", "Is this still accurate for the latest release or has anything changed?"),
    ("Lena", "Thanks for keeping these reference pages free and easy to read on mobile."),
)
_POPULAR = (
    "Ten habits of highly effective Python developers",
    "Why your unit tests are slower than they need to be",
    "A gentle introduction to packaging and virtual environments",
    "Reading tracebacks without fear: a practical guide",
)


def _link(href: str, label: str) -> str:
    return f'<a href="{html.escape(href)}">{html.escape(label)}</a>'


def render_page(
    *, title: str, url: str, blocks: list[Block], related: list[tuple[str, str]], index: int
) -> str:
    day = f"2024-03-{index % 28 + 1:02d}"
    comments = [_COMMENTS[(index + step) % len(_COMMENTS)] for step in (0, 2, 4)]
    nav = "".join(
        f"<li>{_link(SITE + path, label)}</li>"
        for path, label in (
            ("/", "Home"),
            ("/reference/", "Language reference"),
            ("/tutorials/", "Tutorials"),
            ("/newsletter/", "Newsletter"),
            ("/about/", "About us"),
        )
    )
    related_html = "".join(f"<li>{_link(href, label)}</li>" for href, label in related)
    popular = "".join(
        f"<li>{_link(f'{SITE}/popular/{n}', _POPULAR[(index + n) % len(_POPULAR)])}</li>"
        for n in range(3)
    )
    comment_html = "".join(
        f'<li class="comment"><p class="author">{html.escape(author)} wrote:</p>'
        f'<p>{html.escape(body)}</p><a href="#reply">Reply</a></li>'
        for author, body in comments
    )
    body = "\n".join(block.html() for block in blocks)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{html.escape(title)} | PyRef Daily</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="canonical" href="{html.escape(url)}">
<style>{_STYLE}</style>
<script>{_HEAD_SCRIPT}</script>
</head>
<body>
<div class="cookie-banner" id="cookie-consent"><p>We use cookies to improve your experience and to measure our audience. By continuing to browse this site you agree to our use of cookies.</p><button>Accept all</button> <button>Manage preferences</button></div>
<header class="site-header"><a class="logo" href="{SITE}/">PyRef Daily</a>
<nav class="main-nav"><ul>{nav}</ul></nav>
<form class="search" action="{SITE}/search"><input name="q" placeholder="Search the reference"><button>Search</button></form>
</header>
<nav class="breadcrumbs">{_link(SITE + "/", "Home")} &rsaquo; {_link(SITE + "/reference/", "Language reference")} &rsaquo; {html.escape(title)}</nav>
<main>
<article>
<header><h1>{html.escape(title)}</h1>
<p class="byline">By the PyRef Daily reference desk &middot; Updated <time datetime="{day}">{day}</time> &middot; 5 min read</p></header>
<div class="article-body">
{body}
</div>
<div class="share">Share this article: {_link("#twitter", "Twitter")} {_link("#facebook", "Facebook")} {_link("#linkedin", "LinkedIn")} {_link("#email", "Email")}</div>
</article>
<aside class="sidebar">
<h2>Related topics</h2><ul>{related_html}</ul>
<h2>Popular this week</h2><ul>{popular}</ul>
<div class="ad">Advertisement: Learn Python in 30 days with our interactive online course. Start your free trial today!</div>
</aside>
<section class="comments"><h2>{len(comments)} comments</h2><ul>{comment_html}</ul>
<form class="comment-form"><textarea placeholder="Join the discussion"></textarea><button>Post comment</button></form></section>
</main>
<footer><p>{_link(SITE + "/privacy", "Privacy policy")} | {_link(SITE + "/terms", "Terms of use")} | {_link(SITE + "/contact", "Contact")}</p>
<p>Subscribe to our weekly newsletter and never miss a new article about the Python language.</p>
<p>&copy; 2024 PyRef Daily. All rights reserved.</p></footer>
<script>{_TAIL_SCRIPT}</script>
</body>
</html>
"""


# --- the corpus ------------------------------------------------------------------------------


def item_id_for(topic: str) -> str:
    return hashlib.sha256(topic.encode("utf-8")).hexdigest()


def select_topics(topics: dict[str, str]) -> list[str]:
    eligible = [t for t in topics if MIN_TOPIC_CHARS <= len(topics[t]) <= MAX_TOPIC_CHARS]
    return sorted(eligible)[:TOPIC_COUNT]


def build_demo_pages() -> dict[str, tuple[str, str, str]]:
    """item id -> (url, ground truth text, page HTML)."""
    from pydoc_data.topics import topics

    chosen = select_topics(topics)
    parsed = {name: parse_topic(topics[name]) for name in chosen}
    urls = {name: f"{SITE}/reference/{name}" for name in chosen}
    pages: dict[str, tuple[str, str, str]] = {}
    for index, name in enumerate(chosen):
        title, blocks = parsed[name]
        if index == 0:
            blocks = [blocks[0], Block("p", (XSS_PARAGRAPH,)), *blocks[1:]]
        neighbours = [chosen[(index + step) % len(chosen)] for step in range(1, 6)]
        related = [(urls[other], parsed[other][0]) for other in neighbours]
        page = render_page(title=title, url=urls[name], blocks=blocks, related=related, index=index)
        truth = "\n\n".join(block.text() for block in blocks)
        pages[item_id_for(name)] = (urls[name], truth, page)
    return pages


def _source_md(count: int) -> str:
    return f"""# Demo extraction corpus (built offline from the Python standard library)

## What this is
{count} synthetic article pages for trying the extraction benchmark without network access.
Built by `collectors/demo/extraction_corpus.py` (builder version {DEMO_CORPUS_VERSION}) from
`pydoc_data.topics` of Python {platform.python_version()}: the language-reference topics that
`help()` shows, {TOPIC_COUNT} topics of {MIN_TOPIC_CHARS:,}-{MAX_TOPIC_CHARS:,} characters in
sorted name order.

## How the pages are made
Each topic becomes the body of an article page (headings, paragraphs, lists, code blocks)
inside invented site clutter: cookie banner, navigation, search form, breadcrumbs, byline,
share bar, sidebar with related topics, popular posts and an ad, a comments section, a
footer, inline `<script>` and `<style>`. Links point at the reserved `pyref-daily.example`
domain.

The first article has one added paragraph quoting the markup
`{XSS_PAYLOAD}`: HTML-escaped in the page, literal in the ground truth. It exists so
that user interfaces can be tested for showing such text safely.

## Ground truth
`articleBody` = the article body exactly as constructed (blocks joined by blank lines),
without the page title, byline or anything outside the article. Item id = sha256 of the
topic name (64 hex characters). `url` is the invented page address.

## Layout
Same as the article-extraction-benchmark: `ground-truth.json` (id -> articleBody, url) and
`html/<id>.html.gz` (gzip, UTF-8, mtime 0). Rebuilding with the same Python version gives
byte-identical files.

## License
Article text: the Python documentation, Copyright Python Software Foundation, distributed with
CPython under the PSF License Agreement (code examples in the documentation are also under
Zero-Clause BSD). The page clutter around it was written for this demo.
"""


def build_demo_corpus(dest: Path) -> Path:
    """Write the corpus into `dest` (which must not exist yet); returns `dest`."""
    dest = Path(dest)
    if dest.exists():
        raise FileExistsError(f"{dest}: already exists; refusing to overwrite it")
    pages = build_demo_pages()
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.parent / f".{dest.name}.partial-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    (partial / HTML_DIR).mkdir(parents=True)
    try:
        truth = {
            item_id: {"articleBody": text, "url": url} for item_id, (url, text, _) in pages.items()
        }
        document = json.dumps(truth, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
        (partial / GROUND_TRUTH_FILE).write_text(document, encoding="utf-8")
        for item_id, (_, _, page) in sorted(pages.items()):
            compressed = gzip.compress(page.encode("utf-8"), compresslevel=9, mtime=0)
            (partial / HTML_DIR / f"{item_id}{HTML_SUFFIX}").write_bytes(compressed)
        (partial / "SOURCE.md").write_text(_source_md(len(pages)), encoding="utf-8")
        partial.rename(dest)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return dest


def load_demo_corpus(path: Path) -> Corpus:
    return load_corpus(path, name=DEMO_NAME, uri=demo_uri(), revision=DEMO_CORPUS_VERSION)


def ensure_demo_corpus(path: Path) -> Corpus:
    """Build the demo corpus at `path` unless it is already there, then load it."""
    if not (Path(path) / GROUND_TRUTH_FILE).exists():
        build_demo_corpus(path)
    return load_demo_corpus(path)
