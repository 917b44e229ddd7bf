"""The app imports the significance marts' paired tests as dbt_project.python.bench_stats, in a
process where dbt's module path (dbt_project/python) is not on sys.path: the module must import
there. (A top-level `from bench_vars import ...` broke every app page in the browser while the
in-process AppTest tests, whose sys.path has dbt_project/python, passed.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_apps_compare_module_imports_without_dbts_module_path():
    code = (
        "import sys; sys.path[:] = [p for p in sys.path if not p.endswith('dbt_project/python')]; "
        "import app.data.compare as c; print(c.paired_ttest([1.0, 2.0, 4.0], [1.0, 1.0, 1.0])[1])"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert 0.0 < float(proc.stdout) < 1.0
