"""EBHSet, the e-BH set kept as values change, against ``e_bh`` on the whole array after every
change: random values, ties at the cuts, infinite values, values leaving and coming back, the
long descent's fallback, pickles; and ``between`` naming every hypothesis that moved."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from screener.stats import e_bh
from screener.stats.ebh_set import _MOST_STEPS, EBHSet


def members(ebh: EBHSet, n: int) -> list[bool]:
    return [ebh.contains(i) for i in range(n)]


def check(ebh: EBHSet, values: np.ndarray) -> None:
    """After ``solve``, the set is ``e_bh``'s on the same values, bit for bit."""
    ebh.solve()
    expected = e_bh(values, ebh.q).tolist()
    assert members(ebh, values.size) == expected
    assert ebh.k == sum(expected)


def draw(rng: np.random.Generator, n: int, q: float) -> float:
    """An e-value: often 0 or 1, often right at a cut n / (q k), sometimes huge or inf."""
    kind = rng.integers(6)
    if kind == 0:
        return 0.0
    if kind == 1:
        return float(n / (q * int(rng.integers(1, n + 1))))  # exactly at a cut
    if kind == 2:
        return math.inf if rng.random() < 0.2 else float(np.exp(rng.uniform(0, 40)))
    return float(np.exp(rng.normal(math.log(1 / q), 1.5)))


@pytest.mark.parametrize("seed", range(40))
def test_the_kept_set_is_e_bh_after_every_change(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    q = float(rng.choice([0.05, 0.1, 0.3, 0.9]))
    ebh = EBHSet(n, q)
    values = np.zeros(n)
    for _ in range(300):
        i = int(rng.integers(n))
        before, old_cut = members(ebh, n), ebh.threshold
        if rng.random() < 0.15:
            values[i] = 0.0
            ebh.enter(i, None)
        else:
            values[i] = draw(rng, n, q)
            ebh.enter(i, float(values[i]))
        check(ebh, values)
        # ``between`` the old and new cut, with the one moved, names every member that moved.
        moved = set(ebh.between(old_cut, ebh.threshold)) | {i}
        after = members(ebh, n)
        assert {j for j in range(n) if before[j] != after[j]} <= moved
        if rng.random() < 0.05:
            ebh = pickle.loads(pickle.dumps(ebh))
            assert members(ebh, n) == after


def test_a_long_staircase_falls_back_to_one_pass() -> None:
    # Value i just under the cut of k = i + 1: P(k) = k - 1 for every k, so the descent would
    # take one step per value; past _MOST_STEPS the pass finishes (k* = 0). One more value at
    # the top (inf) makes every k qualify, and the set takes everything.
    n, q = 4 * _MOST_STEPS, 0.5
    ebh = EBHSet(n, q)
    values = np.zeros(n)
    for i in range(n - 1):
        values[i] = np.nextafter(n / (q * (i + 1)), 0.0)
        ebh.enter(i, float(values[i]))
    check(ebh, values)
    assert ebh.k == 0
    values[n - 1] = math.inf
    ebh.enter(n - 1, math.inf)
    check(ebh, values)
    assert ebh.k == n


def test_values_under_the_smallest_cut_are_not_candidates() -> None:
    ebh = EBHSet(10, 0.1)  # the smallest cut: 10 / (0.1 * 10) = 10
    ebh.enter(0, 9.999)
    ebh.enter(1, 10.0)
    assert len(ebh) == 1 and ebh.value(0) is None and ebh.value(1) == 10.0
    assert ebh.solve() == 0  # 10 < 100 = n / (q 1)
    ebh.enter(1, 100.0)
    assert ebh.solve() == 1 and ebh.contains(1) and not ebh.contains(0)


def test_no_hypotheses() -> None:
    ebh = EBHSet(0, 0.1)
    assert ebh.solve() == 0 and ebh.threshold is None and list(ebh.between(None, None)) == []


def test_q_outside_0_1_is_refused() -> None:
    with pytest.raises(ValueError, match="q must lie"):
        EBHSet(3, 0.0)
