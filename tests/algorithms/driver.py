"""A minimal test driver: ask a batch, draw Bernoulli rewards for it, tell them, repeat.

Independent of ``screener.simulation`` on purpose, so algorithm tests do not depend on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from screener.algorithms import Algorithm, Result

__all__ = ["Drive", "drive"]


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
