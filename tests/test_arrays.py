"""``screener.arrays.grown``: the one way a per-worker array grows, in amortised O(1)."""

from __future__ import annotations

import numpy as np
import pytest

from screener.arrays import grown


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.bool_, np.int8])
def test_growing_equals_concatenating(dtype: type[np.generic]) -> None:
    rng = np.random.default_rng(0)
    array = np.zeros(3, dtype=dtype)
    expected = array.copy()
    for _ in range(300):
        count = int(rng.integers(1, 4))
        fill = dtype(rng.integers(0, 2))
        array = grown(array, count, fill)
        expected = np.concatenate([expected, np.full(count, fill, dtype=dtype)])
        array[int(rng.integers(array.size))] = dtype(1)  # writes go where reads look
        expected[np.flatnonzero(array != expected)] = dtype(1)
        assert array.dtype == dtype
        np.testing.assert_array_equal(array, expected)


def test_growth_is_amortised_and_copies_a_stale_array() -> None:
    array = np.zeros(0)
    buffers = set()
    for step in range(1, 1001):
        array = grown(array, 1, float(step))
        assert array.base is not None
        buffers.add(id(array.base))
        assert array.base.shape[0] <= 2 * max(step, 8)  # never more than twice the room
    assert len(buffers) <= 12  # capacity doubled about log2(1000) times, not 1000 copies
    stale = array
    newer = grown(array, 2, -1.0)
    copied = grown(stale, 1, 7.0)  # stale: its successor uses the rows after it
    assert newer[-2:].tolist() == [-1.0, -1.0]
    assert copied[-1] == 7.0 and copied.base is not newer.base


def test_rows_of_a_matrix_grow() -> None:
    matrix = np.ones((2, 3))
    for _ in range(20):
        matrix = grown(matrix, 1, 0.0)
    assert matrix.shape == (22, 3)
    assert matrix[:2].sum() == 6.0 and matrix[2:].sum() == 0.0
