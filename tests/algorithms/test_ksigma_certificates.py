"""The k-sigma algorithms' O(1) certificates change nothing: every ask and the result equal
those of the same algorithm refreshed in full after every answer (its exact activity)."""

from __future__ import annotations

import itertools
import pickle
from typing import Any

import numpy as np
import pytest

from screener.algorithms import (
    IteratedBestArm,
    KSigmaAlgorithm,
    NaiveRoundRobin,
    RoundRobin,
    WeightedRoundRobin,
)
from screener.algorithms.ksigma._certificates import Certificates

CLASSES = (RoundRobin, WeightedRoundRobin, NaiveRoundRobin, IteratedBestArm)


def _exact(cls: type[KSigmaAlgorithm]) -> type[KSigmaAlgorithm]:
    """The same algorithm without certificates: every refresh is the full one."""

    class Exact(cls):  # type: ignore[valid-type,misc]
        def _refresh(self) -> None:
            self._refresh_all()
            self._certificates = None

    return Exact


def _run(algorithm: KSigmaAlgorithm, means: np.ndarray, seed: int, batch: int,
         graded: bool) -> list[Any]:  # fmt: skip
    """Every ask's arms, then the result; answers told one ask late (one batch in flight)."""
    rng = np.random.default_rng(seed)
    record: list[Any] = []
    waiting: tuple[np.ndarray, np.ndarray] | None = None
    for _ in range(3_000):
        ask = algorithm.ask(batch)
        if ask.done:
            break
        if not ask.wait:
            record.append(ask.arms.tolist())
            p = means[ask.arms]
            if graded:
                rewards = rng.beta(10.0 * p, 10.0 * (1.0 - p))
            else:
                rewards = (rng.random(len(ask)) < p).astype(float)
            if waiting is not None:
                algorithm.tell_many(*waiting)
            waiting = (ask.ids, rewards)
        elif waiting is not None:
            algorithm.tell_many(*waiting)
            waiting = None
    record.append(algorithm.result().to_dict())
    return record


def _means(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng([seed, n])
    means = rng.uniform(0.55, 0.9, n)
    means[: max(1, n // 8)] = rng.uniform(0.1, 0.3, max(1, n // 8))
    return means


CASES = list(
    itertools.product(
        CLASSES,
        [(6, 1), (20, 1), (20, 7)],
        [("high", False, 1), ("low", True, 1), ("high", False, 3)],
    )
)


@pytest.mark.slow
@pytest.mark.parametrize(("cls", "shape", "variant"), CASES)
def test_certificates_make_the_same_pulls(
    cls: type[KSigmaAlgorithm], shape: tuple[int, int], variant: tuple[str, bool, int]
) -> None:
    (n, batch), (direction, graded, min_answers) = shape, variant
    params: dict[str, Any] = {
        "k": 1.5,
        "direction": direction,
        "min_answers": min_answers,
        "budget": 1_500,
    }
    for seed in range(2):
        means = _means(n, seed)
        fast = _run(cls(n, seed=seed, **params), means, seed, batch, graded)
        exact = _run(_exact(cls)(n, seed=seed, **params), means, seed, batch, graded)
        assert fast == exact


@pytest.mark.slow
def test_certificates_settle_most_checks_and_a_wrong_margin_shows() -> None:
    """RR one pull at a time computes its exact activity at few asks; certificates off by
    0.02, or theta's lower end anchored 0.01 too high, change the pulls (so the comparison
    above can fail)."""
    exact_activities = 0
    original = RoundRobin._activity

    def counted(self: RoundRobin) -> Any:
        nonlocal exact_activities
        exact_activities += 1
        return original(self)

    means = _means(20, 0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(RoundRobin, "_activity", counted)
        _run(RoundRobin(20, k=1.5, budget=2_500), means, 0, 1, False)
    assert exact_activities < 250  # of 2,500 asks

    init, anchor = Certificates.__init__, Certificates.anchor

    def off(self: Certificates, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self.margin = -0.02

    def low_anchor(self: Certificates, lower_end: float) -> None:
        anchor(self, lower_end + 0.01)

    for name, wrong in (("__init__", off), ("anchor", low_anchor)):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(Certificates, name, wrong)
            differs = [
                _run(cls(20, k=1.5, budget=2_500, seed=seed), _means(20, seed), seed, 1, False)
                != _run(exact(20, k=1.5, budget=2_500, seed=seed), _means(20, seed), seed, 1,
                        False)
                for cls, exact in ((RoundRobin, _exact(RoundRobin)),
                                   (WeightedRoundRobin, _exact(WeightedRoundRobin)))
                for seed in range(3)
            ]  # fmt: skip
        assert any(differs), name


@pytest.mark.parametrize("seed", range(6))
def test_batched_moves_keep_the_sums_of_one_at_a_time(seed: int) -> None:
    """``move_many`` keeps the sums and the drift ``move`` keeps, one worker after another,
    up to rounding far below the margin (and so the same sure answers)."""
    rng = np.random.default_rng(seed)
    n = 20
    means = rng.uniform(0.2, 0.9, n)
    radii = rng.uniform(0.01, 0.3, n)
    one = Certificates(means, means - radii, means + radii, 1.5, 1.0)
    many = Certificates(means, means - radii, means + radii, 1.5, 1.0)
    for _ in range(10):
        moved = rng.choice(n, size=int(rng.integers(1, n + 1)), replace=False)
        old = (means[moved], means[moved] - radii[moved], means[moved] + radii[moved])
        means[moved] = np.clip(means[moved] + rng.normal(0.0, 0.05, moved.size), 0.0, 1.0)
        radii[moved] *= rng.uniform(0.8, 1.0, moved.size)
        new = (means[moved], means[moved] - radii[moved], means[moved] + radii[moved])
        for i, arm in enumerate(moved.tolist()):
            before = (float(old[0][i]), float(old[1][i]), float(old[2][i]))
            one.move(arm, before, (float(new[0][i]), float(new[1][i]), float(new[2][i])))
        many.move_many(moved, old, new)
        np.testing.assert_allclose(many._sums, one._sums, rtol=1e-12, atol=1e-12)
        assert many._drift == pytest.approx(one._drift, rel=1e-12, abs=1e-15)
        assert many._known() == pytest.approx(one._known(), rel=1e-12)
        assert many.stale == one.stale


def test_pickled_certificates_keep_one_copy_of_the_vertices_side() -> None:
    """A snapshot stores which vertex each worker's ends go to once (``_rising``); the
    restored certificates move a batch as the original does."""
    rng = np.random.default_rng(3)
    n = 12
    means = rng.uniform(0.2, 0.9, n)
    radii = rng.uniform(0.01, 0.3, n)
    original = Certificates(means, means - radii, means + radii, 2.0, 1.0)
    assert "_rising_mask" not in original.__getstate__()
    back = pickle.loads(pickle.dumps(original))
    moved = np.array([1, 4, 7])
    old = (means[moved], means[moved] - radii[moved], means[moved] + radii[moved])
    new = (old[0] + 0.01, old[1] + 0.02, old[2])
    for certificates in (original, back):
        certificates.move_many(moved, old, new)
    assert back._sums == original._sums
    assert back._known() == original._known()
