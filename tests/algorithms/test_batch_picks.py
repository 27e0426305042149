"""Batch picks made cheaply (issue 54): the heap's pushpop against picking the smallest pair
each time, and Opt-KG's lattice, walked on from pick to pick, against walks from the start
and against the general path's keys."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from screener.algorithms.thresholding import OptKG
from screener.algorithms.thresholding._scheduler import heap_picks
from screener.algorithms.thresholding.opt_kg import _Lattice, _steps


def _smallest_each_time(
    keys: dict[int, float], limit: int, next_key: dict[tuple[int, int], float]
) -> list[int]:
    """The reference: ``limit`` times, the smallest (key, worker) among the finite keys."""
    keys, picked = dict(keys), {arm: 0 for arm in keys}
    picks: list[int] = []
    while len(picks) < limit:
        finite = [(key, arm) for arm, key in keys.items() if key < math.inf]
        if not finite:
            break
        arm = min(finite)[1]
        picks.append(arm)
        picked[arm] += 1
        keys[arm] = next_key[arm, picked[arm]]
    return picks


@pytest.mark.parametrize("seed", range(40))
def test_heap_picks_take_the_smallest_pair_each_time(seed: int) -> None:
    # Ties (keys on a grid of 4), infinite keys, keys that fall as well as rise.
    rng = np.random.default_rng(seed)
    n, limit = int(rng.integers(1, 8)), int(rng.integers(1, 30))
    start = rng.integers(0, 4, n).astype(np.float64)
    start[rng.random(n) < 0.2] = math.inf
    later = {(arm, picked): float(rng.integers(-2, 6)) for arm in range(n)
             for picked in range(1, limit + 1)}  # fmt: skip
    for key in rng.choice(len(later), size=len(later) // 6, replace=False).tolist():
        later[list(later)[key]] = math.inf
    arms = np.sort(rng.permutation(n + 3)[:n]).astype(np.int64)  # ids ascending, as given
    by_id = {int(arm): float(key) for arm, key in zip(arms, start, strict=True)}
    next_by_id = {(int(arms[arm]), picked): key for (arm, picked), key in later.items()}
    picks = heap_picks(arms, start, limit, lambda arm, picked: next_by_id[arm, picked])
    assert picks.tolist() == _smallest_each_time(by_id, limit, next_by_id)


@pytest.mark.parametrize("bar", [0.5, 0.37])
def test_the_lattice_walks_on_to_the_states_a_walk_from_the_start_reaches(bar: float) -> None:
    # Growing requests (a batch's lies on one worker) and arbitrary ones (back to the start).
    rng = np.random.default_rng(int(bar * 100))
    start = (40.0, 37.0, -0.0123, 0.0625)
    lattice = _Lattice(bar, start)
    wins = losses = 0
    for step in range(300):
        if step % 50 == 49:
            wins, losses = int(rng.integers(0, 20)), int(rng.integers(0, 20))
        else:
            wins += int(rng.random() < 0.5)
            losses += int(rng.random() < 0.5)
        assert lattice.at(wins, losses) == _steps(bar, start, wins, losses), (wins, losses)


def _general_picks(alg: OptKG, limit: int) -> list[int]:
    """The heap over every key by the general path (lean from the continued fraction)."""
    a_all, b_all = alg.posterior()
    in_flight = alg.pending.tolist()

    def key(arm: int, lies: float) -> float:
        a, b = float(a_all[arm]), float(b_all[arm])
        if lies > 0:
            a, b = a + lies * a / (a + b), b + lies * b / (a + b)
        return -alg._log_gain(a, b, alg._exact_lean(a, b), alg._log_density(a, b))

    arms = np.flatnonzero(alg.available)
    keys = np.array([key(arm, float(in_flight[arm])) for arm in arms.tolist()])
    picked = heap_picks(arms, keys, limit, lambda arm, more: key(arm, float(in_flight[arm] + more)))
    return [int(arm) for arm in picked]


@pytest.mark.parametrize("seed", range(6))
def test_opt_kg_batches_pick_by_the_general_paths_keys(seed: int) -> None:
    # Batches on workers near the bar (the same worker picked many times over: its lattice
    # walked on), with answers in flight, released pulls retried, and none in flight.
    rng = np.random.default_rng(seed)
    means = rng.uniform(0.35, 0.65, 8)
    alg = OptKG(8, threshold=0.5 if seed % 2 else 0.45, budget=4000)
    outstanding: dict[int, float] = {}
    compared = 0
    while compared < 60:
        limit = int(rng.choice([2, 8, 20, 40]))
        # Retried pulls go first and count as in flight for the rest (``ask``'s rule).
        reference = copy.deepcopy(alg)
        reference._ensure_fresh()
        retried = [reference._retry.popleft() for _ in range(min(limit, len(alg._retry)))]
        np.add.at(reference.pending, retried, 1)
        expected = retried + (
            _general_picks(reference, limit - len(retried)) if limit > len(retried) else []
        )
        ask = alg.ask(limit)
        if ask.done or ask.wait:
            break
        assert ask.arms.tolist() == expected
        compared += 1
        draws = (rng.random(len(ask)) < means[ask.arms]).astype(float)
        outstanding.update(zip(ask.ids.tolist(), draws.tolist(), strict=True))
        if rng.random() < 0.25:  # one pull released, to be retried: maybe the only one out
            alg.release(next(iter(outstanding)))
            outstanding.pop(next(iter(outstanding)))
        ids = [i for i in outstanding if rng.random() < (1.0 if seed % 2 == 0 else 0.6)]
        alg.tell_many(ids, [outstanding.pop(i) for i in ids])
    assert compared == 60
