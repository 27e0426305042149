"""The crowd of the workers who stay: what a worker who has made many requests is like.

Crowd-prior fits one prior over workers, each worker counted once. The loss a gate prevents is
counted in labels, and labels come from the few workers who stay long: on real crowds a
handful of prolific workers make most of the labels, and among them spammers can be far more
common than among all workers (a spammer has nothing to lose by going on). A prior fitted over
all workers then calls every prolific worker good before asking it anything, so the value of
gold says "not worth it" and no answer ever shows otherwise.

Rule (``TenurePriors``): a worker who has made ``a >= MIN_AGE`` requests is judged against
the workers seen to make more than ``a`` (or the ``MIN_WORKERS`` most prolific, where fewer
did): its prior is the mean over them of what each one's own gold answers say of its accuracy
(the posterior under the uniform prior, Beta(right + 1, wrong + 1) on crowd-prior's grid).
That is one step of the EM for the accuracy distribution of those workers from a flat start:
while they have answered little it is wide, so gold is worth asking them, and it narrows as
they answer. A younger worker is judged under crowd-prior's fitted prior. Ages are bucketed by
powers of two, the mixtures refreshed every ``REFRESH`` requests and whenever crowd-prior
refits, so the same calls give the same priors. A worker's own probability of being under the
bar (``prob_below``) leaves it out of the mixture, so its answers are not counted twice.
"""

from __future__ import annotations

import math

import numpy as np

from screener.algorithms import CrowdPrior
from screener.arrays import FloatArray, IntArray
from screener.stats.prior import GridPrior

__all__ = ["TenurePriors"]


class TenurePriors:
    """Priors by age (requests made), from the workers who stayed that long (module docstring)."""

    #: Below this age a worker's remaining work is short and it is judged as any worker is.
    MIN_AGE = 8
    MIN_WORKERS = 5
    REFRESH = 256

    def __init__(self) -> None:
        self._source: GridPrior | None = None
        self._since = 0
        self._ages: FloatArray = np.zeros(0)
        self._likelihood: FloatArray = np.zeros((0, 0))  # flat posteriors, one row per arm
        self._buckets: dict[int, tuple[GridPrior, IntArray]] = {}
        self.version = 0  # changes whenever the priors do (a cache key for stopping tables)

    def grew(self, method: CrowdPrior, ages: FloatArray) -> None:
        """A request was made; ``ages``: every arm's requests so far (arm order)."""
        self._since += 1
        if method.prior is not self._source or self._since >= self.REFRESH:
            self.refresh(method, ages)

    def refresh(self, method: CrowdPrior, ages: FloatArray) -> None:
        """Recompute every worker's posterior from its answers so far; buckets are rebuilt on
        first use."""
        self._source, self._since = method.prior, 0
        counts = method.stats.count
        flat = GridPrior.uniform(method.prior.grid.size)
        self._likelihood = flat.posterior(method.scaled_successes(), counts)
        self._ages = np.asarray(ages, dtype=np.float64)[: counts.size]
        self._buckets = {}
        self.version += 1

    def prior(self, method: CrowdPrior, age: int) -> GridPrior:
        """The prior of a worker who has made ``age`` requests."""
        if self._source is None or age < self.MIN_AGE:
            return method.prior
        return self._bucket(age)[0]

    def prob_below(self, method: CrowdPrior, arm: int, age: int) -> float:
        """P(accuracy below the bar) of worker ``arm`` given its gold answers, under the prior
        of its age with itself left out."""
        count = method.stats.count[arm : arm + 1]
        successes = (method.stats.total[arm : arm + 1] - method.lower * count) / method.width
        if self._source is None or age < self.MIN_AGE:
            return float(method.prior.prob_below(successes, count, method.bar)[0])
        prior, members = self._bucket(age)
        if bool(np.any(members == arm)) and members.size > 1:
            prior = GridPrior(prior.grid, self._em(members[members != arm]))
        return float(prior.prob_below(successes, count, method.bar)[0])

    def _bucket(self, age: int) -> tuple[GridPrior, IntArray]:
        key = int(math.log2(age))
        found = self._buckets.get(key)
        if found is None:
            found = self._buckets[key] = self._mixture(float(2**key))
        return found

    def _mixture(self, age: float) -> tuple[GridPrior, IntArray]:
        assert self._source is not None
        members: IntArray = np.flatnonzero(self._ages > age).astype(np.int64)
        if members.size < self.MIN_WORKERS:
            order = np.argsort(-self._ages, kind="stable")
            members = order[: self.MIN_WORKERS].astype(np.int64)
        if members.size == 0:
            return self._source, members
        return GridPrior(self._source.grid, self._em(members)), members

    def _em(self, members: IntArray) -> FloatArray:
        """One step of the EM for the accuracy distribution of ``members`` from the uniform
        start: the mean of their flat posteriors. (More steps sharpen it towards the grid's
        maximum likelihood, which is overconfident on a few answers each.)"""
        weights: FloatArray = self._likelihood[members].mean(axis=0)
        return weights / float(weights.sum())
