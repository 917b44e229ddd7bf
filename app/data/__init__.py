"""Every query the app runs: read-only, parameterized, against the published serving snapshot.

The app reads only `$BENCH_HOME/serve.duckdb` (schema `marts`, see docs/warehouse-contract.md),
never the file dlt and dbt write. Each query opens a read-only connection, runs and closes it
(`warehouse.query.read_only_query`): all sessions share one process, and DuckDB reuses an open
instance bound to the old inode after `publish` swaps the file, so no connection may outlive a
query. Results are cached with `st.cache_data`, keyed by the snapshot file's identity (mtime,
inode, size): a new publish is picked up on the next call without any cache invalidation.

User input (dataset, run, system, item, event ids) reaches SQL only as `?` parameters.

Split per family (`core`, `runs`, `extraction`, `qa`, `draco`); pages keep importing
`from app import data` and calling `data.<function>`.
"""

from app.data.core import *  # noqa: F403

# The shared helpers, for pages that parse a JSON column themselves.
from app.data.core import _is_missing, _json, _query, _records  # noqa: F401
from app.data.draco import *  # noqa: F403
from app.data.extraction import *  # noqa: F403
from app.data.formulas import scoring_formulas  # noqa: F401
from app.data.imports import *  # noqa: F403
from app.data.qa import *  # noqa: F403
from app.data.runs import *  # noqa: F403
from app.data.scorecard import *  # noqa: F403
