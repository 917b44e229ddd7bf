"""Shared presentation helpers. No SQL here (that is `app.data`), no business logic.

Provider content and anything read from the snapshot is shown inert: `st.text`, `st.code`,
`st.json` or dataframes. Streamlit renders Markdown in titles, captions, alerts and labels, so
data that must appear there goes through `md_escape` first.
"""

from __future__ import annotations

import math
import numbers
import re
from typing import Any

import streamlit as st

from app import data

# Every ASCII punctuation character may be backslash-escaped in CommonMark; escaping all of
# them also disarms Streamlit's extensions (`:color[..]`, `:material/..:`, `$latex$`).
_MD_SPECIAL = re.compile(r"([!-/:-@\[-`{-~])")


def md_escape(value: Any) -> str:
    """Text safe to pass to a Markdown-rendering element: shown literally, nothing rendered."""
    text = str(value).replace("\r", " ").replace("\n", " ")
    return _MD_SPECIAL.sub(r"\\\1", text)


def short(value: Any, n: int = 12) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= n else text[:n] + "…"


def is_number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    return not math.isnan(float(value))


def fmt(value: Any, digits: int = 3) -> str:
    return f"{float(value):.{digits}f}" if is_number(value) else "–"


def fmt_pm(mean: Any, std: Any, digits: int = 3) -> str:
    if not is_number(mean):
        return "–"
    if not is_number(std):
        return fmt(mean, digits)
    return f"{float(mean):.{digits}f} ± {float(std):.{digits}f}"


def require_snapshot() -> data.SnapshotStatus:
    """Show the empty state and stop the page unless the serving snapshot has data."""
    status = data.snapshot_status()
    if status.ready:
        return status
    if status.state == "unreadable":
        st.error(
            "The serving snapshot exists but could not be read. Rebuild it with `bench demo` "
            "(or `bench publish` after a run), then reload this page."
        )
        st.code(status.detail, language=None, wrap_lines=True)
    else:
        st.info(
            "No benchmark results to show yet. Run `bench demo` to build and publish a "
            "snapshot (or `bench publish` after a run), then reload this page."
        )
    st.text(f"Serving snapshot: {status.path} ({status.detail})")
    st.stop()
    raise AssertionError("unreachable: st.stop() ends the script run")


def stop_with(message: str) -> None:
    """A static (never data-built) notice, then end the page."""
    st.info(message)
    st.stop()
