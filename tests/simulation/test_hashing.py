"""Counter-based draws: the same (seed, stream, arm, seq) gives the same draw, however asked."""

from __future__ import annotations

import numpy as np

from screener.simulation.hashing import (
    arm_key,
    stream_key,
    uniform1,
    uniform_at,
    uniforms,
    uniforms_keyed,
)


def test_many_seeds_at_once_draw_what_each_seed_draws_alone() -> None:
    rng = np.random.default_rng(3)
    seeds = np.concatenate([np.arange(200), rng.integers(0, 2**62, 50)])  # > a cache's worth
    arms = rng.integers(0, 500, seeds.size)
    seqs = rng.integers(0, 10_000, seeds.size)
    together = uniforms_keyed(seeds, arms, seqs)
    alone = [
        uniforms(int(s), 0, [int(a)], [int(q)])[0]
        for s, a, q in zip(seeds, arms, seqs, strict=True)
    ]
    assert together.tolist() == alone
    batched = uniforms(7, 0, arms, seqs)  # one seed, many draws: the array path
    assert batched.tolist() == [
        uniforms(7, 0, [int(a)], [int(q)])[0] for a, q in zip(arms, seqs, strict=True)
    ]
    assert together.min() >= 0.0 and together.max() < 1.0 and np.unique(together).size == seeds.size


def test_a_draw_on_python_ints_is_the_numpy_draw() -> None:
    """``uniform1`` (and its halves, ``arm_key`` then ``uniform_at``) is ``uniforms`` of one
    pair, bit for bit, for any seed, stream, worker and question number."""
    rng = np.random.default_rng(11)
    for seed in (0, -1, 2**63 + 1, *rng.integers(0, 2**62, 5).tolist()):
        for stream in (0, 21):
            base = stream_key(seed, stream)
            arms = rng.integers(0, 10**6, 40)
            seqs = rng.integers(0, 10**9, 40)
            expected = uniforms(seed, stream, arms, seqs).tolist()
            pairs = list(zip(arms.tolist(), seqs.tolist(), strict=True))
            assert [uniform1(base, a, s) for a, s in pairs] == expected
            assert [uniform_at(arm_key(base, a), s) for a, s in pairs] == expected
