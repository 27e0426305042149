"""Simulated workers: per-worker reward distributions drawn by (seed, worker, question)."""

from __future__ import annotations

import abc
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from screener.algorithms.signature import overrides_batch_form
from screener.arrays import FloatArray
from screener.errors import ConfigError
from screener.simulation.hashing import (
    arm_key,
    arm_keys,
    stream_key,
    uniform_at,
    uniforms_at,
)

__all__ = ["BernoulliRewards", "BetaRewards", "RewardModel", "reward_model_from_dict"]

_REWARD_STREAM = 0


class RewardModel(abc.ABC):
    """True per-worker means and a deterministic sampler ``sample(arms, seqs)``."""

    kind: str

    def __init__(self, means: ArrayLike, seed: int = 0) -> None:
        values = np.asarray(means, dtype=np.float64).reshape(-1)
        if values.size == 0:
            raise ConfigError("a reward model needs at least one worker")
        if not np.all((values >= 0.0) & (values <= 1.0)):
            raise ConfigError("worker accuracies must lie in [0, 1]", "check the pool file")
        self.means = values
        self.means.flags.writeable = False
        self.seed = seed

    @property
    def n_arms(self) -> int:
        return int(self.means.size)

    @abc.abstractmethod
    def sample(self, arms: ArrayLike, seqs: ArrayLike) -> FloatArray:
        """Rewards in [0, 1] for the ``seq``-th question of each ``arm``."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if overrides_batch_form(cls, "sample", "sample1"):  # keep the class's own draws
            cls.sample1 = RewardModel.sample1  # type: ignore[method-assign]

    def sample1(self, arm: int, seq: int) -> float:
        """``sample`` of one question, as a float (one-pull-at-a-time loops); a model whose
        draw has a scalar form overrides it with the same draws (a subclass that overrides
        ``sample`` alone gets this one, drawn through its ``sample``)."""
        one = np.array([arm], dtype=np.int64), np.array([seq], dtype=np.int64)
        return float(self.sample(*one)[0])

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "means": self.means.tolist(), "seed": self.seed}


class BernoulliRewards(RewardModel):
    """Binary rewards: worker i answers correctly with probability ``means[i]``.

    Examples
    --------
    Rewards are a pure function of (seed, worker, question number):

    >>> import numpy as np
    >>> rewards = BernoulliRewards([0.9, 0.2], seed=0)
    >>> rewards.sample(np.array([0, 1, 0, 1]), np.array([0, 0, 1, 1])).tolist()
    [1.0, 1.0, 1.0, 0.0]
    >>> rewards.sample(np.array([1]), np.array([1])).tolist()  # asked again: the same answer
    [0.0]
    """

    kind = "bernoulli"

    def __init__(self, means: ArrayLike, seed: int = 0) -> None:
        super().__init__(means, seed)
        self._arm_keys: list[int] = []  # ``arm_key`` per worker, for sample1 (on first use)
        self._keys: NDArray[np.uint64] | None = None  # the same, for sample (on first use)
        self._means: list[float] = self.means.tolist()

    def sample(self, arms: ArrayLike, seqs: ArrayLike) -> FloatArray:
        a = np.asarray(arms, dtype=np.int64)
        if self._keys is None:
            self._keys = arm_keys(self.seed, _REWARD_STREAM, self.n_arms)
        s = np.asarray(seqs, dtype=np.int64).astype(np.uint64)
        u = uniforms_at(self._keys[a], s)
        return (u < self.means[a]).astype(np.float64)

    def sample1(self, arm: int, seq: int) -> float:
        """``sample`` of one question on Python ints: the same draw.

        >>> BernoulliRewards([0.9, 0.2], seed=0).sample1(1, 1)
        0.0
        """
        if not self._arm_keys:
            base = stream_key(self.seed, _REWARD_STREAM)
            self._arm_keys = [arm_key(base, worker) for worker in range(self.n_arms)]
        return 1.0 if uniform_at(self._arm_keys[arm], seq) < self._means[arm] else 0.0


class BetaRewards(RewardModel):
    """Graded rewards in [0, 1]: Beta(mean * c, (1 - mean) * c) with concentration ``c``.

    Each draw comes from a generator seeded by (seed, arm, seq), so it is as reproducible as
    the Bernoulli model, at the price of a Python-level loop (fine off the benchmark path).

    Examples
    --------
    >>> import numpy as np
    >>> rewards = BetaRewards([0.9, 0.2], seed=0)
    >>> scores = rewards.sample(np.array([0, 1]), np.array([0, 0]))
    >>> [round(float(score), 3) for score in scores]
    [0.995, 0.243]
    """

    kind = "beta"

    def __init__(self, means: ArrayLike, seed: int = 0, concentration: float = 10.0) -> None:
        super().__init__(means, seed)
        if not 0 < concentration < math.inf:
            raise ConfigError(
                f"concentration must be a finite number > 0, got {concentration}",
                "e.g. 10: the larger, the closer each score to the worker's accuracy",
            )
        self.concentration = float(concentration)
        clipped = np.clip(self.means, 1e-6, 1 - 1e-6)
        self._alpha = clipped * self.concentration
        self._beta = (1.0 - clipped) * self.concentration

    def sample(self, arms: ArrayLike, seqs: ArrayLike) -> FloatArray:
        a = np.asarray(arms, dtype=np.int64)
        s = np.asarray(seqs, dtype=np.int64)
        out = np.empty(a.size, dtype=np.float64)
        for index, (arm, seq) in enumerate(zip(a.tolist(), s.tolist(), strict=True)):
            rng = np.random.default_rng([self.seed & 0xFFFFFFFF, arm, seq])
            out[index] = rng.beta(self._alpha[arm], self._beta[arm])
        return out

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "concentration": self.concentration}


def reward_model_from_dict(data: dict[str, Any]) -> RewardModel:
    """Rebuild a model from ``describe()`` output."""
    kind = data.get("kind")
    means: Sequence[float] = data["means"]
    seed = int(data.get("seed", 0))
    if kind == "bernoulli":
        return BernoulliRewards(means, seed)
    if kind == "beta":
        return BetaRewards(means, seed, float(data.get("concentration", 10.0)))
    raise ConfigError(f"unknown reward model {kind!r}", "use 'bernoulli' or 'beta'")
