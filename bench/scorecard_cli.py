"""`bench scorecard`: who wins each family, from the published marts.vendor_scorecard.

Reads the serving snapshot read-only (like `bench sql`); duckdb is imported inside the command
so `bench --version` and `-h` stay fast."""

from __future__ import annotations

from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from bench.options import HomeOption

MISSING = "—"
FAMILY_LABELS = {
    "qa_search": "Question answering: search lanes",
    "qa_answer": "Question answering: vendors' own answers",
    "deep_research": "Deep research (DRACO)",
    "extraction": "Extraction",
    "live_extraction": "Live-URL extraction",
}
METRIC_LABELS = {
    "strict_accuracy": "strict accuracy",
    "score": "score × 100",
    "composite": "composite (active weights)",
}
COLUMNS = (
    "family, vendor, product, product_kind, run_id, regime, metric, metric_scale, headline, "
    "ci_low, ci_high, cost_per_task_usd, latency_s, latency_stat, n_items, rank_in_family, "
    "is_winner, winner, runner_up, margin, margin_significant, margin_p_adjusted, "
    "significance_note"
)
ORDER = (
    "case family when 'qa_search' then 1 when 'qa_answer' then 2 when 'deep_research' then 3 "
    "when 'extraction' then 4 else 5 end, rank_in_family, product"
)

console = Console(stderr=True)
out = Console()


def _number(value: Any, digits: int) -> str:
    return MISSING if value is None else f"{float(value):.{digits}f}"


def scorecard_rows(serve_db) -> list[dict[str, Any]]:
    import duckdb

    from bench.export import ExportError
    from bench.sql_cli import open_snapshot

    try:
        con = open_snapshot(serve_db)
    except ExportError as exc:
        raise ValueError(str(exc)) from exc
    with con:
        try:
            cursor = con.execute(f"select {COLUMNS} from marts.vendor_scorecard order by {ORDER}")
        except duckdb.CatalogException as exc:
            raise ValueError(
                f"{serve_db} has no marts.vendor_scorecard: run `bench build` and `bench publish`"
            ) from exc
        names = [column[0] for column in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def margin_text(margin: Any, digits: int) -> str:
    """The margin at the table's precision; a lead too small to show says so, never 0.000."""
    if margin is None:
        return MISSING
    if 0 < abs(float(margin)) < 0.5 * 10**-digits:
        return f"less than {10**-digits:.{digits}f}"
    return f"{float(margin):.{digits}f}"


def verdict(top: dict[str, Any], digits: int) -> str:
    if top["runner_up"] is None:
        return f"{top['winner']} is the only product measured"
    if top["margin_significant"] is None:
        test = "not tested"
    else:
        word = "significant" if top["margin_significant"] else "not significant"
        test = f"{word}, adjusted p = {top['margin_p_adjusted']:.4f}"
    return (
        f"{top['winner']} wins by {margin_text(top['margin'], digits)} over {top['runner_up']} "
        f"({test})"
    )


def family_table(family: str, rows: list[dict[str, Any]]) -> Table:
    top = next(row for row in rows if row["is_winner"])
    digits = 1 if str(top["metric_scale"]).startswith("points") else 3
    metric = METRIC_LABELS.get(top["metric"], top["metric"])
    table = Table(
        caption=f"run {top['run_id']} · {top['regime'] or MISSING} · {metric} "
        f"({top['metric_scale']}) · latency {top['latency_stat']}",
    )
    for name, justify in (
        ("rank", "right"),
        ("vendor", "left"),
        ("product", "left"),
        (metric, "right"),
        ("95% CI", "right"),
        ("$/task", "right"),
        ("latency s", "right"),
        ("items", "right"),
    ):
        table.add_column(name, justify=justify)
    for row in rows:
        ci = (
            f"{_number(row['ci_low'], digits)}–{_number(row['ci_high'], digits)}"
            if row["ci_low"] is not None and row["ci_high"] is not None
            else MISSING
        )
        table.add_row(
            str(row["rank_in_family"]),
            escape(str(row["vendor"])),
            escape(str(row["product"])),
            _number(row["headline"], digits),
            ci,
            MISSING if row["cost_per_task_usd"] is None else f"${row['cost_per_task_usd']:.4f}",
            _number(row["latency_s"], 3),
            MISSING if row["n_items"] is None else str(row["n_items"]),
        )
    return table


def register(app: typer.Typer, paths_for) -> None:
    @app.command()
    def scorecard(home: HomeOption = None) -> None:
        """Who wins each family: per vendor and product, the headline of the latest run, its
        CI, cost per task and latency, the winner's margin and its significance."""
        paths = paths_for(home)
        try:
            rows = scorecard_rows(paths.serve_db)
        except ValueError as exc:
            console.print(f"[red]{escape(str(exc))}[/red]", soft_wrap=True)
            raise typer.Exit(2) from exc
        if not rows:
            console.print("the scorecard is empty: run a benchmark, then `bench build`")
            raise typer.Exit(1)
        families: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            families.setdefault(row["family"], []).append(row)
        for family, family_rows in families.items():
            top = next(row for row in family_rows if row["is_winner"])
            digits = 1 if str(top["metric_scale"]).startswith("points") else 3
            heading = f"{FAMILY_LABELS.get(family, family)}: {verdict(top, digits)}"
            out.print(escape(heading), soft_wrap=True, highlight=False)
            out.print(family_table(family, family_rows))
