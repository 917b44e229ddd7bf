"""Locations the CLI needs beyond the data root: the dbt project and the shared datasets."""

from __future__ import annotations

import csv
import math
import os
from pathlib import Path
from typing import Any

from transform.state import DBT_PROJECT_DIR  # noqa: F401 (imported from here by bench and tests)

# The checkout, or site-packages for an installed package: pyproject ships dbt_project/ and app/
# beside bench/ as package data, so the same relative layout holds in both.
REPO_ROOT = Path(__file__).resolve().parent.parent
APP_ENTRYPOINT = REPO_ROOT / "app" / "streamlit_app.py"


def shared_data_dir() -> Path:
    """Datasets shipped beside the repo (`../shared/data`), or wherever BENCH_DATA_DIR says."""
    return Path(os.environ.get("BENCH_DATA_DIR") or REPO_ROOT.parent / "shared" / "data").resolve()


# Scoring vars a user can change without re-running anything; defaults live in dbt_project.yml,
# validation in warehouse/scoring_vars.py, the active set in scoring.json (transform/state.py).


def default_scoring_vars() -> dict[str, Any]:
    """The vars dbt_project.yml declares: what a build uses when nothing overrides them (read
    once, by warehouse.scoring_vars, which the app shares)."""
    import copy

    from warehouse.scoring_vars import dbt_var_defaults

    return copy.deepcopy(dbt_var_defaults())  # the reader caches: a caller may not edit its dict


DRACO_WEIGHT_COLUMNS = ("item_id", "criterion_id", "weight")


def parse_draco_weights(path: Path) -> list[dict[str, Any]]:
    """A CSV of criterion weight overrides: item_id, criterion_id, weight[, reason].

    Becomes var `draco_weight_override_rows`; errors name the file, line and field."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"--draco-weights {path}: cannot read ({exc.strerror})") from None
    reader = csv.DictReader(text.splitlines())
    missing = [c for c in DRACO_WEIGHT_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise ValueError(
            f"{path}: header must have {', '.join(DRACO_WEIGHT_COLUMNS)}[, reason]; "
            f"missing {', '.join(missing)}"
        )
    rows: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for line, record in enumerate(reader, start=2):
        item_id = (record.get("item_id") or "").strip()
        criterion_id = (record.get("criterion_id") or "").strip()
        for field, value in (("item_id", item_id), ("criterion_id", criterion_id)):
            if not value:
                raise ValueError(f"{path}: line {line}: field {field} is empty")
        try:
            weight = float(record.get("weight") or "")
        except ValueError:
            raise ValueError(
                f"{path}: line {line}: field weight {record.get('weight')!r} is not a number"
            ) from None
        if not math.isfinite(weight):
            raise ValueError(f"{path}: line {line}: field weight {weight} is not a finite number")
        if (item_id, criterion_id) in seen:
            raise ValueError(f"{path}: line {line}: {item_id}/{criterion_id} is given twice")
        seen.add((item_id, criterion_id))
        row: dict[str, Any] = {"item_id": item_id, "criterion_id": criterion_id}
        row["weight"] = int(weight) if weight.is_integer() else weight
        row["reason"] = (
            record.get("reason") or ""
        ).strip() or f"bench rescore --draco-weights {path.name}"
        rows.append(row)
    if not rows:
        raise ValueError(f"{path}: no override rows")
    return rows


# .streamlit/config.toml as flags: `bench app` must behave the same from any directory and from
# an installed package, where no config file sits in the working directory.
STREAMLIT_FLAGS = (
    "--server.headless=true",
    "--browser.gatherUsageStats=false",
    "--runner.magicEnabled=false",
    "--client.showErrorDetails=type",
    "--client.toolbarMode=viewer",
    # DNS rebinding: only the loopback names may reach the app
    "--server.allowedHosts=localhost",
    "--server.allowedHosts=127.0.0.1",
    "--server.allowedHosts=[::1]",
)
