"""Rubric-judged deep research (DRACO, methodology §1, and the user's own rubric task sets).

dataset (pinned tasks + criteria) -> research systems (one module per vendor, async submit +
poll) -> bibliography normalisation -> judge (one criterion per call, N samples) -> events.
Scores are never computed here: dbt derives them from the events.
"""
