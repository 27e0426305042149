"""The k-sigma instance generator of the benchmarks keeps its promises."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.instances import (
    InstanceError,
    ksigma_instance,
    ksigma_threshold,
)
from screener.simulation import ksigma_outliers

CASES = [(20, 2.0), (50, 2.5), (100, 3.0), (200, 2.0), (200, 3.0)]


@pytest.mark.parametrize(("n", "k"), CASES)
@pytest.mark.parametrize("seed", [0, 1, 9])
def test_guarantees(n: int, k: float, seed: int) -> None:
    means = ksigma_instance(n, k, seed)
    assert means.shape == (n,)
    assert np.all((means >= 0.0) & (means <= 1.0))
    theta = ksigma_threshold(means, k)
    assert theta == pytest.approx(means.mean() + k * means.std(ddof=0))
    outliers = ksigma_outliers(means, k)
    assert 1 <= len(outliers) <= max(1, n // 20)
    assert np.abs(means - theta).min() >= 0.05


@pytest.mark.parametrize(("n", "k"), CASES)
def test_deterministic_per_seed(n: int, k: float) -> None:
    first = ksigma_instance(n, k, 3)
    np.testing.assert_array_equal(first, ksigma_instance(n, k, 3))
    assert not np.array_equal(first, ksigma_instance(n, k, 4))


def test_streams_differ_across_configurations() -> None:
    assert not np.array_equal(ksigma_instance(20, 2.0, 0), ksigma_instance(20, 3.0, 0))


def test_custom_gap_holds() -> None:
    means = ksigma_instance(50, 2.0, 0, min_gap=0.1)
    assert np.abs(means - ksigma_threshold(means, 2.0)).min() >= 0.1


def test_impossible_constraints_raise() -> None:
    # One outlier among 20 arms has a z-score of at most (n - 1) / sqrt(n) ~ 4.25 < 5.
    with pytest.raises(InstanceError):
        ksigma_instance(20, 5.0, 0, max_tries=200)
