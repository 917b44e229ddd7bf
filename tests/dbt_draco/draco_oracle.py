"""The DRACO scoring rules written plainly in Python, from the events alone (no SQL): the oracle
the marts are compared with (methodology 1.2 - 1.4).

The rules, as stated here independently of the SQL:

* Least favourable verdict: a sample's met is derived from its outcome, never read from the
  event's `met`: parsed -> verdict == "MET"; anything else (unparsed, failed) -> the criterion is
  negative (UNMET for a positive criterion, MET - the penalty applies - for a negative one).
* Lower bound for incomplete items: every criterion of the item counts. A criterion judged with
  fewer samples than the regime asks for gets the missing samples at the least favourable
  verdict, so v_scored = (MET samples + missing samples if negative) / max(present, expected);
  with no sample at all v_scored is 0 (positive) or 1 (negative). raw = sum(w * v_scored) and
  P = the positive weight of ALL criteria: 1 of 40 criteria judged MET is not 100 %.
* Pass rate = passed / all criteria; passed = positive and v_scored >= threshold, or negative
  and v_scored < threshold (an unjudged criterion never passes).
* An item without a report (failed, missing, unreported) scores 0.0 and passes 0 on every axis.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from warehouse.events import Envelope

DRACO_AXES = (
    "factual-accuracy",
    "breadth-and-depth-of-analysis",
    "presentation-quality",
    "citation-quality",
)

# (item_id, criterion_id, registered weight) -> weight in effect
WeightRule = Callable[[str, str, int], float]


def registered_weights(_item: str, _criterion: str, weight: int) -> float:
    return float(weight)


def weight_rule(overrides: dict[tuple[str, str], int] | None = None, floor: float | None = None):
    overrides = overrides or {}

    def rule(item: str, criterion: str, weight: int) -> float:
        w = float(overrides.get((item, criterion), weight))
        return max(w, float(floor)) if floor is not None else w

    return rule


def scoring_met(sample: dict) -> bool:
    """The met that scores: the parsed verdict, else the least favourable one."""
    if sample["outcome"] == "parsed" and sample["verdict"] in ("MET", "UNMET"):
        return sample["verdict"] == "MET"
    return sample["polarity"] == "negative"


def clamp_score(raw: float, positive: float) -> float:
    if positive <= 0:
        return 0.0
    return min(1.0, max(0.0, raw / positive))


@dataclass
class CriterionResult:
    criterion_id: str
    axis: str
    weight: float
    negative: bool
    n_samples: int
    n_met: int
    v: float | None  # over the samples present: what the judge said
    v_scored: float  # missing samples at their least favourable verdict: what scores
    n_filled: int
    passed: bool
    n_unparsed: int
    n_failed: int
    verdict_ids: list[str]


@dataclass
class ItemResult:
    run_id: str
    lane: str
    judge_id: str
    item_id: str
    position: int
    domain: str
    status: str
    attempt: int | None
    score: float
    axis_scores: dict[str, float]
    pass_rate: float
    n_met_overridden: int
    n_split: int
    n_unparsed: int
    n_failed_samples: int
    wall_clock_ms: float | None
    cost_usd: float | None
    cost_basis: str | None
    error_class: str | None
    criteria: list[CriterionResult]


def score_events(
    events: list[Envelope],
    run_id: str,
    *,
    weights: WeightRule = registered_weights,
    threshold: float = 0.5,
    prices: dict[str, tuple[float, str]] | None = None,
) -> dict[tuple[str, str, str], ItemResult]:
    """(lane, judge_id, item_id) -> the item's scores, recomputed from the run's events."""
    prices = prices or {}
    mine = [e for e in events if e.run_id == run_id]
    by_type = defaultdict(list)
    for e in mine:
        by_type[e.event_type].append(e.payload | {"_id": e.event_id})
    lanes = [s["name"] for s in by_type["run_started"][0]["systems"]]
    tasks = by_type["rubric_task_registered"]
    criteria = defaultdict(list)
    for c in by_type["rubric_criterion_registered"]:
        criteria[c["item_id"]].append(c)
    judges = {j["judge_id"]: j for j in by_type["judge_regime_registered"]}
    completed = {(p["lane"], p["item_id"], p["attempt"]): p for p in by_type["research_completed"]}
    reports = {
        (p["lane"], p["item_id"], p["attempt"], p["normalizer_version"]): p
        for p in by_type["report_normalized"]
    }
    failures = defaultdict(list)
    for p in by_type["research_failed"]:
        failures[(p["lane"], p["item_id"])].append(p)
    latest_verdict = {}
    for p in by_type["judge_verdict"]:
        key = (p["lane"], p["item_id"], p["attempt"], p["judge_id"], p["criterion_id"], p["sample"])
        if key not in latest_verdict or p["judge_attempt"] > latest_verdict[key]["judge_attempt"]:
            latest_verdict[key] = p
    samples_of = defaultdict(list)
    for (lane, item, attempt, judge, criterion, _sample), p in latest_verdict.items():
        samples_of[(lane, item, attempt, judge, criterion)].append(p)

    out = {}
    for task in tasks:
        item = task["item_id"]
        for lane in lanes:
            for judge_id, regime in judges.items():
                reported = [
                    a
                    for (ln, it, a) in completed
                    if ln == lane
                    and it == item
                    and (lane, item, a, regime["normalizer_version"]) in reports
                ]
                done = [a for (ln, it, a) in completed if ln == lane and it == item]
                fails = failures.get((lane, item), [])
                attempt = max(reported) if reported else (max(done) if done else None)
                report = (
                    reports[(lane, item, attempt, regime["normalizer_version"])]
                    if reported
                    else None
                )
                results = []
                n_overridden = 0
                for c in sorted(criteria[item], key=lambda c: c["position"]):
                    got = []
                    if report is not None:
                        got = [
                            s
                            for s in samples_of[(lane, item, attempt, judge_id, c["criterion_id"])]
                            if s["source_event_id"] == report["_id"]
                        ]
                    n = len(got)
                    met = sum(scoring_met(s) for s in got)
                    v = met / n if n else None
                    negative = c["weight"] < 0
                    expected = regime["samples"] or 1
                    filled = max(expected - n, 0)
                    v_scored = (met + (filled if negative else 0)) / (n + filled)
                    passed = (not negative and v_scored >= threshold) or (
                        negative and v_scored < threshold
                    )
                    results.append(
                        CriterionResult(
                            criterion_id=c["criterion_id"],
                            axis=c["axis"],
                            weight=weights(item, c["criterion_id"], c["weight"]),
                            negative=negative,
                            n_samples=n,
                            n_met=met,
                            v=v,
                            v_scored=v_scored,
                            n_filled=filled,
                            passed=passed,
                            n_unparsed=sum(s["outcome"] == "unparsed" for s in got),
                            n_failed=sum(s["outcome"] == "failed" for s in got),
                            verdict_ids=sorted(s["_id"] for s in got),
                        )
                    )
                    n_overridden += sum(s["met"] != scoring_met(s) for s in got)

                def score_of(rows, report=report):
                    if report is None:  # failed, missing, unreported: 0.0 on every axis
                        return 0.0
                    raw = sum(r.weight * r.v_scored for r in rows)
                    positive = sum(r.weight for r in rows if r.weight > 0)
                    return clamp_score(raw, positive)

                judged = [r for r in results if r.v is not None]
                if reported:
                    short = any(r.n_samples < regime["samples"] for r in results)
                    status = "incomplete" if short else "scored"
                elif done:
                    status = "incomplete"
                elif fails:
                    status = "failed"
                else:
                    status = "missing"
                research = completed.get((lane, item, attempt)) if done else None
                cost, basis = None, None
                if research is not None:
                    if research["cost_usd"] is not None:
                        cost, basis = research["cost_usd"], research["cost_basis"]
                    elif lane in prices:
                        cost, basis = prices[lane]
                latest_fail = max(fails, key=lambda f: f["attempt"]) if fails else None
                out[(lane, judge_id, item)] = ItemResult(
                    run_id=run_id,
                    lane=lane,
                    judge_id=judge_id,
                    item_id=item,
                    position=task["position"],
                    domain=task["domain"],
                    status=status,
                    attempt=attempt if done else (latest_fail["attempt"] if latest_fail else None),
                    score=score_of(results),
                    axis_scores={
                        axis: score_of([r for r in results if r.axis == axis])
                        for axis in {r.axis for r in results}
                    },
                    pass_rate=(
                        sum(r.passed for r in results) / len(results)
                        if report is not None and results
                        else 0.0
                    ),
                    n_met_overridden=n_overridden,
                    n_split=sum(1 for r in judged if 0 < r.v < 1),
                    n_unparsed=sum(r.n_unparsed for r in results),
                    n_failed_samples=sum(r.n_failed for r in results),
                    wall_clock_ms=research["wall_clock_ms"] if research else None,
                    cost_usd=cost,
                    cost_basis=basis,
                    error_class=latest_fail["error_class"] if (latest_fail and not done) else None,
                    criteria=results,
                )
    return out
