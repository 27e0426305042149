"""Counter-based draws: the same (seed, stream, arm, seq) gives the same draw, however asked."""

from __future__ import annotations

import numpy as np

from screener.simulation.hashing import uniforms, uniforms_keyed


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
