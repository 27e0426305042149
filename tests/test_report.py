"""The ranked table: threshold line, shared long reasons as notes, every worker once."""

from __future__ import annotations

import numpy as np

from screener import BernoulliRewards, WeightedRoundRobin, simulate
from screener.algorithms.thresholding import LSA, ConfidentThresholding
from screener.pool import synthetic_pool
from screener.report import render_table

POOL = synthetic_pool(8, 1, seed=5)


def _means() -> np.ndarray:
    return np.asarray(POOL.require_accuracies())


def test_a_given_bar_is_shown_as_given_and_long_shared_reasons_become_notes() -> None:
    result = simulate(LSA(len(POOL), threshold=0.8, budget=200), BernoulliRewards(_means(), 3))
    text = render_table(result, POOL)
    assert "threshold: 0.800 (given)" in text
    rows = [line for line in text.splitlines() if line[:4].strip().isdigit()]
    assert len(rows) == len(POOL)
    # Every worker has the same long reason: printed once, as note [1], under the table.
    reason = result.workers[0].reason
    assert len(reason) > 60 and all(w.reason == reason for w in result.workers)
    assert all(row.endswith("[1]") for row in rows)
    assert text.count(reason) == 1 and text.splitlines()[-1] == f"[1] {reason}"


def test_short_or_unique_reasons_stay_in_their_row() -> None:
    algorithm = ConfidentThresholding(len(POOL), threshold=0.8, delta=0.1, budget=60)
    result = simulate(algorithm, BernoulliRewards(_means(), 1))
    text = render_table(result, POOL).splitlines()
    reasons = [w.reason for w in result.ranking]
    shared_long = [r for r in dict.fromkeys(reasons) if reasons.count(r) > 1 and len(r) > 60]
    assert any(len(r) <= 60 for r in reasons)  # the case under test is present
    rows = text[text.index(next(t for t in text if t.startswith("rank"))) + 1 :]
    for row, reason in zip(rows, reasons, strict=False):
        expected = f"[{shared_long.index(reason) + 1}]" if reason in shared_long else reason
        assert row.endswith(expected), (row, expected)
    notes = [line for line in text if line.startswith("[")]
    assert notes == [f"[{i}] {r}" for i, r in enumerate(shared_long, start=1)]


def test_an_estimated_threshold_is_shown_with_its_interval() -> None:
    algorithm = WeightedRoundRobin(len(POOL), k=1.5, delta=0.1, direction="low")
    result = simulate(algorithm, BernoulliRewards(_means(), 2))
    text = render_table(result, POOL)
    assert result.threshold is not None
    t = result.threshold
    assert f"threshold: {t.estimate:.3f}  interval [{t.lower:.3f}, {t.upper:.3f}]" in text
    assert "(given)" not in text
