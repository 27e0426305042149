"""Anytime change detection against a bar: has a worker's accuracy fallen below it?

A worker who passed screening may change (tire, turn to spam). ``ChangeDetector`` watches
each worker's later answers (rewards in [0, 1]) and raises an alarm once they are strong
evidence that the worker's accuracy has, at some point, fallen below ``bar``.

Construction: the e-CUSUM e-detector of Shin, Ramdas and Rinaldo (2023, "E-detectors: a
nonparametric framework for sequential change detection", Section 3). For a bet ``lam`` in
``(0, 1 / (1 - bar))`` the factor ``1 + lam (bar - x)`` is positive for every x in [0, 1]
and has expectation at most 1 whenever the answer's conditional mean is at least ``bar``
(the null, "no change yet"). The e-CUSUM statistic ``M_t = max(M_{t-1}, 1) (1 + lam (bar -
x_t))`` is the largest product of factors over the possible change points, and the
detector mixes a few bets with weights summing to 1: ``M_t = sum_k w_k M_t(lam_k)``; an alarm
is raised when ``M_t >= 1 / alpha``.

Promise (false alarms): while every answer's conditional mean stays at least ``bar``, (a) the
alarm comes after ``1 / alpha`` answers or later on average (the e-detector bound, Shin et al.
Theorem 3.3: its average run length is at least ``1 / alpha``); (b) an alarm within a
worker's first H answers has probability at most ``H alpha``: an alarm means that for some
start s, the mixture of products from s on reached ``1 / alpha``, and each such mixture is a
nonnegative supermartingale started at 1 (Ville's inequality), so a union over the H starts.

Delay (detection): once a worker answers with accuracy p1 < bar, the expected number of its
answers until the alarm is at most ``(log(1 / (alpha w_k)) + log(1 + lam_k bar)) / g_k(p1)``
for every bet k with positive drift ``g_k(p1) = E[log(1 + lam_k (bar - X))]`` (Wald's
identity for the k-th statistic alone, started at or above 1 whatever happened before the
change, with its largest overshoot; the mixture alarms no later than any one of its terms at
its weighted level). ``expected_delay`` computes it for 0/1 answers.

Bets: by default one per alternative accuracy ``bar - d`` for d in ``DROPS``, each the
growth-optimal (Kelly) bet against that alternative for 0/1 answers, ``lam = (bar - p1) /
(bar (1 - bar))``, equally weighted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from screener.arrays import FloatArray, grown

__all__ = ["DROPS", "ChangeDetector", "kelly_bet"]


#: Accuracy drops below the bar the default bets are tuned to (one bet each).
DROPS: tuple[float, ...] = (0.1, 0.25, 0.45)


def kelly_bet(bar: float, alternative: float) -> float:
    """The growth-optimal bet ``lam`` against accuracy ``alternative`` < ``bar`` for 0/1
    answers: maximises ``E[log(1 + lam (bar - X))]`` with X ~ Bernoulli(alternative).

    Examples
    --------
    >>> round(kelly_bet(0.6, 0.5), 4)
    0.4167
    """
    if not 0.0 < alternative < bar < 1.0:
        raise ValueError(f"need 0 < alternative < bar < 1, got {alternative}, {bar}")
    return (bar - alternative) / (bar * (1.0 - bar))


class ChangeDetector:
    """Per-worker e-CUSUM detectors of a fall below ``bar`` (see the module docstring).

    Workers are rows, added with ``add``; ``update(row, reward)`` returns True when the row's
    alarm rises (at that answer). ``restart(row)`` forgets a row's past (after a reopened
    screening, say).

    Examples
    --------
    >>> detector = ChangeDetector(0.6, alpha=0.01)
    >>> row = detector.add()
    >>> [detector.update(row, 1.0) for _ in range(20)].count(True)  # a good worker
    0
    >>> alarms = [detector.update(row, 0.0) for _ in range(40)]  # then all wrong
    >>> alarms.index(True) + 1 <= detector.expected_delay(0.0)
    True
    """

    def __init__(
        self,
        bar: float,
        *,
        alpha: float = 0.001,
        bets: Sequence[float] | None = None,
    ) -> None:
        if not 0.0 < bar < 1.0:
            raise ValueError(f"the bar must lie in (0, 1), got {bar}")
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
        if bets is None:
            bets = [kelly_bet(bar, bar - d) for d in DROPS if bar - d > 0.0]
            bets = bets or [kelly_bet(bar, bar / 2.0)]
        lams = np.asarray(bets, dtype=np.float64)
        if lams.size == 0 or not bool(np.all((lams > 0.0) & (lams < 1.0 / (1.0 - bar)))):
            raise ValueError(f"bets must lie in (0, {1.0 / (1.0 - bar):g})")
        self.bar = float(bar)
        self.alpha = float(alpha)
        self.lams: FloatArray = lams
        self.log_weights: FloatArray = np.full(lams.size, -math.log(lams.size))
        self._log_threshold = math.log(1.0 / alpha)
        self._log_m = np.zeros((0, lams.size))  # log M_t(lam_k) per row

    @property
    def rows(self) -> int:
        return int(self._log_m.shape[0])

    def add(self) -> int:
        """A new worker's row (no evidence yet)."""
        self._log_m = grown(self._log_m, 1, 0.0)
        return self.rows - 1

    def restart(self, row: int) -> None:
        self._log_m[row] = 0.0

    def update(self, row: int, reward: float) -> bool:
        """Take one answer of ``row`` (reward in [0, 1]); True when the alarm rises."""
        if not 0.0 <= reward <= 1.0:
            raise ValueError(f"rewards must lie in [0, 1], got {reward}")
        log_m = np.maximum(self._log_m[row], 0.0) + np.log1p(self.lams * (self.bar - reward))
        self._log_m[row] = log_m
        return self.log_statistic(row) >= self._log_threshold

    def log_statistic(self, row: int) -> float:
        """log of the mixture ``sum_k w_k M_t(lam_k)`` of ``row``."""
        terms = self._log_m[row] + self.log_weights
        top = float(terms.max())
        return top + math.log(float(np.exp(terms - top).sum()))

    def expected_delay(self, accuracy: float) -> float:
        """The bound on the expected answers to an alarm once a worker answers 0/1 with
        ``accuracy`` (module docstring, "Delay"); inf when no bet has positive drift."""
        p = float(accuracy)
        lams = self.lams
        drift = p * np.log1p(lams * (self.bar - 1.0)) + (1.0 - p) * np.log1p(lams * self.bar)
        level = self._log_threshold - self.log_weights + np.log1p(lams * self.bar)
        with np.errstate(divide="ignore"):
            delays = np.where(drift > 0.0, level / np.where(drift > 0.0, drift, 1.0), np.inf)
        return float(delays.min())
