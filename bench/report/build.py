"""Read the published snapshot and write the static report: `index.html`, one CSV per figure
under `data/<mart>/`, and `report.json` (what was written, from which snapshot and log head).

Everything is read from the serving snapshot read-only (`bench.sql_cli.open_snapshot`); the
methodology texts are the dbt documentation of each mart shown (its yml description and the
header of its SQL model), quoted as they are."""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from bench.report import figures, html
from bench.report.figures import Board, Column

INDEX = "index.html"
MANIFEST = "report.json"
NOTHING_PUBLISHED = (
    "nothing is published yet: run `bench demo --no-serve` or `bench run ...` (each run builds "
    "and publishes), or `bench build` and `bench publish`, first"
)


class ReportError(ValueError):
    """The report cannot be written; the message says why and what to do."""


@dataclass(frozen=True)
class Figure:
    """One table + chart(s) + the CSV of exactly its rows."""

    anchor: str
    title: str
    csv: str  # relative to the report directory
    columns: tuple[str, ...]
    rows: list[dict[str, Any]]


@dataclass
class Snapshot:
    path: Path
    published_at: str
    metadata: dict[str, Any]
    scorecard: list[dict[str, Any]] | None
    boards: dict[str, list[dict[str, Any]] | None]  # None = the mart is not in the snapshot
    scoring_vars: list[dict[str, Any]] = field(default_factory=list)

    @property
    def log_head(self) -> str | None:
        head = self.metadata.get("log_head")
        return f"{head['size']}:{head['root']}" if head else None


@dataclass(frozen=True)
class Written:
    out_dir: Path
    index: Path
    csvs: tuple[Path, ...]
    log_head: str | None
    published_at: str


# --- reading ---------------------------------------------------------------------------------


def _rows(con, sql: str) -> list[dict[str, Any]]:
    cursor = con.execute(sql)
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def read_snapshot(serve_db: Path) -> Snapshot:
    import duckdb

    from bench.export import ExportError
    from bench.sql_cli import open_snapshot

    if not serve_db.exists():
        raise ReportError(f"{serve_db} does not exist: {NOTHING_PUBLISHED}")
    try:
        con = open_snapshot(serve_db)
        return _read(con, serve_db)
    except (ExportError, duckdb.Error) as exc:
        raise ReportError(f"{serve_db} cannot be read ({exc})") from exc


def _read(con, serve_db: Path) -> Snapshot:
    import duckdb

    from bench.scorecard_cli import COLUMNS as SCORECARD_COLUMNS
    from bench.scorecard_cli import ORDER as SCORECARD_ORDER

    with con:
        try:
            published = con.execute(
                "select published_at, metadata from main._publish "
                "order by published_at desc limit 1"
            ).fetchone()
        except duckdb.CatalogException:
            published = None
        if published is None:
            raise ReportError(f"{serve_db} has no publish record: {NOTHING_PUBLISHED}")
        boards: dict[str, list[dict[str, Any]] | None] = {}
        for board in figures.BOARDS:
            try:
                boards[board.key] = _rows(con, figures.board_sql(board))
            except duckdb.CatalogException:
                boards[board.key] = None
        try:
            scoring_vars = _rows(
                con, "select var_name, var_value from marts.dim_scoring_vars order by var_name"
            )
        except duckdb.CatalogException:
            scoring_vars = []
        # On this one connection, like everything above: a publish that swaps the file
        # meanwhile cannot mix two snapshots in one report. None: published before the mart.
        scorecard: list[dict[str, Any]] | None
        try:
            scorecard = _rows(
                con,
                f"select {SCORECARD_COLUMNS} from marts.{figures.SCORECARD_MART} "
                f"order by {SCORECARD_ORDER}",
            )
        except duckdb.CatalogException:
            scorecard = None
    if not scorecard and not any(boards.values()):
        raise ReportError(f"{serve_db} holds no scored rows: {NOTHING_PUBLISHED}")
    return Snapshot(
        serve_db,
        str(published[0]),
        json.loads(published[1] or "{}"),
        scorecard,
        boards,
        scoring_vars,
    )


def disclosures(project_dir: Path) -> list[tuple[str, str, str]]:
    """(mart, yml description, SQL header) of every mart the report shows, from the dbt docs."""
    import yaml

    marts = project_dir / "models" / "marts"
    described: dict[str, str] = {}
    for path in sorted(marts.rglob("*.yml")):
        for model in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("models", []):
            described[model["name"]] = " ".join(str(model.get("description") or "").split())
    out = []
    for mart in figures.DISCLOSED_MARTS:
        sql = next(marts.rglob(f"{mart}.sql"), None)
        header = _sql_header(sql.read_text(encoding="utf-8")) if sql else ""
        out.append((mart, described.get(mart, ""), header))
    return out


def _sql_header(text: str) -> str:
    """The comment block a model starts with (after any `{% set %}` lines)."""
    text = re.sub(r"\A(\s*\{%.*?%\}\s*)+", "", text, flags=re.DOTALL)
    lines = []
    for line in text.splitlines():
        if not line.startswith("--"):
            break
        lines.append(line[3:] if line.startswith("-- ") else line[2:])
    return "\n".join(lines)


# --- figures ---------------------------------------------------------------------------------


def _slug(*parts: Any) -> str:
    text = "-".join(str(p) for p in parts)
    short = re.sub(r"[^A-Za-z0-9._]+", "-", text).strip("-")[:60]
    return f"{short}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def board_figures(board: Board, rows: list[dict[str, Any]]) -> list[Figure]:
    split = (board.split.name,) if board.split else ()
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(row[name] for name in (*board.group_by, *split)), []).append(row)
    out = []
    for key, members in groups.items():
        if board.key == "extraction":
            title = f"Dataset {members[0]['dataset_name']} · {str(key[0])[:12]}"
        else:
            title = " · ".join(
                f"{board.column(name).label} {value}"
                for name, value in zip(board.group_by, key, strict=False)
            )
        if board.split:
            title += " · " + board.split.labels.get(str(key[-1]), str(key[-1]))
        slug = _slug(*key)
        out.append(
            Figure(
                anchor=f"{board.key}-{slug}",
                title=title,
                csv=f"data/{board.mart}/{slug}.csv",
                columns=board.names,
                rows=members,
            )
        )
    return out


def scorecard_figures(rows: list[dict[str, Any]]) -> list[Figure]:
    from bench.scorecard_cli import COLUMNS

    names = tuple(name.strip() for name in COLUMNS.split(","))
    families: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        families.setdefault(row["family"], []).append(row)
    return [
        Figure(
            anchor=f"scorecard-{family}",
            title=family,
            csv=f"data/{figures.SCORECARD_MART}/{family}.csv",
            columns=names,
            rows=members,
        )
        for family, members in families.items()
    ]


def csv_value(value: Any) -> str:
    """The mart's value, losslessly: floats in shortest round-trip form, booleans as
    true/false, NULL as an empty field."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    return str(value)


def write_csv(path: Path, figure: Figure) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(figure.columns)
        for row in figure.rows:
            writer.writerow([csv_value(row[name]) for name in figure.columns])


# --- the page --------------------------------------------------------------------------------


def _columns(columns: tuple[Column, ...]) -> list[tuple[str, str, str]]:
    return [(c.name, c.label, c.kind) for c in columns]


def _csv_link(figure: Figure) -> str:
    return (
        f'<p class="note">Data behind this figure: <a class="csv" href="{escape(figure.csv)}">'
        f"{escape(figure.csv)}</a></p>"
    )


def _provenance(snapshot: Snapshot, written_at: str) -> str:
    from bench.help import package_version

    meta = snapshot.metadata
    head = meta.get("log_head") or {}
    verification = meta.get("log_verification") or {}
    custom = meta.get("scoring_vars") or {}
    items = [
        ("Snapshot", snapshot.path.name),
        ("Published at", snapshot.published_at),
        ("Log head (SIZE:ROOT)", snapshot.log_head or "none recorded"),
        ("Events covered", str(head.get("events", html.MISSING))),
        ("Log head trusted", "yes" if meta.get("log_head_trusted") else "no"),
        (
            "Log verification",
            f"{verification.get('status', html.MISSING)} (checked "
            f"{verification.get('checked_at', html.MISSING)}, "
            f"{verification.get('problems', html.MISSING)} problem(s))",
        ),
        ("Code (git sha)", str(meta.get("git_sha", html.MISSING))),
        (
            "Scoring vars set by bench rescore",
            json.dumps(custom, sort_keys=True) if custom else "none (the project's defaults)",
        ),
        ("Report written", f"{written_at} by bench {package_version()}"),
    ]
    body = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in items)
    return f'<dl class="provenance">{body}</dl>'


# The leaderboard each scorecard family is read from (marts.vendor_scorecard's header).
SCORECARD_BOARDS = {
    "qa_search": (figures.QA, False),
    "qa_answer": (figures.QA, True),
    "deep_research": (figures.DRACO, None),
    "extraction": (figures.EXTRACTION, None),
    "live_extraction": (figures.LIVE_EXTRACTION, None),
}


def leaderboard_anchor(top: dict[str, Any], boards: dict[str, list[Figure]]) -> str:
    """The figure of the run and regime a scorecard family was read from; its section when
    none matches."""
    board, kind = SCORECARD_BOARDS.get(top["family"], (None, None))
    if board is None:
        return "leaderboards"
    for figure in boards.get(board.key, []):
        row = figure.rows[0]
        if not any(r["run_id"] == top["run_id"] for r in figure.rows):
            continue
        if board.regime and row[board.regime] != top["regime"]:
            continue
        if board.split and kind is not None and bool(row[board.split.name]) != kind:
            continue
        if board.key == "live_extraction" and row["vertical"] != "all":
            continue
        return figure.anchor
    return board.key


def _scorecard_section(
    figs: list[Figure], boards: dict[str, list[Figure]], *, missing: bool
) -> str:
    from bench.scorecard_cli import FAMILY_LABELS, METRIC_LABELS, verdict

    parts = ['<section id="scorecard"><h2>Scorecard: who wins, at a glance</h2>']
    if missing:
        parts.append(
            "<p>This snapshot has no marts.vendor_scorecard (published before it existed): "
            "<code>bench build</code> and <code>bench publish</code> add it.</p>"
        )
    elif not figs:
        parts.append("<p>marts.vendor_scorecard has no rows in this snapshot.</p>")
    for figure in figs:
        rows = figure.rows
        top = next((row for row in rows if row["is_winner"]), rows[0])
        points = str(top["metric_scale"]).startswith("points")
        digits = 1 if points else 3
        metric = METRIC_LABELS.get(top["metric"], top["metric"])
        label = FAMILY_LABELS.get(figure.title, figure.title)
        parts.append(f'<h3 id="{figure.anchor}">{escape(label)}</h3>')
        parts.append(f'<p class="verdict winner">{escape(verdict(top, digits))}.</p>')
        parts.append(
            f'<p class="note">{escape(metric)} ({escape(str(top["metric_scale"]))}) · run '
            f"{escape(str(top['run_id']))} · regime {escape(str(top['regime'] or html.MISSING))}"
            f" · latency: {escape(str(top['latency_stat'] or html.MISSING))} · "
            f"{escape(str(top['significance_note'] or ''))} · "
            f'<a class="leaderboard" href="#{leaderboard_anchor(top, boards)}">leaderboard</a></p>'
        )
        parts.append(
            html.bar_chart(
                f"{label}: {metric}",
                [
                    (r["product"], r["headline"], r["ci_low"], r["ci_high"], bool(r["is_winner"]))
                    for r in rows
                ],
                scale=1.0,
                digits=digits,
                full=100.0 if points else 1.0,
            )
        )
        parts.append(
            html.table(_columns(figures.SCORECARD_TABLE), rows, points_scale=points)
            + _csv_link(figure)
        )
    parts.append("</section>")
    return "".join(parts)


def _board_section(board: Board, rows: list[dict[str, Any]] | None) -> tuple[str, list[Figure]]:
    parts = [f'<section id="{board.key}"><h2>{escape(board.title)}</h2>']
    if rows is None:
        parts.append(f"<p>This snapshot has no marts.{board.mart}.</p></section>")
        return "".join(parts), []
    figs = board_figures(board, rows)
    if not figs:
        parts.append(f"<p>No rows in marts.{board.mart}.</p>")
    for figure in figs:
        parts.append(f'<h3 id="{figure.anchor}">{escape(figure.title)}</h3>')
        if board.regime and board.official:
            official = bool(figure.rows[0][board.official])
            css = "regime-official" if official else "regime-unofficial"
            parts.append(
                f'<p class="{css}">{escape(board.column(board.regime).label)} '
                f"{escape(str(figure.rows[0][board.regime]))}: "
                f"{'official' if official else 'NOT official'}; regimes are never mixed in one "
                "table.</p>"
            )
        for chart in board.charts:
            column = board.column(chart.value)
            scale = 100.0 if column.kind == "points" else 1.0
            low_high = []
            for row in figure.rows:
                if chart.ci:
                    low, high = row[chart.ci[0]], row[chart.ci[1]]
                elif (
                    chart.spread and row[chart.value] is not None and row[chart.spread] is not None
                ):
                    low = row[chart.value] - row[chart.spread]
                    high = row[chart.value] + row[chart.spread]
                else:
                    low = high = None
                low_high.append((low, high))
            whisker = " (whiskers: 95% CI)" if chart.ci else (" (± std)" if chart.spread else "")
            parts.append(f'<p class="note">{escape(column.label)}{escape(whisker)}</p>')
            parts.append(
                html.bar_chart(
                    f"{figure.title}: {column.label}{whisker}",
                    [
                        (str(row[board.bar_label]), row[chart.value], low, high, False)
                        for row, (low, high) in zip(figure.rows, low_high, strict=True)
                    ],
                    scale=scale,
                    digits=1 if scale == 100.0 else 3,
                    full=100.0 if scale == 100.0 else 1.0,
                )
            )
        shown = tuple(c for c in board.columns if c.name not in board.group_by)
        parts.append(html.table(_columns(shown), figure.rows) + _csv_link(figure))
    parts.append("</section>")
    return "".join(parts), figs


def _vars_section(snapshot: Snapshot) -> tuple[str, list[Figure]]:
    if not snapshot.scoring_vars:
        return "", []
    figure = Figure(
        "scoring-vars",
        "Scoring vars in effect",
        "data/dim_scoring_vars/all.csv",
        ("var_name", "var_value"),
        snapshot.scoring_vars,
    )
    section = (
        '<section id="scoring-vars"><h2>Scoring vars in effect (marts.dim_scoring_vars)</h2>'
        + html.table(
            [("var_name", "Var", "text"), ("var_value", "Value (JSON)", "text")],
            snapshot.scoring_vars,
        )
        + _csv_link(figure)
        + "</section>"
    )
    return section, [figure]


def _methodology_section(texts: list[tuple[str, str, str]]) -> str:
    parts = [
        '<section id="methodology"><h2>Methodology</h2><p class="note">How each number above '
        "is computed, quoted from the dbt project's documentation of the mart it comes from "
        "(the model's description and the header of its SQL), as installed with this bench.</p>"
    ]
    for mart, description, header in texts:
        parts.append(f"<h3>marts.{escape(mart)}</h3>")
        if description:
            parts.append(f"<p>{escape(description)}</p>")
        if header:
            parts.append(f'<pre class="disclosure">{escape(header)}</pre>')
    parts.append("</section>")
    return "".join(parts)


def render(snapshot: Snapshot, texts: list[tuple[str, str, str]], written_at: str):
    """(index.html text, every figure) of one snapshot."""
    scorecard = scorecard_figures(snapshot.scorecard or [])
    sections, figs, by_board = [], list(scorecard), {}
    for board in figures.BOARDS:
        section, board_figs = _board_section(board, snapshot.boards.get(board.key))
        sections.append(section)
        figs.extend(board_figs)
        by_board[board.key] = board_figs
    vars_section, vars_figs = _vars_section(snapshot)
    figs.extend(vars_figs)
    nav = "".join(
        f'<a href="#{key}">{escape(label)}</a>'
        for key, label in [
            ("scorecard", "Scorecard"),
            *((board.key, board.title) for board in figures.BOARDS),
            ("scoring-vars", "Scoring vars"),
            ("methodology", "Methodology"),
        ]
    )
    body = (
        "<h1>Benchmark report</h1>"
        '<p class="note">Every figure is read from the published marts of the snapshot below; '
        "each links the CSV of exactly its rows (columns named as in the mart, values on the "
        "mart's scale: DRACO scores there are 0–1 and shown here × 100).</p>"
        + _provenance(snapshot, written_at)
        + f"<nav>{nav}</nav>"
        + _scorecard_section(scorecard, by_board, missing=snapshot.scorecard is None)
        + '<div id="leaderboards">'
        + "".join(sections)
        + "</div>"
        + vars_section
        + _methodology_section(texts)
    )
    return html.page("Benchmark report", body), figs


# --- writing ---------------------------------------------------------------------------------


def check_out_dir(out_dir: Path, force: bool) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise ReportError(f"{out_dir} exists and is not a directory")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not force:
        raise ReportError(
            f"{out_dir} exists and is not empty: choose a new directory, or pass --force to "
            "write the report into it (files of a previous report there are replaced)"
        )


def write_report(serve_db: Path, out_dir: Path, *, force: bool = False) -> Written:
    """Write the report of the published snapshot into `out_dir`. Built in a temporary
    directory beside it first, so a failure leaves `out_dir` as it was."""
    from bench.settings import DBT_PROJECT_DIR

    out_dir = out_dir.expanduser().resolve()
    snapshot = read_snapshot(serve_db)
    check_out_dir(out_dir, force)
    written_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    index, figs = render(snapshot, disclosures(DBT_PROJECT_DIR), written_at)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        for figure in figs:
            write_csv(staging / figure.csv, figure)
        (staging / INDEX).write_text(index, encoding="utf-8")
        files = [INDEX, *(figure.csv for figure in figs)]
        manifest = {
            "snapshot": snapshot.path.name,
            "published_at": snapshot.published_at,
            "log_head": snapshot.log_head,
            "written_at": written_at,
            "files": [*files, MANIFEST],
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        _move_into(staging, out_dir, manifest["files"])
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return Written(
        out_dir,
        out_dir / INDEX,
        tuple(out_dir / figure.csv for figure in figs),
        snapshot.log_head,
        snapshot.published_at,
    )


def _move_into(staging: Path, out_dir: Path, files: list[str]) -> None:
    if not out_dir.exists():
        os.replace(staging, out_dir)
        staging.mkdir()  # for the caller's cleanup
        return
    previous = out_dir / MANIFEST
    if previous.exists():  # a previous report: its files go, the user's other files stay
        try:
            old = json.loads(previous.read_text(encoding="utf-8")).get("files", [])
        except ValueError:
            old = []
        for name in old:
            target = (out_dir / name).resolve()
            if target.is_relative_to(out_dir) and target.is_file():
                target.unlink()
    for name in files:
        target = out_dir / name
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging / name, target)
