"""GOLD (Ban & He, KDD 2020): parameters, the neighbourhood graph, ranking, fast == naive, and
the delta guarantee on generated (eps, rho)-outlier instances; plus the instance generator.
Both readings of the terminal test: strict (the default) and ``inclusive=True`` on Section
6.1's boundary instances (groups of exactly n (1 - rho) arms)."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
from concurrent.futures import Executor
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest
from numpy.typing import NDArray
from stats_helpers import assert_rate_at_most

from screener.algorithms import Decision, StopReason
from screener.algorithms.ksigma import (
    ADE,
    EPS_LOWER_BOUND,
    GOLD,
    NeighbourGraph,
    gold_b,
    minority_size,
)
from screener.algorithms.registry import create_algorithm
from screener.arrays import IntArray
from screener.errors import ConfigError
from screener.simulation import BernoulliRewards, map_seeds, simulate
from screener.simulation.generic_outliers import (
    GenericOutlierInstance,
    InstanceError,
    OutlierKind,
    generic_outlier_instance,
    outlier_group_violations,
    outlier_groups,
)

_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:  # benchmarks/ is a folder of the source tree, not installed
    sys.path.insert(0, str(_ROOT))

from benchmarks.reference_gold import NaiveGOLD  # noqa: E402

_G = TypeVar("_G", bound=GOLD)


def _modest(
    kind: OutlierKind, eps: float, seed: int, *, boundary: bool = False
) -> GenericOutlierInstance:
    """n = 20, rho = 0.9, means spread over all of [0, 1]: runs of ~1e5 to 1e6 pulls (strict;
    ``boundary``: groups of 2, inclusive GOLD stops after ~4e3 to 4e4)."""
    return generic_outlier_instance(
        20, eps, 0.9, kind, seed, margin=1.1, low=0.0, high=1.0, boundary=boundary
    )


# ------------------------------------------------------------------------- parameters
@pytest.mark.parametrize("eps", [0.0, 0.05, EPS_LOWER_BOUND, -1.0, math.inf, math.nan])
def test_eps_at_or_below_the_bound_is_rejected(eps: float) -> None:
    with pytest.raises(ConfigError, match=r"e\^\(1/16\) - 1 = 0\.0645"):
        GOLD(20, eps=eps)


def test_eps_just_above_the_bound_is_accepted() -> None:
    assert GOLD(20, eps=0.065).b > 1.0


def test_b_by_hand() -> None:
    # e^(1/16) = 1.0644944589...; b = (1 + e + eps) / (1 - e + eps).
    assert gold_b(2.5) == pytest.approx(4.5644944589178593 / 2.4355055410821407, rel=1e-12)
    assert gold_b(2.5) == pytest.approx(1.874146612242881, rel=1e-12)
    assert gold_b(5.0) == pytest.approx(1.4313618736955007, rel=1e-12)
    assert GOLD(20, eps=5.0).b == gold_b(5.0)


@pytest.mark.parametrize(
    ("n", "rho", "expected"), [(20, 0.9, 2.0), (30, 0.9, 3.0), (50, 0.9, 5.0), (25, 0.9, 2.5)]
)
def test_minority_size_has_no_float_noise(n: int, rho: float, expected: float) -> None:
    assert minority_size(n, rho) == expected


@pytest.mark.parametrize(
    "params",
    [
        {"rho": 0.5},
        {"rho": 1.0},
        {"rho": 0.95},  # 20 (1 - 0.95) = 1: no room for an outlier
        {"delta": 0.0},
        {"delta": 1.0},
        {"interval": "wald"},
        {"quantile": "exact"},
    ],
)
def test_bad_parameters_raise(params: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        GOLD(20, **params)  # type: ignore[arg-type]


def test_inclusive_needs_only_one_arm_of_room() -> None:
    # 20 (1 - 0.95) = 1: a group of exactly one arm fits the inclusive reading only.
    with pytest.raises(ConfigError, match="fewer than n"):
        GOLD(20, rho=0.95)
    assert GOLD(20, rho=0.95, inclusive=True).minority == 1.0
    with pytest.raises(ConfigError, match=r"at most n \(1 - rho\) members"):
        GOLD(20, rho=0.96, inclusive=True)  # n (1 - rho) = 0.8


def test_inclusive_is_a_parameter_like_the_others() -> None:
    algorithm = GOLD(20, inclusive=True)
    assert algorithm.params()["inclusive"] is True and GOLD(20).params()["inclusive"] is False
    assert GOLD(20, **algorithm.params()).params() == algorithm.params()
    assert create_algorithm("gold", 20, {"inclusive": True}).result().extra["inclusive"] is True


@pytest.mark.subprocess
@pytest.mark.parametrize("value", [True, False])
def test_inclusive_from_the_command_line(tmp_path: Path, value: bool) -> None:
    args = ["run", "--workers", "20", "--outliers", "2", "-a", "gold", "--budget", "200"]
    args += ["-p", f"inclusive={str(value).lower()}", "--db", str(tmp_path / "s.db"), "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "screener", *args], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 3, done.stderr  # a budget of 200 cuts the run short
    report = json.loads(done.stdout)
    assert report["params"]["inclusive"] is value and report["extra"]["inclusive"] is value


# ------------------------------------------------------------------ the graph by hand
def test_graph_by_hand() -> None:
    graph = NeighbourGraph(np.ones(5, dtype=bool))
    assert graph.adjacency.sum() == 5 * 4 and graph.n_communities == 1
    means = np.array([0.1, 0.15, 0.5, 0.85, 0.9])
    radii = np.full(5, 0.05)  # b = 1.5: neighbours while |gap| <= 0.15
    # Only rows 0 and 4 are re-checked: 0-2, 0-3, 0-4, 1-4 and 2-4 go; 1-2, 1-3, 2-3, 3-4 stay.
    assert graph.remove_edges(np.array([0, 4]), means, radii, 1.5)
    kept = {(i, j) for i in range(5) for j in range(i + 1, 5) if graph.adjacency[i, j]}
    assert kept == {(0, 1), (1, 2), (1, 3), (2, 3), (3, 4)}
    assert graph.n_communities == 1
    # Now every row: 1-2, 1-3 and 2-3 go; {0, 1}, {2}, {3, 4} remain.
    assert graph.remove_edges(np.arange(5), means, radii, 1.5)
    kept = {(i, j) for i in range(5) for j in range(i + 1, 5) if graph.adjacency[i, j]}
    assert kept == {(0, 1), (3, 4)}
    assert graph.n_communities == 3
    np.testing.assert_array_equal(graph.community_sizes(), [2, 2, 1, 2, 2])
    assert np.array_equal(graph.adjacency, graph.adjacency.T)


def test_graph_edges_never_come_back() -> None:
    graph = NeighbourGraph(np.ones(4, dtype=bool))
    graph.remove_edges(np.arange(4), np.array([0.0, 0.0, 1.0, 1.0]), np.full(4, 0.1), 1.5)
    before = graph.adjacency.copy()
    assert not graph.remove_edges(np.arange(4), np.full(4, 0.5), np.full(4, 10.0), 1.5)
    np.testing.assert_array_equal(graph.adjacency, before)
    assert graph.n_communities == 2


class _EveryRowChecked(NeighbourGraph):
    """The graph without its O(n) screen: every row given is checked pair by pair."""

    def _may_lose_an_edge(
        self, rows: IntArray, means: NDArray[np.float64], radii: NDArray[np.float64], b: float
    ) -> NDArray[np.bool_]:
        return np.ones(rows.size, dtype=bool)


@pytest.mark.parametrize("seed", range(20))
def test_graph_screen_cuts_what_checking_every_row_cuts(seed: int) -> None:
    """The screen that skips rows whose edges surely stay changes nothing: the same edges
    and communities as checking every row, call after call, with ties at the reach, answers
    still missing (NaN means, infinite radii) and a non-member."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 40))
    members = rng.random(n) < 0.9
    screened, checked = NeighbourGraph(members), _EveryRowChecked(members)
    means = np.round(rng.choice([0.2, 0.5, 0.8], n) + rng.normal(0, 0.05, n), 2)
    radii = np.full(n, 0.3)
    cut = 0
    for _ in range(30):
        radii = np.round(radii * rng.uniform(0.7, 1.0, n), 3)
        unanswered = rng.random(n) < 0.05
        shown = np.where(unanswered, np.nan, means)
        shown_radii = np.where(unanswered, np.inf, radii)
        rows = np.flatnonzero(rng.random(n) < 0.5)
        went = screened.remove_edges(rows, shown, shown_radii, 1.5)
        assert went == checked.remove_edges(rows, shown, shown_radii, 1.5)
        np.testing.assert_array_equal(screened.adjacency, checked.adjacency)
        np.testing.assert_array_equal(screened.labels, checked.labels)
        cut += went
    assert cut >= 1


def test_graph_ignores_non_members() -> None:
    members = np.array([True, True, False, True])
    graph = NeighbourGraph(members)
    assert not graph.adjacency[2].any() and not graph.adjacency[:, 2].any()
    graph.remove_edges(np.arange(4), np.array([0.0, 0.0, 0.5, 1.0]), np.full(4, 0.1), 1.5)
    np.testing.assert_array_equal(graph.community_sizes(), [2, 2, 0, 1])
    assert graph.labels[2] == -1


# ------------------------------------------------------------ a tiny case by hand
def _hand_reward(arm: int, seq: int) -> float:
    """Arms 0, 1 always right; 2, 3 always wrong; arm 4 alternates right, wrong, ..."""
    return [1.0, 1.0, 0.0, 0.0, 1.0 - seq % 2][arm]


def _hand_gold(budget: int) -> GOLD:
    # Hoeffding with the paper's level: beta = sqrt(log(1 / delta') / (2 m)), T = 5 m.
    return GOLD(
        5, eps=5.0, rho=0.6, delta=0.1, interval="hoeffding", quantile="paper", budget=budget
    )


def _sweep(algorithm: GOLD) -> bool:
    ask = algorithm.ask(5)
    if ask.done:
        return False
    rewards = [_hand_reward(p.arm, p.seq) for p in ask]
    algorithm.tell_many(ask.ids, rewards)
    return True


def _run_out(algorithm: GOLD) -> None:
    """Sweep until the algorithm is done (its stopping rule or its budget)."""
    while not algorithm.finished:
        _sweep(algorithm)


def _edges(algorithm: GOLD) -> set[tuple[int, int]]:
    algorithm.result()  # refresh
    assert algorithm.graph is not None
    adjacency = algorithm.graph.adjacency
    return {(i, j) for i in range(5) for j in range(i + 1, 5) if adjacency[i, j]}


def test_tiny_case_by_hand() -> None:
    """n = 5, rho = 0.6 (terminal: a community of 1), eps = 5 (b = 1.4314), delta = 0.1.

    After m sweeps beta = sqrt(log(pi^2 5 (5m)^2 / 0.6) / (2 m)) for every arm. The pairs
    {0,1} x {2,3} (gap 1) stop being neighbours once 1 > 2 b beta: m = 66. Arm 4's mean is
    ceil(m/2)/m, just above 1/2 at odd m: its gap to arms 2, 3 beats 2 b beta first at m = 313
    (157/313), its gap to arms 0, 1 at m = 314 (1/2), when it becomes a singleton: S[4] = 1570.
    """
    algorithm = _hand_gold(budget=5 * 330)
    full = {(i, j) for i in range(5) for j in range(i + 1, 5)}
    cross = {(0, 2), (0, 3), (1, 2), (1, 3)}
    _sweep(algorithm)
    assert _edges(algorithm) == full
    for _ in range(64):
        _sweep(algorithm)
    assert algorithm.n_answered == 5 * 65 and _edges(algorithm) == full
    _sweep(algorithm)  # m = 66
    assert _edges(algorithm) == full - cross
    assert algorithm.graph is not None and algorithm.graph.n_communities == 1  # via arm 4
    while algorithm.n_answered < 5 * 312:
        _sweep(algorithm)
    assert _edges(algorithm) == full - cross
    _sweep(algorithm)  # m = 313
    assert _edges(algorithm) == {(0, 1), (0, 4), (1, 4), (2, 3)}
    assert not algorithm.terminal.any()
    _sweep(algorithm)  # m = 314
    assert _edges(algorithm) == {(0, 1), (2, 3)}
    assert algorithm.terminal.tolist() == [False, False, False, False, True]
    assert int(algorithm.rounds[4]) == 1570
    # Arm 4 is no longer pulled; the budget ends the run (one terminal arm < n (1 - rho) = 2).
    ask = algorithm.ask(5)
    assert 4 not in ask.arms.tolist()
    algorithm.tell_many(ask.ids, [_hand_reward(p.arm, p.seq) for p in ask])
    _run_out(algorithm)
    result = algorithm.result()
    assert result.stop_reason is StopReason.BUDGET_SPENT
    ranking = result.ranking
    assert ranking[0].arm == 4 and ranking[0].score == 1570.0
    assert ranking[0].decision is Decision.UNDECIDED and ranking[0].leaning is Decision.OUTLIER
    assert [w.arm for w in ranking[1:]] == [0, 1, 2, 3]  # never terminal: last, by arm
    assert all(w.score is None and w.decision is Decision.UNDECIDED for w in ranking[1:])
    assert result.outliers == ()


def test_tiny_case_by_hand_inclusive() -> None:
    """The same run with ``inclusive=True``: n (1 - rho) = 2, terminal at a community of <= 2.

    At m = 313 the edges left are {0,1}, {0,4}, {1,4} and {2,3} (see above): communities
    {0, 1, 4} and {2, 3}. The pair {2, 3} has 2 <= 2 arms: terminal at T = 5 x 313 = 1565 (the
    strict reading waits for arm 4 alone at 1570), and with 2 terminal workers the stopping rule
    holds at once: the pair is the outlier group, everyone else NORMAL.
    """
    algorithm = GOLD(
        5, eps=5.0, rho=0.6, delta=0.1, interval="hoeffding", quantile="paper", budget=5 * 330,
        inclusive=True,
    )  # fmt: skip
    full = {(i, j) for i in range(5) for j in range(i + 1, 5)}
    cross = {(0, 2), (0, 3), (1, 2), (1, 3)}
    while algorithm.n_answered < 5 * 312:
        _sweep(algorithm)
    assert _edges(algorithm) == full - cross and not algorithm.terminal.any()
    _sweep(algorithm)  # m = 313
    assert _edges(algorithm) == {(0, 1), (0, 4), (1, 4), (2, 3)}
    assert algorithm.terminal.tolist() == [False, False, True, True, False]
    assert algorithm.rounds.tolist() == [-1, -1, 1565, 1565, -1]
    assert algorithm.ask(5).done and algorithm.n_answered == 1565
    result = algorithm.result()
    assert result.stop_reason is StopReason.CONDITION_MET and result.outliers == (2, 3)
    assert [w.arm for w in result.ranking] == [2, 3, 0, 1, 4]
    assert [w.score for w in result.ranking] == [1565.0, 1565.0, None, None, None]
    assert result.extra["first_round"] == result.extra["outlier_cutoff_round"] == 1565
    assert result.extra["inclusive"] is True and result.extra["terminal"] == 2
    normal = [w for w in result.workers if w.arm in (0, 1, 4)]
    assert all(w.decision is Decision.NORMAL for w in normal)
    assert normal[0].reason == "never left a community of more than n (1 - rho) workers"
    # The strict reading at the same point: nothing terminal, nothing decided.
    strict = _hand_gold(budget=5 * 313)
    _run_out(strict)
    assert not strict.terminal.any() and strict.result().outliers == ()


@pytest.mark.parametrize(
    ("inclusive", "expected"), [(False, 10), (True, 20)]
)  # prefixes of 1, 2, 3 arms at rounds 10, 20, 30; n (1 - rho) = 2
def test_outlier_cutoff_by_hand(inclusive: bool, expected: int) -> None:
    algorithm = GOLD(10, rho=0.8, inclusive=inclusive)
    algorithm.terminal[[4, 7, 1]] = True
    algorithm.rounds[[4, 7, 1]] = [10, 20, 30]
    assert algorithm._prefix_rounds() == (10, expected)
    algorithm.terminal[7] = False  # prefixes of 1 and 2 arms at rounds 10, 30
    algorithm.rounds[7] = -1
    assert algorithm._prefix_rounds() == (10, 30 if inclusive else 10)


# ------------------------------------------------------------ runs and the naive path
class RecordingGOLD(GOLD):
    """Keeps a copy of the adjacency after every edge update."""

    def __init__(self, n_workers: int, **params: float) -> None:
        super().__init__(n_workers, **params)  # type: ignore[arg-type]
        self.history: list[NDArray[np.bool_]] = []

    def _cut_edges(self, graph: NeighbourGraph, rows: IntArray) -> bool:
        removed = super()._cut_edges(graph, rows)
        self.history.append(graph.adjacency.copy())
        return removed


def _drive(algorithm: _G, means: NDArray[np.float64], seed: int, growth: int = 0) -> _G:
    """Ask one sweep over the live workers (times ``1 + sweeps // growth``), answer, repeat."""
    rewards = BernoulliRewards(means, seed)
    sweeps = 0
    while True:
        live = int((algorithm.available & ~algorithm.terminal).sum())
        step = 1 + (sweeps // growth if growth else 0)
        ask = algorithm.ask(max(live, 1) * step)
        if ask.done:
            return algorithm
        algorithm.tell_many(ask.ids, rewards.sample(ask.arms, ask.seqs))
        sweeps += step


def _random_means(seed: int, n: int, high: int = 2) -> NDArray[np.float64]:
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.uniform(0.2, 0.5, n - high), rng.uniform(0.85, 0.95, high)])


@pytest.mark.parametrize("seed", range(4))
def test_fast_path_equals_naive_reference(seed: int) -> None:
    n = 12
    means = _random_means(seed, n)
    params = {"eps": 2.5, "rho": 0.75, "budget": 25_000}
    fast = _drive(GOLD(n, **params), means, seed)  # type: ignore[arg-type]
    naive = _drive(NaiveGOLD(n, **params), means, seed)  # type: ignore[arg-type]
    assert fast.terminal.any()  # the comparison covers separations
    np.testing.assert_array_equal(fast.rounds, naive.rounds)
    np.testing.assert_array_equal(fast.terminal, naive.terminal)
    assert fast.graph is not None and naive.graph is not None
    np.testing.assert_array_equal(fast.graph.adjacency, naive.graph.adjacency)
    fast_result, naive_result = fast.result(), naive.result()
    assert [w.arm for w in fast_result.ranking] == [w.arm for w in naive_result.ranking]
    assert fast_result.stop_reason is naive_result.stop_reason
    assert fast_result.total_pulls == naive_result.total_pulls


@pytest.mark.parametrize(("n", "rho"), [(10, 0.8), (12, 0.75)])
@pytest.mark.parametrize("seed", range(3))
def test_fast_path_equals_naive_reference_inclusive(n: int, rho: float, seed: int) -> None:
    """n (1 - rho) = 2 and 3, integers: a high group of exactly that size turns terminal."""
    means = _random_means(seed, n, high=round(n * (1 - rho)))
    params = {"eps": 2.5, "rho": rho, "budget": 25_000, "inclusive": True}
    fast = _drive(GOLD(n, **params), means, seed)  # type: ignore[arg-type]
    naive = _drive(NaiveGOLD(n, **params), means, seed)  # type: ignore[arg-type]
    assert fast.terminal.any()
    np.testing.assert_array_equal(fast.rounds, naive.rounds)
    np.testing.assert_array_equal(fast.terminal, naive.terminal)
    assert fast.graph is not None and naive.graph is not None
    np.testing.assert_array_equal(fast.graph.adjacency, naive.graph.adjacency)
    fast_result, naive_result = fast.result(), naive.result()
    assert fast_result.workers == naive_result.workers
    assert fast_result.stop_reason is naive_result.stop_reason
    assert fast_result.total_pulls == naive_result.total_pulls
    # The option mattered: the strict reading of the same run ends elsewhere.
    strict = _drive(GOLD(n, **{**params, "inclusive": False}), means, seed)  # type: ignore[arg-type]
    assert not np.array_equal(strict.rounds, fast.rounds)


@pytest.mark.parametrize("seed", range(2))
def test_inclusive_changes_nothing_when_n_1_minus_rho_is_not_an_integer(seed: int) -> None:
    means = _random_means(seed, 12)  # 12 (1 - 0.8) = 2.4: "< 2.4" and "<= 2.4" agree
    params = {"eps": 2.5, "rho": 0.8, "budget": 25_000}
    strict = _drive(GOLD(12, **params), means, seed)  # type: ignore[arg-type]
    inclusive = _drive(GOLD(12, inclusive=True, **params), means, seed)  # type: ignore[arg-type]
    assert strict.terminal.any()
    np.testing.assert_array_equal(strict.rounds, inclusive.rounds)
    assert strict.n_answered == inclusive.n_answered
    assert [w.decision for w in strict.result().workers] == [
        w.decision for w in inclusive.result().workers
    ]


@pytest.mark.parametrize("seed", range(3))
def test_edges_are_never_re_added_during_a_run(seed: int) -> None:
    means = _random_means(seed, 10)
    algorithm = _drive(RecordingGOLD(10, eps=2.5, rho=0.75, budget=30_000), means, seed)
    history = algorithm.history
    assert len(history) > 10 and history[-1].sum() < history[0].sum()
    for before, after in itertools.pairwise(history):
        assert not (after & ~before).any()


@pytest.mark.parametrize("seed", range(4))
def test_never_terminal_workers_rank_last(seed: int) -> None:
    means = _random_means(seed, 12)
    algorithm = _drive(GOLD(12, eps=2.5, rho=0.75, budget=60_000), means, seed)
    ranking = algorithm.result().ranking
    terminal = [w for w in ranking if w.score is not None]
    rest = [w for w in ranking if w.score is None]
    assert terminal and rest
    assert ranking == tuple(terminal + rest)
    assert all(algorithm.terminal[w.arm] for w in terminal)
    assert not any(algorithm.terminal[w.arm] for w in rest)
    scores = [float(w.score or 0.0) for w in terminal]
    assert scores == sorted(scores) and min(scores) > 0
    assert [w.rank for w in ranking] == list(range(1, 13))


# ------------------------------------------------------------------- pending pulls
def test_round_robin_continues_while_answers_are_pending() -> None:
    algorithm = GOLD(6, eps=2.5, rho=0.75)
    first, second = algorithm.ask(4), algorithm.ask(4)
    assert first.arms.tolist() == [0, 1, 2, 3] and second.arms.tolist() == [4, 5, 0, 1]
    algorithm.tell_many(first.ids, [1.0, 0.0, 1.0, 0.0])
    assert algorithm.result().extra["communities"] is None  # arms 4, 5 unanswered: no graph
    algorithm.tell_many(second.ids, [1.0, 1.0, 1.0, 1.0])
    assert algorithm.result().extra["communities"] == 1


def test_batched_asks_equal_single_asks() -> None:
    means = _random_means(1, 8)
    rewards = BernoulliRewards(means, 1)
    batched, single = GOLD(8, eps=2.5, rho=0.7), GOLD(8, eps=2.5, rho=0.7)
    for limit in [3, 8, 5, 13, 2, 8] * 40:
        big = batched.ask(limit)
        parts = [single.ask(1) for _ in range(len(big))]
        assert big.arms.tolist() == [int(p.arms[0]) for p in parts]
        batched.tell_many(big.ids, rewards.sample(big.arms, big.seqs))
        for part in parts:
            single.tell_many(part.ids, rewards.sample(part.arms, part.seqs))
    np.testing.assert_array_equal(batched.rounds, single.rounds)


def test_worker_leaving_unanswered_is_kept_out_of_the_graph() -> None:
    algorithm = GOLD(6, eps=2.5, rho=0.75)
    ask = algorithm.ask(6)
    algorithm.release(int(ask.ids[5]))
    algorithm.set_unavailable(5, "quit")
    algorithm.tell_many(ask.ids[:5], [1.0, 0.0, 1.0, 0.0, 1.0])
    result = algorithm.result()
    assert algorithm.graph is not None and not algorithm.graph.members[5]
    line = next(w for w in result.workers if w.arm == 5)
    assert line.decision is Decision.UNDECIDED and "kept out of the graph" in line.reason
    assert 5 not in algorithm.ask(10).arms.tolist()


# ---------------------------------------------------------------- the delta guarantee
CONFIGS: list[tuple[OutlierKind, float]] = [
    ("upper", 2.5),
    ("upper", 5.0),
    ("intermediate", 2.5),
    ("intermediate", 5.0),
]
RUNS_PER_CONFIG = 30
DELTA = 0.1


def _correct(algorithm: GOLD, outliers: frozenset[int]) -> bool:
    """The decided outlier set is the group, and the group ranks strictly before the rest."""
    result = algorithm.result()
    if set(result.outliers) != outliers:
        return False
    inf = math.inf
    scores = {w.arm: inf if w.score is None else w.score for w in result.workers}
    worst_outlier = max(scores[arm] for arm in outliers)
    best_normal = min(score for arm, score in scores.items() if arm not in outliers)
    return worst_outlier < best_normal


def _gold_run(
    kind: OutlierKind, eps: float, inclusive: bool, seed: int
) -> tuple[StopReason | None, bool, int]:
    """One run on a generated instance: how it stopped, whether it was correct, and how many
    workers were terminal at the end."""
    instance = _modest(kind, eps, seed, boundary=inclusive)
    algorithm = GOLD(20, eps=eps, rho=0.9, delta=DELTA, inclusive=inclusive)
    _drive(algorithm, instance.means, seed, growth=20)
    terminal = int(algorithm.terminal.sum())
    return algorithm.stop_reason, _correct(algorithm, instance.outliers), terminal


@pytest.mark.slow
def test_delta_correctness_on_generated_instances(run_pool: Executor) -> None:
    """120 runs, n = 20, rho = 0.9, delta = 0.1: wrong results at rate <= delta (binomial).

    Each run asks a growing batch (one sweep times 1 + sweeps // 20), so the graph is refreshed
    at least every 5% of the run; the guarantee holds at every refresh.
    """
    errors = trials = 0
    for index, (kind, eps) in enumerate(CONFIGS):
        seeds = [1000 * index + run for run in range(RUNS_PER_CONFIG)]
        one_run = partial(_gold_run, kind, eps, False)
        for stop_reason, correct, _ in map_seeds(one_run, seeds, executor=run_pool):
            assert stop_reason is StopReason.CONDITION_MET
            trials += 1
            errors += not correct
    assert_rate_at_most(errors, trials, DELTA)


def test_correctness_check_can_fail() -> None:
    instance = _modest("upper", 5.0, 0)
    algorithm = _drive(GOLD(20, eps=5.0), instance.means, 0, growth=20)
    assert _correct(algorithm, instance.outliers)
    normal = min(set(range(20)) - instance.outliers)
    assert not _correct(algorithm, frozenset({normal}))


def test_simulate_runs_gold_to_the_condition() -> None:
    instance = _modest("intermediate", 5.0, 3)
    result = simulate(GOLD(20, eps=5.0), BernoulliRewards(instance.means, 3), batch=400)
    assert result.condition_met and set(result.outliers) == instance.outliers
    assert result.ranking[0].arm in instance.outliers and result.ranking[0].score is not None
    assert sum(w.decision is Decision.NORMAL for w in result.workers) == 19


# ------------------------------------------------------------------- the generator
@pytest.mark.parametrize("kind", ["upper", "intermediate"])
@pytest.mark.parametrize(("n", "eps", "rho"), [(20, 2.5, 0.9), (50, 5.0, 0.9), (40, 2.5, 0.8)])
@pytest.mark.parametrize("seed", [0, 1, 7])
def test_generator_guarantees(kind: str, n: int, eps: float, rho: float, seed: int) -> None:
    means, outliers = generic_outlier_instance(n, eps, rho, kind, seed)  # type: ignore[arg-type]
    assert means.shape == (n,) and not means.flags.writeable
    assert means.min() == pytest.approx(0.05) and means.max() == pytest.approx(0.95)
    assert len(outliers) == math.ceil(minority_size(n, rho)) - 1
    assert outlier_group_violations(means, outliers, eps, rho) == []
    assert outlier_groups(means, eps, rho) == [outliers]
    group = means[sorted(outliers)]
    above = int((means > group.max()).sum())
    below = int((means < group.min()).sum())
    assert above + below == n - len(outliers)
    if kind == "upper":
        assert above == 0
    else:
        assert above > minority_size(n, rho) and below > minority_size(n, rho)


def test_generator_is_deterministic_per_seed() -> None:
    first = generic_outlier_instance(20, 2.5, 0.9, "intermediate", 3)
    again = generic_outlier_instance(20, 2.5, 0.9, "intermediate", 3)
    np.testing.assert_array_equal(first.means, again.means)
    assert first.outliers == again.outliers
    other = generic_outlier_instance(20, 2.5, 0.9, "intermediate", 4)
    assert not np.array_equal(first.means, other.means)


def test_generator_respects_n_outliers() -> None:
    means, outliers = generic_outlier_instance(50, 2.5, 0.9, "upper", 0, n_outliers=2)
    assert len(outliers) == 2 and outlier_group_violations(means, outliers, 2.5, 0.9) == []


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((20, 2.5, 0.9, "upper", 0), {"n_outliers": 2}),  # a group needs < n (1 - rho) = 2
        ((20, 2.5, 0.95, "upper", 0), {}),  # n (1 - rho) = 1: no group fits
        ((7, 2.5, 0.7, "intermediate", 0), {}),  # 5 normal arms, > 2.1 needed on each side
        ((20, 2.5, 0.9, "upper", 0), {"margin": 1.0}),
        ((20, 2.5, 0.9, "sideways", 0), {}),
    ],
)
def test_generator_rejects_impossible_requests(
    args: tuple[object, ...], kwargs: dict[str, object]
) -> None:
    with pytest.raises(ConfigError):
        generic_outlier_instance(*args, **kwargs)  # type: ignore[arg-type]


def test_generator_redraws_rejected_instances(monkeypatch: pytest.MonkeyPatch) -> None:
    import screener.simulation.generic_outliers as module

    verdicts = iter([["rejected"], ["rejected"]])
    real = module.outlier_group_violations

    def first_two_rejected(*args: Any) -> list[str]:
        return next(verdicts, None) or real(*args)

    monkeypatch.setattr(module, "outlier_group_violations", first_two_rejected)
    means, outliers = generic_outlier_instance(20, 2.5, 0.9, "upper", 0, max_tries=3)
    assert real(means, outliers, 2.5, 0.9) == []
    first = generic_outlier_instance(20, 2.5, 0.9, "upper", 0)  # accepted at the third draw
    assert not np.array_equal(means, first.means)
    monkeypatch.setattr(module, "outlier_group_violations", lambda *args: ["rejected"])
    with pytest.raises(InstanceError, match="in 5 draws"):
        generic_outlier_instance(20, 2.5, 0.9, "upper", 0, max_tries=5)


def test_violations_are_detected_by_hand() -> None:
    means = [0.10, 0.12, 0.14, 0.16, 0.18, 0.90]  # gaps 0.02; outlier 0.72 away
    assert outlier_group_violations(means, {5}, 2.5, 0.6) == []
    # Too close: 0.25 - 0.18 = 0.07 < 3.5 x 0.02.
    near = [0.10, 0.12, 0.14, 0.16, 0.18, 0.25]
    assert any("Constraint (1)" in p for p in outlier_group_violations(near, {5}, 2.5, 0.6))
    # A normal arm between the group's members.
    assert any("between" in p for p in outlier_group_violations(means, {0, 5}, 2.5, 0.6))
    # Constraint (2): rho = 0.9 needs more than 5.4 normal arms.
    assert any("Constraint (2)" in p for p in outlier_group_violations(means, {5}, 2.5, 0.9))
    # An intermediate arm with only two normal arms above it at rho = 0.6 (needs > 2.4).
    middle = [0.10, 0.11, 0.12, 0.13, 0.50, 0.90, 0.91]
    problems = outlier_group_violations(middle, {4}, 2.5, 0.6)
    assert any("|N_u| = 2" in p for p in problems)
    assert outlier_group_violations([0.1, 0.1, 0.9], {2}, 2.5, 0.6) != []  # ties


# ------------------------------------------- Section 6.1's boundary instances (inclusive)
@pytest.mark.parametrize("kind", ["upper", "intermediate"])
@pytest.mark.parametrize(("n", "eps", "rho"), [(20, 2.5, 0.9), (50, 5.0, 0.9), (40, 2.5, 0.8)])
@pytest.mark.parametrize("seed", [0, 1, 7])
def test_boundary_instances_meet_the_relaxed_definition_only(
    kind: OutlierKind, n: int, eps: float, rho: float, seed: int
) -> None:
    means, outliers = generic_outlier_instance(n, eps, rho, kind, seed, boundary=True)
    minority = minority_size(n, rho)
    assert len(outliers) == minority  # exactly n (1 - rho): 2, 5 and 8
    assert outlier_group_violations(means, outliers, eps, rho, boundary=True) == []
    assert outlier_groups(means, eps, rho, boundary=True) == [outliers]
    strict = outlier_group_violations(means, outliers, eps, rho)
    assert strict == [f"Constraint (2): {n - len(outliers)} normal arms, not more than rho n"]
    assert outlier_groups(means, eps, rho) == []
    group = means[sorted(outliers)]
    above, below = int((means > group.max()).sum()), int((means < group.min()).sum())
    assert above + below == n - len(outliers)
    # Every non-empty side has MORE than n (1 - rho) arms: inclusive GOLD's guarantee needs it.
    assert above == 0 if kind == "upper" else above > minority and below > minority


def test_boundary_changes_nothing_when_n_1_minus_rho_is_not_an_integer() -> None:
    means, outliers = generic_outlier_instance(25, 2.5, 0.9, "upper", 0, boundary=True)
    assert len(outliers) == 2  # floor(2.5) = ceil(2.5) - 1: the strict definition holds too
    assert outlier_group_violations(means, outliers, 2.5, 0.9) == []
    default = generic_outlier_instance(25, 2.5, 0.9, "upper", 0)
    np.testing.assert_array_equal(means, default.means)


_PINNED_OUTLIERS = frozenset({5})
_PINNED_MEANS = [0.08493909886519105, 0.874376055193408, 0.95, 0.9466241943734429]


def test_default_instances_are_unchanged() -> None:
    """Pinned: the generator's default output for one seed (as before ``boundary`` existed)."""
    means, outliers = generic_outlier_instance(20, 2.5, 0.9, "intermediate", 3)
    assert outliers == _PINNED_OUTLIERS
    np.testing.assert_allclose(means[:4], _PINNED_MEANS, rtol=0, atol=1e-12)


def test_relaxed_violations_by_hand() -> None:
    # n = 10, rho = 0.8: n (1 - rho) = 2, rho n = 8. Normal gaps 0.02; the pair is 0.3 away.
    means = [0.10, 0.12, 0.14, 0.16, 0.18, 0.20, 0.50, 0.51, 0.90, 0.92]
    pair = {6, 7}
    assert outlier_group_violations(means, pair, 2.5, 0.8, boundary=True) == []
    assert outlier_group_violations(means, pair, 2.5, 0.8) == [
        "Constraint (2): 8 normal arms, not more than rho n",
        "Constraint (2): |N_u| = 2 is neither 0 nor > n (1 - rho)",
    ]
    # One arm above is fewer than 2; three in the group leave 7 < 8 normal arms.
    lopsided = [0.10, 0.12, 0.14, 0.16, 0.18, 0.20, 0.22, 0.50, 0.51, 0.90]
    problems = outlier_group_violations(lopsided, {7, 8}, 2.5, 0.8, boundary=True)
    assert problems == ["Constraint (2), relaxed: |N_u| = 1 is neither 0 nor >= n (1 - rho)"]
    triple = [0.10, 0.12, 0.14, 0.16, 0.18, 0.50, 0.51, 0.52, 0.90, 0.92]
    problems = outlier_group_violations(triple, {5, 6, 7}, 2.5, 0.8, boundary=True)
    assert problems == ["Constraint (2), relaxed: 7 normal arms, fewer than rho n"]
    assert outlier_groups(means, 2.5, 0.8, boundary=True) == [frozenset(pair)]


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((20, 2.5, 0.9, "upper", 0), {"n_outliers": 3}),  # at most n (1 - rho) = 2
        ((20, 2.5, 0.96, "upper", 0), {}),  # n (1 - rho) = 0.8: no group fits
        ((5, 2.5, 0.6, "intermediate", 0), {}),  # 3 normal arms, > 2 needed on each side
    ],
)
def test_boundary_generator_rejects_impossible_requests(
    args: tuple[object, ...], kwargs: dict[str, object]
) -> None:
    with pytest.raises(ConfigError):
        generic_outlier_instance(*args, boundary=True, **kwargs)  # type: ignore[arg-type]


BOUNDARY_RUNS_PER_CONFIG = 50


@pytest.mark.slow
def test_inclusive_delta_correctness_on_boundary_instances(run_pool: Executor) -> None:
    """200 runs, n = 20, rho = 0.9 (groups of exactly 2), delta = 0.1, inclusive GOLD: wrong
    results at rate <= delta (one-sided binomial test). A run is wrong unless the pair ranks
    strictly before every normal worker and the decided outliers are exactly the pair.

    The runs stop as soon as the pair is terminal (no normal worker terminal): ~4e3 to 4e4
    pulls each, a few seconds in all.
    """
    errors = trials = early = 0
    for index, (kind, eps) in enumerate(CONFIGS):
        seeds = [5000 + 1000 * index + run for run in range(BOUNDARY_RUNS_PER_CONFIG)]
        one_run = partial(_gold_run, kind, eps, True)
        for stop_reason, correct, terminal in map_seeds(one_run, seeds, executor=run_pool):
            assert stop_reason is StopReason.CONDITION_MET
            trials += 1
            errors += not correct
            early += terminal == 2
    assert_rate_at_most(errors, trials, DELTA)
    assert early >= 0.9 * trials  # the stop came with the pair, not after a normal split


def test_inclusive_correctness_check_can_fail() -> None:
    instance = _modest("intermediate", 2.5, 0, boundary=True)
    algorithm = _drive(GOLD(20, eps=2.5, inclusive=True), instance.means, 0, growth=20)
    assert _correct(algorithm, instance.outliers)
    first = min(instance.outliers)
    assert not _correct(algorithm, frozenset({first}))  # half the pair: the set differs
    normal = min(set(range(20)) - instance.outliers)
    assert not _correct(algorithm, frozenset({first, normal}))


def test_inclusive_needs_sides_larger_than_n_1_minus_rho() -> None:
    """The documented limit: a normal side of exactly n (1 - rho) arms (allowed by the relaxed
    Constraint 2) splits off as a small community and can end the run ranked first.

    n = 10, rho = 0.8: two normal arms far below the pair, six just above it (still (1 + eps)
    times their gaps away). The pair leaves the low side long before the high side, and the
    low side, alone with 2 <= 2 arms, turns terminal first.
    """
    means = np.array([0.00, 0.01, 0.50, 0.505, 0.60, 0.61, 0.62, 0.63, 0.64, 0.65])
    pair = frozenset({2, 3})
    assert outlier_group_violations(means, pair, 2.5, 0.8, boundary=True) == []
    algorithm = _drive(GOLD(10, eps=2.5, rho=0.8, inclusive=True), means, 0, growth=20)
    assert algorithm.stop_reason is StopReason.CONDITION_MET
    assert not _correct(algorithm, pair)
    assert [w.arm for w in algorithm.result().ranking[:2]] == [0, 1]


@pytest.mark.parametrize(
    ("make", "label"),
    [
        (lambda value: GOLD(20, inclusive=value), "inclusive"),
        (lambda value: ADE(20, share_samples=value), "share_samples"),
    ],
)
@pytest.mark.parametrize("value", ["false", "true", 0, 1, None])
def test_switches_refuse_anything_but_a_bool(make: Any, label: str, value: object) -> None:
    # bool("false") is True: a string from a config file must not turn a switch on silently.
    with pytest.raises(ConfigError, match=f"{label} must be true or false"):
        make(value)
