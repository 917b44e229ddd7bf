"""Shared presentation helpers. No SQL here (that is `app.data`), no business logic.

Provider content and anything read from the snapshot is shown inert: `st.text`, `st.code`,
`st.json` or dataframes. Streamlit renders Markdown in titles, captions, alerts and labels, so
data that must appear there goes through `md_escape` first.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from app import data
from warehouse.metric_scales import METRIC_SCALES, MISSING

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


def text_or_missing(value: Any) -> str:
    """A value as plain text; None, NaN and empty text as MISSING (never "None" or "nan")."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return MISSING
    if value is pd.NaT:
        return MISSING
    text = str(value)
    return text if text.strip() else MISSING


def fmt(value: Any, digits: int = 3) -> str:
    return f"{float(value):.{digits}f}" if is_number(value) else MISSING


def fmt_pm(mean: Any, std: Any, digits: int = 3) -> str:
    if not is_number(mean):
        return MISSING
    if not is_number(std):
        return fmt(mean, digits)
    return f"{float(mean):.{digits}f} ± {float(std):.{digits}f}"


# --- one scale per metric (declared in warehouse/metric_scales.py, shared with the CLI) --------


def display_value(metric: str, value: Any) -> float | None:
    """A stored 0-1 value on the metric's display scale; None when undefined."""
    return METRIC_SCALES[metric].shown(value)


def display_series(metric: str, series: pd.Series) -> pd.Series:
    """A mart column on the metric's display scale (NaN stays NaN, shown as MISSING)."""
    return pd.to_numeric(series, errors="coerce").astype(float) * METRIC_SCALES[metric].factor


def metric_text(metric: str, value: Any, digits: int | None = None) -> str:
    scale = METRIC_SCALES[metric]
    shown = display_value(metric, value)
    return MISSING if shown is None else f"{shown:.{scale.digits if digits is None else digits}f}"


def metric_ci_text(metric: str, low: Any, high: Any) -> str:
    if not (is_number(low) and is_number(high)):
        return MISSING
    return f"{metric_text(metric, low)}–{metric_text(metric, high)}"


def metric_column(metric: str, label: str | None = None, help: str | None = None) -> Any:
    """The dataframe column of a metric already put on its display scale."""
    scale = METRIC_SCALES[metric]
    return st.column_config.NumberColumn(
        label or scale.label, format=f"%.{scale.digits}f", help=help or scale.help or None
    )


def _cell_text(value: Any) -> str:
    """A dict or list cell as plain text (never raw JSON)."""
    if isinstance(value, dict):
        return "; ".join(f"{k}: {text_or_missing(v)}" for k, v in value.items()) or MISSING
    if isinstance(value, list | tuple | np.ndarray):
        return ", ".join(text_or_missing(v) for v in value) or MISSING
    return text_or_missing(value)


# Words a snake_case column name is spelled with when a page gives it no label of its own.
_HEADER_WORDS = {
    "url": "URL",
    "urls": "URLs",
    "id": "id",
    "ids": "ids",
    "llm": "LLM",
    "sha256": "SHA-256",
    "ms": "(ms)",
    "s": "(s)",
    "usd": "($)",
    "5xx": "5xx",
    "f1": "F1",
    "n": "n",
}


def human_label(column: Any) -> str:
    """A header for a column no page labelled: "target_status_code" -> "Target status code"."""
    text = str(column)
    if "_" not in text and not text.islower():
        return text
    words = [_HEADER_WORDS.get(word, word) for word in text.split("_") if word]
    if not words:
        return text
    first = words[0]
    words[0] = first[:1].upper() + first[1:] if first not in _HEADER_WORDS.values() else first
    return " ".join(words)


def dataframe(frame: pd.DataFrame, *, column_config: dict | None = None, **kwargs: Any) -> Any:
    """`st.dataframe` as every table of the app shows one: an undefined cell (NULL, NaN) reads
    MISSING, not Streamlit's grey "None"; a dict/list cell is plain text, not raw JSON; a column
    the page did not label gets a human header instead of its snake_case name."""
    config = dict(column_config or {})
    shown = frame
    nested = [
        column
        for column in frame.columns
        if frame[column].map(lambda v: isinstance(v, dict | list | tuple | np.ndarray)).any()
    ]
    if nested:
        shown = frame.copy()
        for column in nested:
            shown[column] = shown[column].map(_cell_text)
    for column in shown.columns:
        if column not in config:
            config[column] = human_label(column)
    kwargs.setdefault("placeholder", MISSING)
    return st.dataframe(shown, column_config=config, **kwargs)


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


# One name for the system under test in every table of the app, whatever the family calls it
# in its marts (system, lane): only the help text says what it is.
QA_SYSTEM_HELP = (
    "The system under test: a QA lane (a search API with our synthesiser, closed book, or a "
    "vendor's own answer product)."
)


# Headers of the upstream SimpleQA answer aggregates (qa_leaderboard columns), wherever shown.
QA_ANSWER_METRIC_LABELS = {
    "strict_accuracy": "Strict accuracy",
    "is_correct": "Correct",
    "is_incorrect": "Incorrect",
    "is_not_attempted": "Not attempted",
    "accuracy_given_attempted": "Acc. given attempted",
    "f1": "F1",
}


def system_column(help: str = "The system under test.") -> Any:
    return st.column_config.TextColumn("System", help=help)


def stop_with(message: str) -> None:
    """A static (never data-built) notice, then end the page."""
    st.info(message)
    st.stop()


def _require_marts(status: Any, marts: str, results: str, how_to: str) -> Any:
    """One family's empty state (its marts unreadable, of another contract version, or empty),
    then end the page; or the family's status when its marts are there and hold rows."""
    if status.ready:
        return status
    if status.state == "unreadable":
        st.error("The serving snapshot exists but could not be read. " + how_to)
        st.code(status.detail, language=None, wrap_lines=True)
    elif status.state == "mismatch":
        st.error(
            f"The snapshot's {marts} marts do not have the columns of docs/warehouse-contract.md "
            "(rebuild with a matching version of the dbt project). " + how_to
        )
        st.code("\n".join(status.missing), language=None)
    else:
        st.info(f"No {results} results to show yet. " + how_to)
    st.text(f"Serving snapshot: {status.path} ({status.detail})")
    st.stop()
    raise AssertionError("unreachable: st.stop() ends the script run")


def event_json(event: Any) -> None:
    """One `dim_events` row as its log envelope, rendered inert (provider content inside)."""
    st.json(
        {
            "event_id": event["event_id"],
            "event_type": event["event_type"],
            "run_id": event["run_id"],
            "occurred_at": str(event["occurred_at"]),
            "segment_line": event["segment_line"],
            "producer": event["producer"],
            "payload": event["payload"],
            "content_sha256": event["content_sha256"],
            "prev_sha256": event["prev_sha256"],
        },
        expanded=1,
    )


# --- question answering pages ------------------------------------------------------------------

QA_HOW_TO = (
    "Create them with `bench run qa --questions demo` (offline demo questions and lanes) or "
    "`bench run simpleqa --limit 20`; each run ingests, builds the marts and publishes the "
    "snapshot. Then reload this page."
)


def require_qa_snapshot() -> data.QaStatus:
    """Show the QA empty state and stop the page unless the QA marts are there and hold rows."""
    return _require_marts(data.qa_status(), "QA", "question-answering", QA_HOW_TO)


def pick(
    label: str,
    options: list[str],
    key: str,
    param: str,
    fmt: Callable[[str], str] = str,
) -> str | None:
    """A selectbox that starts from the `?param=` of a deep link and writes its choice back."""
    if not options:
        return None
    if st.session_state.get(key) not in options:
        wanted = st.query_params.get(param)
        if key not in st.session_state and wanted is not None and wanted not in options:
            st.warning(f"The linked {param} is not in this snapshot; showing the first one.")
        st.session_state[key] = wanted if wanted in options else options[0]
    choice = st.selectbox(label, options, key=key, format_func=fmt)
    st.query_params[param] = choice
    return choice


def grader_banner(grader_id: str, official: Any) -> None:
    """The grader regime of everything below, stated before any number."""
    if bool(official):
        st.success(
            f"Grader regime: {md_escape(grader_id)} (official SimpleQA classifier template). "
            "Only rows graded by this grader are shown together."
        )
    else:
        st.warning(
            f"Grader regime: {md_escape(grader_id)} (NOT the official SimpleQA template: a "
            "project-written grader). Its accuracies are not comparable with upstream figures "
            "or with other grader regimes."
        )


def lower_first(noun: str) -> str:
    """A label's noun inside a sentence: "Page URL" -> "page URL", an acronym ("URL") kept."""
    first = noun.split(" ", 1)[0]
    return noun if first.isupper() else noun[0].lower() + noun[1:]


def date_text(value: Any) -> str:
    """A date as YYYY-MM-DD (DuckDB dates arrive as pandas timestamps), MISSING when missing."""
    if value is None or (not isinstance(value, str) and bool(pd.isna(value))):
        return MISSING
    if hasattr(value, "date") and callable(value.date):
        return value.date().isoformat()
    return str(value)


def pick_qa_run_and_grader(
    key_prefix: str, *, detailed_labels: bool = False
) -> tuple[str, str, bool]:
    """The run and grader-regime pickers every QA page starts with (deep-linkable through the
    `run` and `grader` query params); stops the page when there is nothing to pick.
    Returns (run_id, grader_id, official) and shows the regime banner."""
    runs = data.qa_runs()
    if runs.empty:
        stop_with("The snapshot has no QA leaderboard rows yet. " + QA_HOW_TO)
    run_labels = {
        row.run_id: f"{row.run_id} · {row.benchmark}"
        + (f" · {row.dataset_name or 'dataset ?'}" if detailed_labels else "")
        + (f" · series {row.series} run {row.run_index}" if isinstance(row.series, str) else "")
        + (f" · {row.n_lanes} lane(s)" if detailed_labels else "")
        for row in runs.itertuples()
    }
    run_col, grader_col = st.columns([3, 2])
    with run_col:
        run_id = pick("Run", list(run_labels), f"{key_prefix}_run", "run", lambda r: run_labels[r])
    graders = data.qa_graders(run_id)
    official = dict(zip(graders["grader_id"], graders["grader_official"], strict=True))
    with grader_col:
        grader_id = pick(
            "Grader regime",
            list(official),
            f"{key_prefix}_grader",
            "grader",
            lambda g: f"{g} ({'official' if official.get(g) else 'non-official'})",
        )
    if grader_id is None:
        stop_with("This run has no graded leaderboard rows.")
    grader_banner(grader_id, official[grader_id])
    return run_id, grader_id, bool(official[grader_id])


def significance_table(rows: pd.DataFrame) -> None:
    """Paired t-test rows (marts.fct_qa_significance) as one table, the same on every page."""

    def p(label: str, digits: int) -> Any:
        return st.column_config.NumberColumn(label, format=f"%.{digits}f")

    dataframe(
        rows,
        hide_index=True,
        column_order=[
            "metric",
            "lane",
            "baseline_lane",
            "n_pairs",
            "mean_diff",
            "t_stat",
            "p_value",
            "p_adjusted",
            "correction",
            "family_size",
            "significant",
            "direction",
        ],
        column_config={
            "metric": "Metric",
            "lane": system_column(QA_SYSTEM_HELP),
            "baseline_lane": "Baseline",
            "n_pairs": "n pairs",
            "mean_diff": p("Mean diff (lane − baseline)", 4),
            "t_stat": p("t", 3),
            "p_value": p("p", 4),
            "p_adjusted": p("p adj.", 4),
            "correction": "Correction",
            "family_size": "Family size",
            "significant": "Significant",
            "direction": "Direction",
        },
    )


# --- deep research (DRACO) pages ---------------------------------------------------------------

DRACO_HOW_TO = (
    "Create them with `bench run draco --tasks demo --systems local-rag --judge offline` "
    "(offline demo tasks, no key needed) or `bench run draco --limit 5 --systems <lanes>`; each "
    "run ingests, builds the marts and publishes the snapshot. Then reload this page."
)


def require_draco_snapshot() -> data.DracoStatus:
    """Show the DRACO empty state and stop the page unless the DRACO marts hold rows."""
    return _require_marts(
        data.draco_status(), "deep-research", "deep-research (DRACO)", DRACO_HOW_TO
    )


def points(value: Any, digits: int = 1) -> str:
    """A 0-1 score as points out of 100 (how DRACO scores are quoted), MISSING when missing."""
    return metric_text("draco_score", value, digits)


def pick_draco_run(key_prefix: str) -> str:
    """The run picker every DRACO page starts with (deep link `?run=`); stops the page when the
    snapshot has no deep-research run."""
    runs = data.draco_runs()
    if runs.empty:
        stop_with("The snapshot has no deep-research leaderboard rows yet. " + DRACO_HOW_TO)
    labels = {
        row.run_id: f"{row.run_id} · {row.benchmark} · {row.dataset_name or 'dataset ?'} · "
        f"{row.n_lanes} system(s) · {row.n_judges} judge regime(s) · {row.status or 'status ?'}"
        for row in runs.itertuples()
    }
    run_id = pick("Run", list(labels), f"{key_prefix}_run", "run", lambda r: labels[r])
    assert run_id is not None  # runs is not empty
    return run_id


def judge_regime_text(judge: Any) -> str:
    """One plain-text line naming a judge regime (for st.text: model names are data)."""
    official = "official" if bool(judge.get("judge_official")) else "NOT official"
    return (
        f"judge regime {judge.get('judge_id')} · model {judge.get('judge_model') or '?'}"
        f" ({judge.get('judge_provider') or 'provider ?'}) · {judge.get('judge_samples')} "
        f"sample(s) per criterion · {official} · normalizer {judge.get('normalizer_version')}"
    )


def judge_banner(judge: Any) -> None:
    """The judge regime of everything below, stated before any number."""
    if bool(judge.get("judge_official")):
        st.success(
            "Official judge regime (an LLM judge with the DRACO rubric prompt). Scores are "
            "comparable only with rows of this same regime."
        )
    else:
        st.warning(
            "NOT an official judge regime (e.g. the offline lexical stand-in): its scores are "
            "not comparable with upstream DRACO figures or with any other judge regime."
        )
    st.text(judge_regime_text(judge))


# Human names of the extraction composite's weights (w_<name> columns); a name the snapshot has
# and this map lacks is shown as is.
EXTRACTION_WEIGHT_LABELS = {
    "completeness": "Completeness",
    "success": "Useful success",
    "f1": "Token F1",
    "latency": "Latency score",
    "throughput": "Throughput score",
    "shingle_precision": "Shingle precision",
    "shingle_recall": "Shingle recall",
    "shingle_f1": "Shingle F1",
}
