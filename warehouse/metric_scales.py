"""One display scale per metric, for every place a person reads a number.

The marts store every score and rate as a 0-1 fraction. How each is shown (factor, decimals,
label, unit) is declared once here and used by the app's tables, charts and what-if panels
(`app.ui`) and by the CLI summaries (`bench.run_report`), so the same run's number reads the
same everywhere.

Why these scales: DRACO scores are points out of 100 because the DRACO paper and every
published DRACO leaderboard quote them so (methodology 1.3: score = clamp(raw / P, 0, 1) x 100 %;
"published numbers move by tens of points"). QA accuracy, the retrieval metrics (NDCG, MRR,
recall) and the extraction metrics stay 0-1, as the leaderboards and the IR / extraction
literature they come from write them.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

# What a table, chart or summary shows where a value is undefined or not measured.
MISSING = "—"


@dataclass(frozen=True)
class MetricScale:
    label: str  # the column header people read
    factor: float  # shown = stored x factor
    digits: int  # decimals shown
    unit: str  # added to axis titles
    help: str = ""

    @property
    def axis_title(self) -> str:
        return f"{self.label} ({self.unit})"

    @property
    def domain(self) -> list[float]:
        """The axis range of the metric on its display scale."""
        return [0.0, float(self.factor)]

    def shown(self, value: Any) -> float | None:
        """A stored 0-1 value on the display scale; None when undefined (NULL, NaN)."""
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return None
        if math.isnan(float(value)):
            return None
        return float(value) * self.factor

    def text(self, value: Any) -> str:
        shown = self.shown(value)
        return MISSING if shown is None else f"{shown:.{self.digits}f}"


_POINTS = "points, 0–100"
_FRACTION = "0–1"
_NO_GOLD = "undefined (—) for a question without gold URLs"

METRIC_SCALES: dict[str, MetricScale] = {
    # deep research (DRACO): points out of 100
    "draco_score": MetricScale(
        "Score", 100, 1, _POINTS, "mean item score × 100 over every task (failures at 0)"
    ),
    "draco_factual_accuracy": MetricScale(
        "Factual accuracy", 100, 1, _POINTS, "factual-accuracy section score × 100"
    ),
    "draco_breadth": MetricScale("Breadth & depth", 100, 1, _POINTS),
    "draco_presentation": MetricScale("Presentation", 100, 1, _POINTS),
    "draco_citation": MetricScale("Citation", 100, 1, _POINTS),
    "draco_pass_rate": MetricScale(
        "Pass rate", 100, 1, _POINTS, "share of criteria passed (v ≥ threshold), × 100"
    ),
    # question answering: shares and retrieval metrics, 0-1
    "qa_strict_accuracy": MetricScale(
        "Strict accuracy", 1, 3, _FRACTION, "correct / graded (landed) questions"
    ),
    "qa_f1": MetricScale("F1", 1, 3, _FRACTION),
    "ndcg_5": MetricScale("NDCG@5", 1, 3, _FRACTION, _NO_GOLD),
    "ndcg_10": MetricScale("NDCG@10", 1, 3, _FRACTION, _NO_GOLD),
    "recall_5": MetricScale("Recall@5", 1, 3, _FRACTION, _NO_GOLD),
    "recall_10": MetricScale("Recall@10", 1, 3, _FRACTION, _NO_GOLD),
    "mrr": MetricScale("MRR", 1, 3, _FRACTION, _NO_GOLD),
    # extraction: 0-1
    "extraction_composite": MetricScale("Composite", 1, 3, _FRACTION),
    "extraction_seed_composite": MetricScale("Seed composite", 1, 3, _FRACTION),
    "shingle_f1": MetricScale("Shingle F1", 1, 3, _FRACTION),
}
