"""The Bayes-optimal stopping rule for screening one worker under a crowd prior: ask another
gold question, ban or accept, at every (correct, wrong) answer count, by backward induction."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from screener.arrays import FloatArray, IntArray
from screener.stats.prior.beta import PriorSet
from screener.stats.prior.grid import GridPrior, grid_key, grid_log_likelihood, normalise_rows

__all__ = ["StoppingCosts", "StoppingTable", "first_actions", "stopping_table"]


@dataclass(frozen=True)
class StoppingCosts:
    """What a requester pays: one gold question, one good worker banned, one bad worker kept."""

    question: float
    false_ban: float
    missed_bad: float


@dataclass(frozen=True)
class StoppingTable:
    """The Bayes-optimal action at every (correct, wrong) answer count up to the horizon.

    ``action[s, f]``: CONTINUE (ask another question), BAN or ACCEPT; ``cost[s, f]``: the
    expected cost still to come from that state under the prior (questions plus mistakes).
    """

    action: NDArray[np.int8]
    cost: FloatArray
    horizon: int

    CONTINUE = 0
    BAN = 1
    ACCEPT = 2

    def lookup(
        self, successes: ArrayLike, counts: ArrayLike
    ) -> tuple[NDArray[np.int8], FloatArray]:
        """Action and expected cost to come for workers at these counts (fractional
        successes of graded answers are rounded to the nearest lattice point)."""
        n = np.minimum(np.asarray(counts, dtype=np.int64), self.horizon)
        s = np.clip(np.rint(np.asarray(successes, dtype=np.float64)).astype(np.int64), 0, n)
        return self.action[s, n - s], self.cost[s, n - s]


def stopping_table(
    prior: GridPrior,
    bar: float,
    costs: StoppingCosts,
    *,
    horizon: int,
    min_answers: int = 1,
    ban_from: float = 0.0,
) -> StoppingTable:
    """Backward induction over the answer lattice (Wald and Wolfowitz 1948; DeGroot 1970,
    Ch. 12): at (s correct, f wrong), stopping costs ``P(good | s, f) * false_ban`` (ban) or
    ``P(bad | s, f) * missed_bad`` (accept); asking costs ``question`` plus the expected cost
    of the state the next answer leads to, whose probability of being correct is the posterior
    mean. At ``horizon`` answers the worker must be decided; before ``min_answers`` it must not.
    ``ban_from``: a ban is open only where ``P(bad | s, f) >= ban_from`` (a posterior-mode
    promise; elsewhere stopping keeps the worker), 0 for no such limit.
    """
    return _stopping_table(
        grid_key(prior.grid), grid_key(prior.weights), _float_key(bar), costs,
        _float_key(costs.question, costs.false_ban, costs.missed_bad), horizon, min_answers,
        _float_key(ban_from),
    )  # fmt: skip


def _float_key(*values: float) -> bytes:
    """Floats as their float64 bytes: a cache key that tells 0.0 from -0.0."""
    return np.array(values, dtype=np.float64).tobytes()


@functools.lru_cache(maxsize=256)
def _stopping_table(
    grid_bytes: bytes,
    weights_bytes: bytes,
    bar_bytes: bytes,
    costs: StoppingCosts,
    costs_bytes: bytes,
    horizon: int,
    min_answers: int,
    ban_from_bytes: bytes,
) -> StoppingTable:
    """``stopping_table`` on its inputs as float64 bytes (``costs_bytes``: the costs' own,
    which key the cache exactly): a refit often gives the prior of an earlier one, and runs
    differing in their costs alone fit the same priors. Kept, read-only."""
    p_bad, p_correct = _posterior_summary(grid_bytes, weights_bytes, bar_bytes, horizon)
    ban_from = float(np.frombuffer(ban_from_bytes, dtype=np.float64)[0])
    successes, counts, _ = _lattice(grid_bytes, horizon)
    action, cost = _backward_induction(p_bad, p_correct, costs, horizon, min_answers, ban_from)
    table_action = np.zeros((horizon + 1, horizon + 1), dtype=np.int8)
    table_cost = np.full((horizon + 1, horizon + 1), np.inf)
    table_action[successes, counts - successes] = action[:, 0]
    table_cost[successes, counts - successes] = cost[:, 0]
    for array in (table_action, table_cost):
        array.flags.writeable = False
    return StoppingTable(table_action, table_cost, horizon)


@functools.lru_cache(maxsize=256)
def _posterior_summary(
    grid_bytes: bytes, weights_bytes: bytes, bar_bytes: bytes, horizon: int
) -> tuple[FloatArray, FloatArray]:
    """At every lattice point (``_lattice``'s order), the posterior probability of lying
    below the bar and of a correct next answer (columns of one prior): what the backward
    induction needs of the prior, the same whatever the costs. Kept, read-only."""
    grid = np.frombuffer(grid_bytes, dtype=np.float64)
    weights = np.frombuffer(weights_bytes, dtype=np.float64)
    bar = float(np.frombuffer(bar_bytes, dtype=np.float64)[0])
    _, _, log_lik = _lattice(grid_bytes, horizon)
    posterior = normalise_rows(log_lik, weights)
    p_bad = posterior[:, grid < bar].sum(axis=1)[:, None]
    p_correct = (posterior @ grid)[:, None]
    for array in (p_bad, p_correct):
        array.flags.writeable = False
    return p_bad, p_correct


def first_actions(
    priors: PriorSet, bar: float, costs: StoppingCosts, *, horizon: int
) -> NDArray[np.int8]:
    """The Bayes-optimal action before any answer (``stopping_table(...).action[0, 0]`` with
    no minimum) under each prior of ``priors``, in one backward induction for them all."""
    likelihood, likelihood_below, likelihood_correct = _scaled_likelihood(
        grid_key(priors.grid), horizon, _float_key(bar)
    )
    total = likelihood @ priors.weights
    below = priors.grid < bar
    p_bad = (likelihood_below @ priors.weights[below]) / total
    p_correct = (likelihood_correct @ priors.weights) / total
    action, _ = _backward_induction(p_bad, p_correct, costs, horizon, 0)
    return np.asarray(action[0])


@functools.lru_cache(maxsize=8)
def _lattice(grid_bytes: bytes, horizon: int) -> tuple[IntArray, IntArray, FloatArray]:
    """The answer lattice in diagonal order (count n = 0..horizon, then successes s = 0..n):
    each point's s, n and log-likelihood on the grid (given as its bytes: the same grid and
    horizon at every refit of a run, so kept, read-only)."""
    grid = np.frombuffer(grid_bytes, dtype=np.float64)
    counts = np.repeat(np.arange(horizon + 1), np.arange(1, horizon + 2))
    successes = np.arange(counts.size) - counts * (counts + 1) // 2
    log_lik = grid_log_likelihood(grid, successes, counts)
    for array in (counts, successes, log_lik):
        array.flags.writeable = False
    return successes, counts, log_lik


@functools.lru_cache(maxsize=8)
def _scaled_likelihood(
    grid_bytes: bytes, horizon: int, bar_bytes: bytes
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The lattice's likelihood on the grid, each point's row scaled to a largest value of 1;
    its columns below the bar; and it times the grid (for the chance of a correct answer).
    The same at every call of a run, so kept, read-only."""
    grid = np.frombuffer(grid_bytes, dtype=np.float64)
    bar = float(np.frombuffer(bar_bytes, dtype=np.float64)[0])
    _, _, log_lik = _lattice(grid_bytes, horizon)
    likelihood = np.exp(log_lik - log_lik.max(axis=1, keepdims=True))
    parts = (likelihood, likelihood[:, grid < bar], likelihood * grid)
    for array in parts:
        array.flags.writeable = False
    return parts


def _backward_induction(
    p_bad: FloatArray,
    p_correct: FloatArray,
    costs: StoppingCosts,
    horizon: int,
    min_answers: int,
    ban_from: float = 0.0,
) -> tuple[NDArray[np.int8], FloatArray]:
    """Actions and costs to come at every lattice point (rows in ``_lattice``'s diagonal
    order), for each prior of the last axis of the posteriors ``p_bad`` and ``p_correct``.
    From (s, n), a correct answer leads to point s + 1 of diagonal n + 1 and a wrong one to
    point s: slices of the next diagonal."""
    ban = np.where(p_bad >= ban_from, (1.0 - p_bad) * costs.false_ban, np.inf)
    accept = p_bad * costs.missed_bad
    cost = np.minimum(ban, accept)  # stopping; at the horizon the worker must be decided
    action = np.where(ban <= accept, StoppingTable.BAN, StoppingTable.ACCEPT).astype(np.int8)
    wrong = 1.0 - p_correct
    go_on = np.empty_like(cost[: horizon + 1])
    term = np.empty_like(go_on)
    for n in range(horizon - 1, -1, -1):
        here = slice(n * (n + 1) // 2, (n + 1) * (n + 2) // 2)
        after = (n + 1) * (n + 2) // 2  # where diagonal n + 1 starts
        ask, wrong_term = go_on[: n + 1], term[: n + 1]
        # question + right * cost(s + 1, n + 1) + (1 - right) * cost(s, n + 1), in that order
        np.multiply(p_correct[here], cost[after + 1 : after + n + 2], out=ask)
        np.add(ask, costs.question, out=ask)
        np.multiply(wrong[here], cost[after : after + n + 1], out=wrong_term)
        np.add(ask, wrong_term, out=ask)
        if n < min_answers:
            cost[here] = ask
            action[here] = StoppingTable.CONTINUE
        else:  # cost and action still hold stopping's here: replace them where asking is cheaper
            keep_asking = ask < cost[here]
            np.copyto(cost[here], ask, where=keep_asking)
            np.copyto(action[here], StoppingTable.CONTINUE, where=keep_asking)
    return action, cost
