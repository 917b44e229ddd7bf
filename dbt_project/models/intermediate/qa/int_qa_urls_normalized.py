"""Normalised gold and predicted URLs of every QA question, versioned (methodology 2.4).

Normaliser v1 (ref-harness rules; `var('url_normalizer_version')` must be "1"):
  * strip surrounding whitespace; parse with urllib.parse.urlsplit; only http / https URLs with
    a host count (anything else normalises to "", i.e. unparseable);
  * scheme and host lower-cased; IDN host -> punycode (idna, UTS #46 mapping; the stdlib IDNA
    2003 codec as a fallback; a host that neither accepts -> unparseable); user info dropped;
    default ports (http 80, https 443) removed, other ports kept, a bad port -> unparseable;
  * a leading "www." stripped from the host;
  * path: percent-encoding normalised (escapes of unreserved characters decoded, other escapes
    upper-cased, a stray "%" and every character outside RFC 3986 encoded as UTF-8 escapes),
    dot segments removed (RFC 3986 5.2.4), every trailing "/" stripped;
  * query and fragment dropped (so ?id= / ?title= pages collapse: a documented pitfall).
  Not folded on purpose: http vs https, mobile hosts (m., en.m.wikipedia.org), Wikipedia variants.

Gold: every string of question_registered.gold_urls_raw is split on whitespace (entries with
two URLs joined by a newline, or with text labels); only tokens that parse as http(s) URLs with
a host are kept, normalised and de-duplicated (first occurrence wins).
Predicted: the chunk URLs of every chunks_normalized event in rank order; de-duplicated on the
normalised URL keeping the first occurrence, ranks compacted. Unparseable predicted URLs keep
their place as a non-relevant position (each one, not collapsed): the provider did return
something there.

Grain: one row per URL token (gold: per (run_id, item_id, source_position); predicted: per
(chunks_event_id, source_position)); `position` is the compacted 1-based rank of kept rows and
NULL for dropped ones. Raw URLs are kept beside the normalised ones. Tested in tests/dbt_qa.
"""

import re
from urllib.parse import urlsplit

import pyarrow as pa
from bench_vars import scoring_value

KNOWN_VERSIONS = ("1",)
DEFAULT_PORTS = {"http": 80, "https": 443}
UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# characters allowed unescaped in a path (RFC 3986 pchar plus "/")
PATH_SAFE = UNRESERVED | frozenset("!$&'()*+,;=:@/")
ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")

SCHEMA = pa.schema(
    [
        ("url_source", pa.string()),
        ("run_id", pa.string()),
        ("item_id", pa.string()),
        ("lane", pa.string()),
        ("chunks_event_id", pa.string()),
        ("url_normalizer_version", pa.string()),
        ("source_position", pa.int64()),
        ("raw_url", pa.string()),
        ("normalized_url", pa.string()),
        ("is_kept", pa.bool_()),
        ("position", pa.int64()),
    ]
)


def idna_host(host):
    try:
        import idna

        return idna.encode(host, uts46=True).decode("ascii")
    except Exception:
        try:
            return host.encode("idna").decode("ascii").lower()
        except Exception:
            return None


def normalize_escapes(path):
    out = []
    i = 0
    while i < len(path):
        ch = path[i]
        match = ESCAPE.match(path, i) if ch == "%" else None
        if match:
            decoded = chr(int(match.group(1), 16))
            out.append(decoded if decoded in UNRESERVED else "%" + match.group(1).upper())
            i += 3
            continue
        if ch in PATH_SAFE:
            out.append(ch)
        else:
            out.extend(f"%{byte:02X}" for byte in ch.encode("utf-8"))
        i += 1
    return "".join(out)


def remove_dot_segments(path):
    output = []
    for segment in path.split("/"):
        if segment == "..":
            if len(output) > 1:
                output.pop()
        elif segment != ".":
            output.append(segment)
    result = "/".join(output)
    if path.endswith(("/.", "/..")):
        result += "/"
    return result


def parse_http(url):
    """(scheme, host, port, path) of an http(s) URL with a host, else None."""
    try:
        parts = urlsplit(url.strip())
        scheme = parts.scheme.lower()
        host = parts.hostname  # lower-cased, user info and port removed
        port = parts.port
    except ValueError:
        return None
    if scheme not in DEFAULT_PORTS or not host:
        return None
    return scheme, host, port, parts.path


def normalize_url(url):
    parsed = parse_http(url or "")
    if parsed is None:
        return ""
    scheme, host, port, path = parsed
    if not host.isascii():
        host = idna_host(host)
        if not host:
            return ""
    host = host.rstrip(".")
    if host.startswith("www."):
        host = host[4:]
    if not host:
        return ""
    netloc = host if port in (None, DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    path = remove_dot_segments(normalize_escapes(path)).rstrip("/")
    return f"{scheme}://{netloc}{path}"


def gold_tokens(raw_urls):
    return [token for raw in raw_urls or [] for token in raw.split()]


def model(dbt, session):
    dbt.config(materialized="table")
    version = str(scoring_value("url_normalizer_version", dbt.config.get("url_normalizer_version")))
    if version not in KNOWN_VERSIONS:
        raise ValueError(
            f"var url_normalizer_version {version!r} is unknown; known: {', '.join(KNOWN_VERSIONS)}"
        )
    rows = []
    questions = (
        dbt.ref("stg_events__question_registered")
        .project("run_id, item_id, gold_urls_raw")
        .order("run_id, item_id")
        .to_arrow_table()
        .to_pylist()
    )
    for question in questions:
        seen = set()
        position = 0
        for index, token in enumerate(gold_tokens(question["gold_urls_raw"]), start=1):
            if parse_http(token) is None:
                continue  # a text label, not a URL
            normalized = normalize_url(token)
            kept = bool(normalized) and normalized not in seen
            if kept:
                seen.add(normalized)
                position += 1
            rows.append(
                {
                    "url_source": "gold",
                    "run_id": question["run_id"],
                    "item_id": question["item_id"],
                    "lane": None,
                    "chunks_event_id": None,
                    "url_normalizer_version": version,
                    "source_position": index,
                    "raw_url": token,
                    "normalized_url": normalized,
                    "is_kept": kept,
                    "position": position if kept else None,
                }
            )
    chunks = (
        dbt.ref("stg_events__chunks_normalized")
        .filter("chunk_rank is not null")
        .project("chunks_event_id, run_id, item_id, lane, chunk_rank, chunk_url")
        .order("chunks_event_id, chunk_rank")
        .to_arrow_table()
        .to_pylist()
    )
    seen, position, current = set(), 0, None
    for chunk in chunks:
        if chunk["chunks_event_id"] != current:
            seen, position, current = set(), 0, chunk["chunks_event_id"]
        normalized = normalize_url(chunk["chunk_url"])
        kept = normalized == "" or normalized not in seen
        if kept:
            seen.add(normalized)
            position += 1
        rows.append(
            {
                "url_source": "predicted",
                "run_id": chunk["run_id"],
                "item_id": chunk["item_id"],
                "lane": chunk["lane"],
                "chunks_event_id": chunk["chunks_event_id"],
                "url_normalizer_version": version,
                "source_position": chunk["chunk_rank"],
                "raw_url": chunk["chunk_url"],
                "normalized_url": normalized,
                "is_kept": kept,
                "position": position if kept else None,
            }
        )
    return pa.Table.from_pylist(rows, schema=SCHEMA)
