"""A run split across machines: `bench run … --shard K/N` runs the K-th of N slices of the
same run (issue #29).

Every shard plans the whole run (the same spec, so the same run id) and then keeps its slice of
the items: the items in the order of their ids, dealt out in turn, so the slices are disjoint,
cover the run, differ in size by at most one item, and are the same on every machine. A shard
is an ordinary run on its data root: it resumes, holds the run's lock there, and closes with
its own RunFinished (which carries K and N). The run is finished when the warehouse holds the
RunFinished of all N shards (dim_runs.n_shards_finished).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

T = TypeVar("T")

_FORM = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shard:
    index: int  # K, from 1
    count: int  # N

    def __post_init__(self) -> None:
        if not 1 <= self.index <= self.count:
            raise ValueError(f"--shard {self}: K must be between 1 and N, e.g. 1/2 and 2/2")

    @classmethod
    def parse(cls, text: str) -> Shard:
        """'K/N' -> Shard(K, N); anything else is a ValueError naming the option."""
        form = _FORM.match(text)
        if form is None:
            raise ValueError(f"--shard {text!r}: expected K/N, e.g. 1/2 and 2/2")
        return cls(int(form.group(1)), int(form.group(2)))

    def take(self, items: Sequence[T], key: Callable[[T], str]) -> tuple[T, ...]:
        """This shard's items, in their original order."""
        ranked = sorted(items, key=key)
        mine = {
            key(item)
            for position, item in enumerate(ranked)
            if position % self.count == self.index - 1
        }
        return tuple(item for item in items if key(item) in mine)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str | None) -> Shard | None:
    return None if text is None else Shard.parse(text)


P = TypeVar("P")


def sharded(plan: P, shard: Shard | None, items: str, key: Callable[[Any], str]) -> P:
    """A family's plan cut to one shard: the same run (spec, id), only the shard's `items` (the
    name of the plan's field that lists them), and the shard recorded on the plan."""
    if shard is None:
        return plan
    return replace(plan, **{items: shard.take(getattr(plan, items), key)}, shard=shard)  # type: ignore[type-var]
