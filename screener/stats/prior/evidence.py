"""Crowd evidence from outside a run, compact: the distinct (successes, answers) pairs of a
group of workers, each with how many workers hold it. A crowd prior's fit needs no more of a
worker than its pair, so a shard of a pool publishes its workers this way and the other
shards fit on the sum (``screener.gate_service.pool``).

Examples
--------
>>> import numpy as np
>>> pairs = evidence_pairs(np.array([2.0, 2.0, 1.0, 0.0]), np.array([3, 3, 1, 0]))
>>> pairs
[(1.0, 1, 1), (2.0, 3, 2)]
>>> successes, counts = expand_pairs(pairs)
>>> successes.tolist(), counts.tolist()
([1.0, 2.0, 2.0], [1, 3, 3])
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from screener.arrays import FloatArray, IntArray
from screener.errors import ConfigError

__all__ = ["Pairs", "add_pairs", "check_outside", "evidence_pairs", "expand_pairs"]

#: (successes on [0, 1] summed, answers, workers holding that pair), sorted.
Pairs = list[tuple[float, int, int]]


def evidence_pairs(successes: FloatArray, counts: IntArray) -> Pairs:
    """The distinct (successes, answers) of workers with at least one answer, counted."""
    answered = counts > 0
    held = Counter(zip(successes[answered].tolist(), counts[answered].tolist(), strict=True))
    return sorted((float(s), int(n), w) for (s, n), w in held.items())


def add_pairs(groups: Iterable[Sequence[tuple[float, int, int]]]) -> Pairs:
    """The evidence of several groups together (the other shards' sum)."""
    total: Counter[tuple[float, int]] = Counter()
    for pairs in groups:
        for successes, answers, workers in pairs:
            total[float(successes), int(answers)] += int(workers)
    return sorted((s, n, w) for (s, n), w in total.items())


def expand_pairs(pairs: Sequence[tuple[float, int, int]]) -> tuple[FloatArray, IntArray]:
    """One (successes, answers) row per worker, as a crowd prior's fit takes them."""
    workers = np.array([w for _, _, w in pairs], dtype=np.int64)
    successes = np.repeat(np.array([s for s, _, _ in pairs], dtype=np.float64), workers)
    counts = np.repeat(np.array([n for _, n, _ in pairs], dtype=np.int64), workers)
    return successes, counts


def check_outside(successes: object, counts: object) -> tuple[FloatArray, IntArray]:
    """Outside evidence as arrays, checked: as many successes as counts, each count a whole
    number of at least one, each success in [0, its count]."""
    s = np.asarray(successes, dtype=np.float64).reshape(-1)
    n = np.asarray(counts, dtype=np.float64).reshape(-1)
    if s.shape != n.shape:
        raise ConfigError(f"outside evidence: {s.size} successes for {n.size} counts")
    whole = np.isfinite(n) & (n >= 1) & (n == np.round(n))
    if not (whole.all() and np.isfinite(s).all() and ((s >= 0) & (s <= n)).all()):
        raise ConfigError(
            "outside evidence: each count must be a whole number >= 1 and each success in "
            "[0, its count]"
        )
    return s, n.astype(np.int64)
