"""Recorded answers as a reward model: replay a dataset or a logged run, worker by worker.

Two modes, both pure functions of (seed, worker, question number) like the simulated models:

- with replacement (the papers' setup): each question draws one of the worker's recorded
  rewards uniformly at random, so the worker's true mean is the mean over all its records;
- without replacement (realistic): the worker's j-th question gets its j-th recorded reward,
  in a seeded shuffle of its records (or in recorded order with ``shuffle=False``, as a log
  replay needs); past the last record the worker is exhausted and the draw is NaN.

``records`` says which record each pull replays (its index in the worker's own records), so
a replay can name the item and the raw answer behind each reward.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from screener.arrays import FloatArray, IntArray
from screener.errors import ConfigError
from screener.simulation.hashing import stream_key, uniform1, uniforms, worker_rng
from screener.simulation.rewards import RewardModel

__all__ = ["EXHAUSTED_RECORDS", "RecordedRewards"]

EXHAUSTED_RECORDS = "exhausted: no unused recorded answer left"

_PICK_STREAM = 21
_SHUFFLE_STREAM = 22


class RecordedRewards(RewardModel):
    """Per-worker recorded rewards in [0, 1]; ``sample`` returns NaN for an exhausted worker."""

    kind = "recorded"

    def __init__(
        self,
        workers: Sequence[str],
        records: Sequence[ArrayLike],
        seed: int = 0,
        *,
        replacement: bool = True,
        shuffle: bool = True,
    ) -> None:
        arrays = [np.asarray(r, dtype=np.float64).reshape(-1) for r in records]
        if len(arrays) != len(workers):
            raise ConfigError("one list of recorded rewards per worker is needed")
        if replacement:
            for worker, rewards in zip(workers, arrays, strict=True):
                if rewards.size == 0:
                    raise ConfigError(f"worker {worker!r} has no recorded answers to draw from")
        super().__init__([float(r.mean()) if r.size else 0.0 for r in arrays], seed)
        # A worker without records has no true mean: NaN (it is exhausted from the start).
        self.means = np.array([float(r.mean()) if r.size else np.nan for r in arrays])
        self.means.flags.writeable = False
        self.workers = tuple(workers)
        self.replacement = replacement
        self.shuffle = shuffle
        self.counts: IntArray = np.array([r.size for r in arrays], dtype=np.int64)
        self._offsets: IntArray = np.concatenate(([0], np.cumsum(self.counts)[:-1])).astype(
            np.int64
        )
        self._flat: FloatArray = np.concatenate(arrays)
        self._tables: _Tables | None = None  # for sample1, made on first use
        # Without replacement, question j of worker w replays record _order[offset(w) + j].
        self._order: IntArray | None = None
        if not replacement and shuffle:
            self._order = np.concatenate(
                [
                    worker_rng(seed, _SHUFFLE_STREAM, w).permutation(r.size)
                    for w, r in zip(self.workers, arrays, strict=True)
                ]
            ).astype(np.int64)

    def records(self, arms: ArrayLike, seqs: ArrayLike) -> IntArray:
        """The record each pull replays, as an index into its worker's records; -1 once the
        worker is exhausted (without replacement)."""
        a = np.asarray(arms, dtype=np.int64).reshape(-1)
        s = np.asarray(seqs, dtype=np.int64).reshape(-1)
        counts = self.counts[a]
        if self.replacement:
            u = uniforms(self.seed, _PICK_STREAM, a, s)
            return np.minimum((u * counts).astype(np.int64), counts - 1)
        index = np.full(a.size, -1, dtype=np.int64)
        fresh = s < counts
        index[fresh] = s[fresh]
        if self._order is not None:
            index[fresh] = self._order[self._offsets[a[fresh]] + s[fresh]]
        return index

    def sample1(self, arm: int, seq: int) -> float:
        """``sample`` of one question by table read on Python numbers: the same answer."""
        if self._tables is None:
            self._tables = _Tables(self)
        tables = self._tables
        count = tables.counts[arm]
        if self.replacement:
            index = min(int(uniform1(tables.pick_key, arm, seq) * count), count - 1)
        elif seq >= count:
            return math.nan
        else:
            index = seq if tables.order is None else tables.order[tables.offsets[arm] + seq]
        return tables.flat[tables.offsets[arm] + index]

    def sample(self, arms: ArrayLike, seqs: ArrayLike) -> FloatArray:
        a = np.asarray(arms, dtype=np.int64).reshape(-1)
        index = self.records(a, seqs)
        out = np.full(a.size, np.nan)
        fresh = index >= 0
        out[fresh] = self._flat[self._offsets[a[fresh]] + index[fresh]]
        return out

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "seed": self.seed,
            "replacement": self.replacement,
            "shuffle": self.shuffle,
        }


class _Tables:
    """A ``RecordedRewards``' tables as compact Python arrays, read one number at a time
    (``sample1``): a read costs a tenth of a numpy scalar's."""

    def __init__(self, rewards: RecordedRewards) -> None:
        self.counts = array("q", rewards.counts.tobytes())
        self.offsets = array("q", rewards._offsets.tobytes())
        self.flat = array("d", rewards._flat.tobytes())
        order = rewards._order
        self.order = None if order is None else array("q", order.tobytes())
        self.pick_key = stream_key(rewards.seed, _PICK_STREAM)
