"""Looked-up mixture values equal the direct computation, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from screener.stats.confseq import mixture
from screener.stats.tables import BLOCK, CountTable, PairTable


def _pairs(seed: int, size: int, top: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, top, size).astype(np.float64)
    sums = np.floor(rng.uniform(0.0, 1.0, size) * (counts + 1.0)).clip(0.0, counts)
    return sums, counts


@pytest.mark.parametrize("alpha", [0.001, 0.05 / 7])
def test_mixture_lookups_equal_direct_calls(alpha: float) -> None:
    sums, counts = _pairs(1, 5_000, 1_500)  # counts beyond the table's rows too
    sums[:200] = np.minimum(sums[:200] + 0.25, counts[:200])  # graded sums: computed directly
    low, high = mixture.mixture_bounds(sums, counts, alpha)
    direct_low, direct_high = mixture._mixture_interval(sums, counts, alpha, mixture.JEFFREYS)
    np.testing.assert_array_equal(low, direct_low)
    np.testing.assert_array_equal(high, direct_high)
    budget = mixture.mixture_log_inverse(sums, counts, alpha)
    (direct,) = mixture._mixture_budget(sums, counts, alpha, mixture.JEFFREYS)
    np.testing.assert_array_equal(budget, direct)
    radius = mixture.mixture_radius(counts, alpha)
    np.testing.assert_array_equal(radius, mixture._pinsker_radius(counts, alpha, mixture.JEFFREYS))
    for index in range(0, 5_000, 97):  # one answer's lookup: the scalar path
        one = mixture.mixture_bounds(sums[index : index + 1], counts[index : index + 1], alpha)
        assert (one[0][0], one[1][0]) == (low[index], high[index])


def test_a_table_fills_a_block_once_it_is_asked_for_enough() -> None:
    calls: list[int] = []

    def count_sum(sums: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        calls.append(sums.size)
        return sums + 1000.0 * counts, -sums

    table = PairTable(count_sum, 2, limit=100)
    block_0 = sum(t + 1 for t in range(BLOCK))  # pairs of counts 0..31
    for _ in range(-(-block_0 // 15) - 1):  # scalar misses (15 pairs' worth each) not enough
        assert table.known(2.0, 3.0) is None
    assert calls == []
    assert table.known(2.0, 3.0) == (3002.0, -2.0)  # now the block is filled, in one call
    assert calls == [block_0]
    values, negated = table(np.array([2.0, 5.0, 7.5, 3.0]), np.array([3.0, 40.0, 9.0, 200.0]))
    assert values.tolist() == [3002.0, 40005.0, 9007.5, 200003.0]
    assert negated.tolist() == [-2.0, -5.0, -7.5, -3.0]
    assert calls[1:] == [3]  # 40 (block 1 missed once only), 7.5 (graded), 200 (past)
    sums, counts = _pairs(2, 3_000, 100)
    np.testing.assert_array_equal(table(sums, counts)[0], sums + 1000.0 * counts)
    assert len(calls) < 8  # blocks 1 to 3 filled along the way (a call's miss: 300 pairs)


def test_a_count_table_grows_and_computes_the_rest_directly() -> None:
    table = CountTable(lambda t: t * t, limit=1_000)
    counts = np.array([[3.0, 0.0], [2_000.0, 2.5]])
    np.testing.assert_array_equal(table(counts), counts * counts)
    np.testing.assert_array_equal(table(np.arange(1_001.0)), np.arange(1_001.0) ** 2)


def test_an_empty_lookup_finds_nothing_before_any_fill() -> None:
    # A plan's step whose runs have no sampled worker asks for no pairs at all.
    table = PairTable(lambda sums, counts: (sums + counts,), 1, limit=100)
    values, found = table.lookup(np.empty(0), np.empty(0))
    assert values.shape == (1, 0)
    assert found.size == 0
    (direct,) = table(np.empty(0), np.empty(0))
    assert direct.size == 0
