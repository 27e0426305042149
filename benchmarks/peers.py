"""Pulls per CPU second beside the public peer code, on the same instances and answers.

The peers are other people's code, read from a checkout given on the command line (or the
environment); nothing of theirs is copied here:

* ROAI (Zhu, Chen, Fu, ICML 2020; github.com/yinglunz/ROAI_ICML2020, ``ROAI_class.py``):
  ``RR`` and ``WRR``, each pull one call of ``update`` / ``update_regular`` /
  ``update_additional`` driven as its ``ROAI.py`` drives them (without its error bookkeeping
  every ``update_interval`` pulls). Beside screener's ``rr`` and ``wrr`` at their defaults
  (Beta-mixture intervals); the peers use their Hoeffding-type intervals.
* banditpylib (github.com/Alanthink/banditpylib, the thresholding learners of its pull
  request 29): ``LSA``, ``APT``, ``Uniform`` and ``OPT_KG`` in its ``ThresholdingBandit``,
  each round ``actions`` / ``feed`` / ``update``. Beside screener's ``lsa`` (``alpha=1``, the
  peer's index), ``apt``, ``uniform-thresholding`` and ``opt-kg``: the same index, so the
  same pulls (checked: pulls per worker).

Answers: every peer answers from screener's counter-based draws (``BernoulliRewards``: the
j-th answer of worker i is the same for both), read from a table made before the timing, in
place of the peer's ``np.random`` (ROAI's ``get_reward``; a ``BernoulliArm`` whose ``pull``
reads the table). Ours is timed twice: paying for its own counter-based draws inside
``simulate`` (``BernoulliRewards``, as a simulation does), and reading the same table as the
peers (``RecordedRewards`` without replacement, in recorded order: the same answers, so the
same pulls), which is the like-for-like rate. Each pair runs alternating
in this process (ours one pull at a time, the peer, ours one ask of n pulls at a time,
``--repeat`` times) over the same number of pulls; rates are pulls per CPU second, the median
of the repeats, and every ratio divides two rates of this run (ours / peer: above 1,
screener is faster). "batched" is screener asking n pulls at a time beside the same peer
loop: the peers have no batch.

Last, RR and LSA asking n at a time beside the compiled reference (``benchmarks.compiled``,
one pull at a time) at n = 200 over the same pulls.

Usage::

    python -m benchmarks.peers --roai PATH --banditpylib PATH [--quick] [--sizes 20 200]

or with ``SCREENER_ROAI`` and ``SCREENER_BANDITPYLIB`` naming the checkouts (banditpylib
imports ``absl``: ``pip install absl-py``).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.harness import clock, describe_machine, machine_info, markdown_table, since
from benchmarks.instances import ksigma_instance
from screener import BernoulliRewards, simulate
from screener.algorithms.registry import create_algorithm
from screener.simulation import RewardModel
from screener.simulation.recorded import RecordedRewards

__all__ = ["Pair", "main", "measure"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
SIZES = (20, 200, 2000)
K, DELTA, BAR, SEED = 2.0, 0.1, 0.5, 1


@dataclass(frozen=True)
class Pair:
    """One of ours beside one peer: registry name and parameters, the peer's name."""

    ours: str
    params: dict[str, Any]
    peer: str
    family: str  # "roai" or "banditpylib"


PAIRS = (
    Pair("rr", {"k": K, "delta": DELTA}, "RR", "roai"),
    Pair("wrr", {"k": K, "delta": DELTA}, "WRR", "roai"),
    Pair("lsa", {"threshold": BAR, "alpha": 1.0}, "LSA", "banditpylib"),
    Pair("apt", {"threshold": BAR}, "APT", "banditpylib"),
    Pair("uniform-thresholding", {"threshold": BAR}, "Uniform", "banditpylib"),
    Pair("opt-kg", {"threshold": BAR}, "OPT_KG", "banditpylib"),
)


def _means(pair: Pair, n: int) -> FloatArray:
    if pair.family == "roai":
        return ksigma_instance(n, K, 0)
    return np.linspace(0.3, 0.7, n)


def _answers(means: FloatArray, per_worker: int) -> list[list[int]]:
    """The first ``per_worker`` answers of every worker, as screener's simulation draws them
    (0 or 1, as the peers' own draws are)."""
    n = means.size
    arms = np.repeat(np.arange(n), per_worker)
    seqs = np.tile(np.arange(per_worker), n)
    draws = BernoulliRewards(means, SEED).sample(arms, seqs).astype(np.int64)
    return draws.reshape(n, per_worker).tolist()


# --------------------------------------------------------------------------- the peers
class _Peers:
    """The peers' modules, imported from their checkouts."""

    def __init__(self, roai: Path | None, banditpylib: Path | None) -> None:
        self.roai: Any = None
        self.banditpylib: Any = None
        if roai is not None:
            sys.path.insert(0, str(roai))
            self.roai = importlib.import_module("ROAI_class")
        if banditpylib is not None:
            sys.path.insert(0, str(banditpylib))
            self.banditpylib = (
                importlib.import_module("banditpylib.learners.thres_bandit_learners"),
                importlib.import_module("banditpylib.bandits"),
                importlib.import_module("banditpylib.arms"),
            )

    def available(self, pair: Pair) -> bool:
        return (self.roai if pair.family == "roai" else self.banditpylib) is not None

    def run(self, pair: Pair, means: FloatArray, pulls: int,
            answers: list[list[int]]) -> tuple[float, IntArray]:  # fmt: skip
        """Pulls per CPU second of the peer over ``pulls`` pulls, and its pulls per worker."""
        if pair.family == "roai":
            return self._roai(pair.peer, means, pulls, answers)
        return self._banditpylib(pair.peer, means, pulls, answers)

    def _roai(self, name: str, means: FloatArray, pulls: int,
              answers: list[list[int]]) -> tuple[float, IntArray]:  # fmt: skip
        module = self.roai
        counts = [0] * means.size

        def reward(instance: Any, arm: int, sigma: float, instance_type: str) -> int:
            seq = counts[arm]
            counts[arm] = seq + 1
            return answers[arm][seq]

        original, module.get_reward = module.get_reward, reward
        try:
            algorithm = getattr(module, name)(
                means, float(means.mean()), float(means.std()), K, 0.0, DELTA, 0.0
            )
            start = clock()
            algorithm.initialization()
            if name == "RR":
                while algorithm.t < pulls:
                    algorithm.update()
            else:  # ROAI.py's single_run_WRR, without its error bookkeeping
                while algorithm.t < pulls:
                    visited = algorithm.index_pull
                    algorithm.update_regular()
                    while (
                        algorithm.t < pulls
                        and visited in algorithm.active_set
                        and algorithm.pulls[visited] < algorithm.threshold_pulls[visited]
                    ):
                        algorithm.update_additional(visited)  # fmt: skip
            timed = since(algorithm.t, start)
        finally:
            module.get_reward = original
        return timed.rate, np.array(counts, dtype=np.int64)

    def _banditpylib(self, name: str, means: FloatArray, pulls: int,
                     answers: list[list[int]]) -> tuple[float, IntArray]:  # fmt: skip
        learners, bandits, arms_module = self.banditpylib
        counts = [0] * means.size

        class RecordedArm(arms_module.BernoulliArm):  # type: ignore[misc,name-defined]
            def __init__(self, mu: float, arm: int) -> None:
                super().__init__(mu)
                self.arm = arm

            def pull(self, pulls: int = 1) -> IntArray:
                seq = counts[self.arm]
                counts[self.arm] = seq + pulls
                return np.array(answers[self.arm][seq : seq + pulls])

        arms = [RecordedArm(float(mu), arm) for arm, mu in enumerate(means)]
        bandit = bandits.ThresholdingBandit(arms, BAR, 0.0)
        kwargs: dict[str, Any] = {"arm_num": means.size, "budget": pulls}
        if name != "OPT_KG":
            kwargs |= {"theta": BAR, "eps": 0.0}
        learner = getattr(learners, name)(**kwargs)
        bandit.reset()
        learner.reset()
        start = clock()
        while True:
            actions = learner.actions()
            if actions is None:
                break
            learner.update(bandit.feed(actions))
        return since(pulls, start).rate, np.array(counts, dtype=np.int64)


# ------------------------------------------------------------------------------ ours
def _ours(
    pair: Pair, means: FloatArray, pulls: int, batch: int, rewards: RewardModel | None = None
) -> tuple[float, IntArray]:
    """Our pulls per CPU second (and pulls per worker): answers drawn by ``BernoulliRewards``,
    or read from ``rewards``."""
    algorithm = create_algorithm(pair.ours, means.size, {**pair.params, "budget": pulls})
    start = clock()
    simulate(algorithm, rewards or BernoulliRewards(means, SEED), batch=batch)
    return since(algorithm.n_answered, start).rate, np.asarray(algorithm.stats.count).copy()


def _pulls(pair: Pair, n: int, scale: float) -> int:
    """Pulls per measurement: enough past the first round of n to be dominated by it."""
    base = {20: 20_000, 200: 20_000, 2000: 10_000}.get(n, 10 * n)
    if pair.family == "banditpylib" and pair.peer in ("LSA", "APT"):
        base = min(base, 3 * n + 4_000)  # the peers' O(n) Python loop per pull
    return max(2 * n, int(base * scale))


@dataclass
class Row:
    n: int
    pair: Pair
    pulls: int
    ours_one: float
    peer: float
    ours_batched: float
    same_pulls: bool
    ours_one_table: float  # answers read from the peers' table
    ours_batched_table: float


def measure(peers: _Peers, sizes: Sequence[int], repeat: int, scale: float) -> list[Row]:
    """Every available pair at every size, alternating ours and the peer."""
    rows = []
    for n in sizes:
        for pair in PAIRS:
            if not peers.available(pair):
                continue
            means = _means(pair, n)
            pulls = _pulls(pair, n, scale)
            answers = _answers(means, pulls)
            table = RecordedRewards([str(i) for i in range(n)], answers, SEED,
                                    replacement=False, shuffle=False)  # fmt: skip
            # The tables are the benchmark's, not either side's: frozen, so that a full
            # collection does not walk their n x pulls entries and land on whichever side
            # happens to allocate the object that triggers it.
            gc.collect()
            gc.freeze()
            one: list[float] = []
            theirs: list[float] = []
            batched: list[float] = []
            one_table: list[float] = []
            batched_table: list[float] = []
            for _ in range(repeat):
                rate, ours_counts = _ours(pair, means, pulls, 1)
                one.append(rate)
                rate, peer_counts = peers.run(pair, means, pulls, answers)
                theirs.append(rate)
                batched.append(_ours(pair, means, pulls, n)[0])
                rate, table_counts = _ours(pair, means, pulls, 1, table)
                one_table.append(rate)
                batched_table.append(_ours(pair, means, pulls, n, table)[0])
            same = bool(np.array_equal(ours_counts, peer_counts))
            if not np.array_equal(ours_counts, table_counts):
                print(f"n = {n}: {pair.ours} read from the table made other pulls",
                      file=sys.stderr)  # fmt: skip
            row = Row(n, pair, pulls, statistics.median(one), statistics.median(theirs),
                      statistics.median(batched), same, statistics.median(one_table),
                      statistics.median(batched_table))  # fmt: skip
            rows.append(row)
            print(_line(row), file=sys.stderr, flush=True)
            gc.unfreeze()
    return rows


def _line(row: Row) -> str:
    return (
        f"n = {row.n}: {row.pair.ours} {row.ours_one:,.0f} / {row.pair.peer} {row.peer:,.0f}"
        f" = {row.ours_one / row.peer:.3g}x one at a time, {row.ours_batched / row.peer:.3g}x"
        f" batched (answers read from the table: {row.ours_one_table / row.peer:.3g}x,"
        f" {row.ours_batched_table / row.peer:.3g}x)"
    )


def compiled_rows(scale: float, repeat: int) -> list[list[object]]:
    """RR and LSA asking n at a time beside the compiled loop, n = 200, the same pulls."""
    from benchmarks import compiled  # numba: the bench extra, only for these rows

    compiled.warm_up()
    n = 200
    cases: list[tuple[str, dict[str, Any], FloatArray, Callable[[FloatArray, int], Any]]] = [
        ("rr", {"k": K, "delta": DELTA}, ksigma_instance(n, K, 0),
         lambda m, b: compiled.round_robin(m, SEED, k=K, delta=DELTA, budget=b)),
        ("lsa", {"threshold": BAR}, np.linspace(0.3, 0.7, n),
         lambda m, b: compiled.lsa(m, SEED, threshold=BAR, budget=b)),
    ]  # fmt: skip
    rows: list[list[object]] = []
    for name, params, means, reference in cases:
        pulls = int(200_000 * scale)
        ours, theirs = [], []
        for _ in range(repeat):
            ours.append(_ours(Pair(name, params, "", ""), means, pulls, n)[0])
            run = reference(means, pulls)
            theirs.append(run.pulls / run.cpu)
        rate, reference_rate = statistics.median(ours), statistics.median(theirs)
        rows.append([name, n, f"{pulls:,}", f"{rate:,.0f}", f"{reference_rate:,.0f}",
                     f"{rate / reference_rate:.3g}x"])  # fmt: skip
    return rows


def format_rows(rows: Sequence[Row]) -> str:
    header = ["n", "ours", "peer", "pulls", "ours, one at a time", "peer", "ratio",
              "ratio, table", "ours, asks of n", "ratio", "ratio, table", "same pulls"]  # fmt: skip
    table = [
        [r.n, r.pair.ours, r.pair.peer, f"{r.pulls:,}", f"{r.ours_one:,.0f}", f"{r.peer:,.0f}",
         f"{r.ours_one / r.peer:.3g}x", f"{r.ours_one_table / r.peer:.3g}x",
         f"{r.ours_batched:,.0f}", f"{r.ours_batched / r.peer:.3g}x",
         f"{r.ours_batched_table / r.peer:.3g}x", "yes" if r.same_pulls else "no"]
        for r in rows
    ]  # fmt: skip
    return markdown_table(header, table)


def _path(flag: str | None, variable: str) -> Path | None:
    value = flag or os.environ.get(variable)
    return Path(value).resolve() if value else None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--roai", help="ROAI_ICML2020 checkout (or SCREENER_ROAI)")
    parser.add_argument("--banditpylib", help="banditpylib checkout (or SCREENER_BANDITPYLIB)")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--repeat", type=int, default=3, help="alternations per pair")
    parser.add_argument("--quick", action="store_true", help="a fifth of the pulls, 1 repeat")
    parser.add_argument("--no-compiled", action="store_true", help="skip the numba rows")
    args = parser.parse_args(argv)
    peers = _Peers(_path(args.roai, "SCREENER_ROAI"),
                   _path(args.banditpylib, "SCREENER_BANDITPYLIB"))  # fmt: skip
    if peers.roai is None and peers.banditpylib is None:
        parser.error("give --roai and/or --banditpylib (or SCREENER_ROAI, SCREENER_BANDITPYLIB)")
    scale, repeat = (0.2, 1) if args.quick else (1.0, args.repeat)
    rows = measure(peers, args.sizes, repeat, scale)
    print("Pulls per CPU second, ours / peer (above 1: screener faster):\n")
    print(format_rows(rows))
    if not args.no_compiled:
        print("\nAsks of n beside the compiled reference (one pull at a time), n = 200:\n")
        print(markdown_table(["alg", "n", "pulls", "ours", "compiled", "ours / compiled"],
                             compiled_rows(scale, repeat)))  # fmt: skip
    print(f"\nRun on {machine_info()['date']}: {describe_machine(machine_info())}.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
