"""Where runtime data lives. One data root (`BENCH_HOME`, default `./.bench`), git-ignored."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class BenchPaths:
    home: Path

    @classmethod
    def from_env(cls, home: str | os.PathLike[str] | None = None) -> BenchPaths:
        root = home or os.environ.get("BENCH_HOME") or ".bench"
        return cls(Path(root).expanduser().resolve())

    @property
    def log_dir(self) -> Path:
        return self.home / "log"

    @property
    def warehouse_db(self) -> Path:
        return self.home / "warehouse.duckdb"

    @property
    def serve_db(self) -> Path:
        return self.home / "serve.duckdb"

    @property
    def dlt_dir(self) -> Path:
        return self.home / "dlt"

    @property
    def dbt_dir(self) -> Path:
        return self.home / "dbt"

    @property
    def corpora_dir(self) -> Path:
        return self.home / "corpora"

    @property
    def cache_dir(self) -> Path:
        return self.home / "cache"

    @property
    def scoring_file(self) -> Path:
        """The active scoring vars (weights, thresholds); every build uses them."""
        return self.home / "scoring.json"

    @property
    def heads_file(self) -> Path:
        """Log heads this data root has vouched for (published or verified), one per line."""
        return self.home / "heads.jsonl"

    @property
    def verification_file(self) -> Path:
        """The last verification's outcome: what `bench status` and the snapshot report."""
        return self.home / "verification.json"

    def ensure(self) -> BenchPaths:
        for path in (self.home, self.log_dir, self.dlt_dir, self.dbt_dir, self.corpora_dir):
            path.mkdir(parents=True, exist_ok=True)
        return self
