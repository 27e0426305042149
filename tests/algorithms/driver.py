"""A minimal test driver: ask a batch, draw Bernoulli rewards for it, tell them, repeat.

Independent of ``screener.simulation`` on purpose, so algorithm tests do not depend on it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from screener.algorithms import Algorithm, Ask, Result

__all__ = ["Drive", "drive", "random_history"]

A = TypeVar("A", bound=Algorithm)


@dataclass
class Drive:
    """What a driven run produced: the final result and the raw rewards per arm."""

    result: Result
    counts: NDArray[np.int64]
    totals: NDArray[np.float64]
    asked: list[NDArray[np.int64]] = field(default_factory=list)

    @property
    def pulled(self) -> NDArray[np.int64]:
        """Every arm handed out, in order."""
        if not self.asked:
            return np.empty(0, dtype=np.int64)
        return np.concatenate(self.asked)


def drive(
    algorithm: Algorithm,
    means: ArrayLike,
    rng: np.random.Generator,
    *,
    batch: int = 1,
    max_asks: int = 1_000_000,
    keep_asks: bool = False,
) -> Drive:
    """Run ``algorithm`` to the end with immediate answers; reward ~ Bernoulli(means[arm])."""
    p = np.asarray(means, dtype=np.float64)
    counts = np.zeros(p.size, dtype=np.int64)
    totals = np.zeros(p.size, dtype=np.float64)
    asked: list[NDArray[np.int64]] = []
    for _ in range(max_asks):
        ask = algorithm.ask(batch)
        if ask.done:
            return Drive(algorithm.result(), counts, totals, asked)
        assert not ask.wait, "nothing is pending, so the algorithm must not wait"
        rewards = (rng.random(len(ask)) < p[ask.arms]).astype(np.float64)
        algorithm.tell_many(ask.ids, rewards)
        counts += np.bincount(ask.arms, minlength=p.size)
        totals += np.bincount(ask.arms, weights=rewards, minlength=p.size)
        if keep_asks:
            asked.append(np.array(ask.arms))
    raise AssertionError(f"{algorithm.name} did not stop within {max_asks} asks")


def random_history(
    left: A,
    right: A,
    ask_both: Callable[[A, A, int], Ask],
    means: NDArray[np.float64],
    rng: np.random.Generator,
    *,
    steps: int,
) -> bool:
    """Drive two algorithms through the same random history: asks of 1 to 8 (``ask_both``
    asks both and checks they agree), answers told out of order, releases and departures,
    every tell checked to agree. True when the run finished within ``steps`` steps."""
    outstanding: dict[int, float] = {}
    for _ in range(steps):
        roll = rng.random()
        if roll < 0.45 or not outstanding:
            ask = ask_both(left, right, int(rng.integers(1, 9)))
            if ask.done:
                return True
            drawn = (rng.random(len(ask)) < means[ask.arms]).astype(float)
            outstanding.update(zip(ask.ids.tolist(), drawn.tolist(), strict=True))
        elif roll < 0.9:
            chosen = rng.choice(list(outstanding), size=int(rng.integers(1, len(outstanding) + 1)))
            ids = sorted({int(i) for i in chosen}, reverse=True)  # out of order
            values = [outstanding.pop(i) for i in ids]
            np.testing.assert_array_equal(left.tell_many(ids, values), right.tell_many(ids, values))
        elif roll < 0.97:
            pull_id = int(rng.choice(list(outstanding)))
            del outstanding[pull_id]
            assert left.release(pull_id) and right.release(pull_id)
        else:
            arm = int(rng.integers(left.n_arms))
            left.set_unavailable(arm, "left")
            right.set_unavailable(arm, "left")
    return False
