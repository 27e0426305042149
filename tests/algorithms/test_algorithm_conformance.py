"""Every registered algorithm through the algorithm conformance suite (each check, each test
setup), and the suite catching algorithms that break one rule of the contract each."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pytest
from numpy.typing import ArrayLike, NDArray

from screener.algorithms import (
    ALGORITHMS,
    Algorithm,
    AlgorithmSetup,
    Ask,
    NaiveRoundRobin,
    Result,
    RoundRobin,
    StopReason,
    TellOutcome,
    UniformThresholding,
    WeightedRoundRobin,
    accepted_parameters,
    create_algorithm,
)
from screener.algorithms.signature import parameters
from screener.errors import ConfigError
from screener.testing import ConformanceError
from screener.testing.algorithm_conformance import (
    ALGORITHM_CHECKS,
    TEST_SETUPS,
    AlgorithmConformance,
    check_algorithm,
)

IntArray = NDArray[np.int64]
HISTORY_CHECKS = {"deterministic", "batch_asks", "results", "rebuild"}


def _cases() -> list[Any]:
    return [
        pytest.param(name, setup, check, id=f"{name}{setup.label and '-' + setup.label}-{check}")
        for name, setups in TEST_SETUPS.items()
        for setup in setups
        for check in ALGORITHM_CHECKS
    ]


def _takes_joiners(name: str, setup: AlgorithmSetup) -> bool:
    """Whether the method, so set up, takes a worker who joins mid-run."""
    algorithm = create_algorithm(name, setup.n_workers, setup.params)
    try:
        algorithm.add_workers(1)
    except ConfigError:
        return False
    return True


def _histories(setup: AlgorithmSetup, check: str) -> int:
    """Two random histories for an algorithm's default setup, one for its variants (the
    deterministic check plays one in any case)."""
    return 1 if setup.label or check == "deterministic" else 2


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_every_registered_algorithm_declares_test_setups(name: str) -> None:
    """Each class lists its own setups (one inherited would test the parent's code paths),
    at least one, each label once; TEST_SETUPS is read from them."""
    cls = ALGORITHMS[name]
    setups = vars(cls).get("test_setups", ())
    assert setups, f"{cls.__qualname__} lists no test_setups of its own"
    assert len({setup.label for setup in setups}) == len(setups)
    assert TEST_SETUPS[name] is setups


@pytest.mark.parametrize(("name", "setup", "check"), _cases())
def test_registered_algorithms_keep_the_contract(
    name: str, setup: AlgorithmSetup, check: str
) -> None:
    histories = _histories(setup, check)
    report = check_algorithm(
        name, setup.params, n_workers=setup.n_workers, means=setup.means,
        histories=histories, only=[check],
    )  # fmt: skip
    result = report[check]
    if check == "join_replay" and not _takes_joiners(name, setup):
        # Nothing to replay: the method refuses joiners (the joining check checks that).
        assert result.status == "skipped", str(report)
        return
    assert result.status == "passed", str(report)
    endings = [note.rsplit(", ", 1)[-1] for note in result.notes if note.startswith("history")]
    if check in HISTORY_CHECKS:
        # Each history runs to its end, so stopping (and what follows it) is covered too.
        assert len(endings) == histories and "unfinished" not in endings, str(report)
    if check == "budget":
        assert endings == [StopReason.BUDGET_SPENT.value], str(report)


# ------------------------------------------------------------------- broken algorithms
class BatchesDiffer(RoundRobin):
    """Hands out a batch in reverse order: ask(k) is not k calls of ask(1)."""

    def _schedule(self, limit: int) -> IntArray:
        return super()._schedule(limit)[::-1].copy()


class Unseeded(RoundRobin):
    """Shuffles with an unseeded generator: two algorithms with one seed differ."""

    _shared = np.random.default_rng()

    def _schedule(self, limit: int) -> IntArray:
        return self._shared.permutation(super()._schedule(limit))


class CountsDuplicates(RoundRobin):
    """Counts a second answer to the same pull again: telling is not idempotent."""

    def tell_many(self, pull_ids: ArrayLike, rewards: ArrayLike) -> NDArray[np.int8]:
        outcomes = super().tell_many(pull_ids, rewards)
        again = outcomes == TellOutcome.DUPLICATE
        if again.any():
            ids = np.asarray(pull_ids, dtype=np.int64).reshape(-1)[again]
            values = np.asarray(rewards, dtype=np.float64).reshape(-1)[again]
            self.stats.update_many(self._ledger.arms_of(ids), values)
            self._dirty = True
        return outcomes


class TrustsPullIds(RoundRobin):
    """Does not check that a pull id was handed out."""

    def _check_known(self, ids: IntArray) -> None:
        return None


class ClipsRewards(RoundRobin):
    """Clips rewards into its bounds instead of rejecting them."""

    def tell_many(self, pull_ids: ArrayLike, rewards: ArrayLike) -> NDArray[np.int8]:
        clipped = np.nan_to_num(np.asarray(rewards, dtype=np.float64), posinf=1.0, neginf=0.0)
        return super().tell_many(pull_ids, np.clip(clipped, self.lower, self.upper))


class NeverRetries(RoundRobin):
    """Forgets a released pull instead of asking it again first."""

    def _on_released(self, pull_id: int, arm: int) -> None:
        self._retry.clear()


class AsksEveryone(RoundRobin):
    """Asks every worker in turn, whether it left or not."""

    def _schedule(self, limit: int) -> IntArray:
        return (self.n_asked + np.arange(limit, dtype=np.int64)) % self.n_arms


class StopsShort(RoundRobin):
    """Says 'budget spent' one answer before the budget is."""

    def _next_ask(self, limit: int) -> Ask:
        if self.budget is not None and self.n_answered >= self.budget - 1:
            return self._stop(StopReason.BUDGET_SPENT)
        return super()._next_ask(limit)


class RefreshCounts(RoundRobin):
    """Lets the number of refreshes, which result() triggers, steer its schedule."""

    refreshes = 0

    def _refresh(self) -> None:
        super()._refresh()
        self.refreshes += 1

    def _schedule(self, limit: int) -> IntArray:
        return np.roll(super()._schedule(limit), self.refreshes)


class LiveExtra(RoundRobin):
    """Puts its live counts array into each result: results are not snapshots."""

    def _describe(self) -> Result:
        result = super()._describe()
        return self._result(result.workers, threshold=result.threshold,
                            extra={**result.extra, "counts": self.stats.count})  # fmt: skip


class ForgetsRho(WeightedRoundRobin):
    """Leaves rho out of params(): the rebuilt algorithm schedules differently."""

    def params(self) -> dict[str, Any]:
        return {key: value for key, value in super().params().items() if key != "rho"}


class CountsTellBatches(NaiveRoundRobin):
    """Lets the number of tell calls steer its schedule: a replay, which tells each run of
    answers at once, differs from the live run."""

    tells = 0

    def tell_many(self, pull_ids: ArrayLike, rewards: ArrayLike) -> NDArray[np.int8]:
        self.tells += 1
        return super().tell_many(pull_ids, rewards)

    def _schedule(self, limit: int) -> IntArray:
        return np.roll(super()._schedule(limit), self.tells)


class ForgetsTellsInSnapshots(CountsTellBatches):
    """Leaves its tell count out of its pickled state: the copy read back from a snapshot
    schedules differently from the live algorithm."""

    def __getstate__(self) -> dict[str, Any]:
        return {key: value for key, value in self.__dict__.items() if key != "tells"}


class ScalarScheduleDiffers(RoundRobin):
    """Its one-pull schedule skips a worker: ask1 is not ask(1)."""

    def _schedule1(self) -> int:
        arm = super()._schedule1()
        return arm if arm < 0 else (arm + 1) % self.n_arms


class ScalarTellCountsTwice(RoundRobin):
    """Counts each answer told through tell1 twice in its statistics."""

    def _on_answer1(self, pull_id: int, arm: int, reward: float) -> None:
        super()._on_answer1(pull_id, arm, reward)
        self.stats.update(arm, reward)


class ScalarTellClips(RoundRobin):
    """Clips rewards given to tell1 into its bounds instead of rejecting them."""

    def tell1(self, pull_id: int, reward: float) -> TellOutcome:
        clipped = 0.0 if reward != reward else min(max(reward, self.lower), self.upper)
        return super().tell1(pull_id, clipped)


class AlwaysFirst(UniformThresholding):
    """Its own schedule below a parent whose schedule has a scalar form."""

    def _schedule(self, limit: int) -> IntArray:
        return np.flatnonzero(self.available)[:1].astype(np.int64)


class FlipsAnswers(RoundRobin):
    """Its own answer hook below a parent whose hook has a scalar form."""

    def _on_answers(self, pull_ids: IntArray, arms: IntArray, rewards: NDArray[np.float64]) -> None:
        super()._on_answers(pull_ids, arms, self.lower + self.upper - rewards)


@pytest.mark.parametrize(
    ("cls", "params"),
    [(AlwaysFirst, {"threshold": 0.5, "budget": 300}), (FlipsAnswers, {"k": 1.5, "delta": 0.1})],
)
def test_a_batch_hook_overridden_alone_is_kept_on_the_scalar_path(
    cls: type[Algorithm], params: dict[str, Any]
) -> None:
    """ask1 and tell1 go through the subclass's ``_schedule`` / ``_on_answers``, not the
    scalar forms it inherits, so they still make what ask(1) and tell make."""
    report = check_algorithm(cls, params, means=OUTLIER, only=["scalar_path", "scalar_tell"])
    assert report.ok, str(report)


_KSIGMA: dict[str, Any] = {"k": 1.5, "delta": 0.1, "budget": 300}
OUTLIER = (0.1, 0.15, 0.2, 0.25, 0.3, 1.0)
BROKEN = [
    pytest.param(Unseeded, {}, "deterministic", "pure function of its seed", id="unseeded"),
    pytest.param(BatchesDiffer, {}, "batch_asks", "k calls of ask(1)", id="batches-differ"),
    pytest.param(ScalarScheduleDiffers, {}, "scalar_path", "exactly what ask(1)",
                 id="scalar-schedule-differs"),
    pytest.param(ScalarTellCountsTwice, {}, "scalar_path", "exactly what ask(1)",
                 id="scalar-tell-counts-twice"),
    pytest.param(ScalarTellClips, {}, "scalar_tell", "InvalidRewardError", id="scalar-tell-clips"),
    pytest.param(RefreshCounts, {}, "results", "must change nothing", id="refresh-counts"),
    pytest.param(LiveExtra, {}, "results", "must be a snapshot", id="live-extra"),
    pytest.param(CountsDuplicates, {}, "idempotent_tell", "idempotent", id="counts-duplicates"),
    pytest.param(TrustsPullIds, {}, "unknown_pull", "UnknownPullError", id="trusts-pull-ids"),
    pytest.param(ClipsRewards, {}, "reward_bounds", "InvalidRewardError", id="clips-rewards"),
    pytest.param(NeverRetries, {}, "release_retry", "asked again first", id="never-retries"),
    pytest.param(AsksEveryone, {}, "unavailable", "never asked again", id="asks-everyone"),
    pytest.param(StopsShort, {}, "budget", "whole budget", id="stops-short"),
    pytest.param(ForgetsRho, {"rho": 4.0}, "rebuild", "rebuild an identical", id="forgets-rho"),
    pytest.param(CountsTellBatches, {"delta": 0.02}, "replay", "replaying the journal",
                 id="counts-tell-batches"),
    pytest.param(ForgetsTellsInSnapshots, {"delta": 0.02}, "snapshot", "keep the whole state",
                 id="forgets-tells-in-snapshots"),
]  # fmt: skip


@pytest.mark.parametrize(("cls", "params", "check", "words"), BROKEN)
def test_the_suite_catches_an_algorithm_that_breaks_one_rule(
    cls: type[RoundRobin], params: dict[str, Any], check: str, words: str
) -> None:
    report = check_algorithm(cls, _KSIGMA | params, means=OUTLIER, only=[check])
    assert report[check].status == "failed", str(report)
    assert words in report[check].message
    # The unbroken parent passes the same check with the same parameters.
    parent = check_algorithm(cls.__mro__[1], _KSIGMA | params, means=OUTLIER, only=[check])
    assert parent.ok, str(parent)
    with pytest.raises(ConformanceError, match=f"{check}: .*screener/algorithms/base.py"):
        report.raise_for_failures()


def test_a_report_lists_every_check_in_order() -> None:
    report = check_algorithm("quiz")
    assert [r.name for r in report.results] == list(ALGORITHM_CHECKS)
    assert report.ok and report.oracle == "quiz"
    text = str(report)
    assert text.startswith("conformance of quiz:") and text.count("passed") == len(ALGORITHM_CHECKS)


def test_bad_requests_say_what_to_pass() -> None:
    with pytest.raises(ConformanceError, match="unknown conformance check"):
        check_algorithm("quiz", only=["replays"])
    with pytest.raises(ConformanceError, match="no test parameters"):
        check_algorithm("no-such-algorithm")
    with pytest.raises(ConfigError, match="not a factory"):
        check_algorithm(lambda n, seed: RoundRobin(n, seed=seed), {"k": 1.0})
    with pytest.raises(ConfigError, match="3 means for 6 workers"):
        check_algorithm("rr", means=(0.1, 0.2, 0.3))


def test_a_check_that_cannot_run_says_why() -> None:
    # Top-2 of 3 workers with eps = 1: decided before any answer, so nothing is in flight.
    from screener.algorithms import AdaptiveTopK

    report = check_algorithm(
        lambda n, seed: AdaptiveTopK(n, k=2, eps=1.0, seed=seed), n_workers=3, only=["late_tell"]
    )
    assert report["late_tell"].status == "skipped"
    assert "did not hand out 2 pulls" in report["late_tell"].message


# ----------------------------------------------------------- the pytest base class itself
class TestRoundRobinThroughTheBaseClass(AlgorithmConformance):
    """What an outside author writes: pytest collects one test per check."""

    algorithm_class = RoundRobin
    params: ClassVar[dict[str, Any]] = {"k": 1.0, "delta": 0.2, "budget": 200}
    histories = 1


def test_the_base_class_fails_a_broken_algorithm_by_name() -> None:
    class Broken(AlgorithmConformance):
        algorithm_class = BatchesDiffer
        params = _KSIGMA

    with pytest.raises(ConformanceError, match=r"^batch_asks: ask\(\d+\) gave"):
        Broken().run_check("batch_asks")
    with pytest.raises(ConformanceError, match="sets no algorithm_class"):
        AlgorithmConformance().run_check("deterministic")


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_params_name_every_constructor_parameter_and_rebuild_the_algorithm(name: str) -> None:
    """params() is derived from the constructor's signature: one key per keyword parameter,
    and the values (defaults included) rebuild an algorithm with the same params."""
    cls = ALGORITHMS[name]
    setup = TEST_SETUPS[name][0]
    algorithm = cls(setup.n_workers, **setup.params, seed=5)
    params = algorithm.params()
    assert list(params) == [p.name for p in parameters(cls)]
    assert set(params) == accepted_parameters(cls)
    assert cls(setup.n_workers, **params).params() == params
    for key, given in setup.params.items():
        assert params[key] == given, key
