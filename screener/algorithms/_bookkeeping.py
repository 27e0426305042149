"""The pull bookkeeping every algorithm shares: which pulls were asked, answered or
released, how many of each worker's are pending, which workers are available, and what
``tell``, ``release`` and ``set_unavailable`` do to that state (the ledger's rules: a second
answer is a duplicate, an answer after release is late, an unknown id is an error)."""

from __future__ import annotations

import math
from collections import deque
from typing import Any, ClassVar, final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from screener.algorithms import _ledger
from screener.algorithms.ask_tell import (
    NO_ARMS,
    OUTCOME_BY_STATE,
    OUTCOMES,
    STATUSES,
    PullInfo,
    TellOutcome,
)
from screener.algorithms.result import StopReason
from screener.algorithms.signature import overrides_batch_form
from screener.arrays import IntArray
from screener.errors import ConfigError, InvalidRewardError, UnknownPullError
from screener.stats import ArmStats

_PENDING = _ledger.PENDING  # read once a pull by tell1
#: ``TellOutcome.ACCEPTED`` as a plain int: numpy compares an array with it several times
#: faster than with the enum member (read once a batch by tell_many).
_ACCEPTED = int(TellOutcome.ACCEPTED)

__all__ = ["PullBookkeeping"]


class PullBookkeeping:
    """The state of the pulls and workers of one run, and the answers' way into it; the
    ``Algorithm`` contract builds on it (``screener.algorithms.base``)."""

    name: ClassVar[str]
    #: Smallest pool the algorithm is defined for.
    min_workers: ClassVar[int] = 1

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if overrides_batch_form(cls, "_on_answers", "_on_answer1"):
            cls._on_answer1 = PullBookkeeping._answer1_as_batch  # type: ignore[method-assign]

    def __init__(
        self,
        n_workers: int,
        *,
        lower: float = 0.0,
        upper: float = 1.0,
        budget: int | None = None,
        seed: int = 0,
    ) -> None:
        if not isinstance(n_workers, int | np.integer) or n_workers < self.min_workers:
            raise ConfigError(
                f"{self.name} needs at least {self.min_workers} workers, got {n_workers}",
                "add workers to the pool",
            )
        if not (np.isfinite(lower) and np.isfinite(upper)) or lower >= upper:
            raise ConfigError(
                f"reward bounds must be finite with lower < upper, got [{lower}, {upper}]",
                "pass e.g. lower=0, upper=1",
            )
        if budget is not None and budget < 1:
            raise ConfigError(f"budget must be a positive number of pulls, got {budget}")
        self.n_arms = int(n_workers)
        self.lower = float(lower)
        self.upper = float(upper)
        self.budget = budget
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.stats = ArmStats(self.n_arms)
        self.pending = np.zeros(self.n_arms, dtype=np.int64)
        self.available = np.ones(self.n_arms, dtype=bool)
        self.unavailable_reason: dict[int, str] = {}
        self._ledger = _ledger.PullLedger(self.n_arms)
        self._retry: deque[int] = deque()
        self._released = 0
        self._dirty = True
        self._stop_reason: StopReason | None = None

    def tell(self, pull_id: int, reward: float) -> TellOutcome:
        """Report the reward of one pull. Idempotent: a second answer is a DUPLICATE no-op."""
        outcomes = self.tell_many(np.array([pull_id], dtype=np.int64), [reward])
        return TellOutcome(int(outcomes[0]))

    def tell_many(self, pull_ids: ArrayLike, rewards: ArrayLike) -> NDArray[np.int8]:
        """Report a batch of answers; returns one TellOutcome code per answer."""
        ids = np.asarray(pull_ids, dtype=np.int64).reshape(-1)
        values = np.asarray(rewards, dtype=np.float64).reshape(-1)
        if ids.size != values.size:
            raise ValueError("pull_ids and rewards must have the same length")
        self._check_known(ids)
        if ids.size == 1 and self.accepts_reward(float(values[0])):  # the one-answer path
            return self._tell_one(ids, values)
        good = (values >= self.lower) & (values <= self.upper)  # NaN fails both
        if not good.all():
            bad = ~good
            raise self._reward_error(int(ids[bad][0]), float(values[bad][0]))
        outcomes = self._outcomes(ids)
        accepted = outcomes == _ACCEPTED
        if accepted.any():
            new_ids = ids[accepted]
            arms = self._ledger.arms_of(new_ids)
            self._ledger.mark(new_ids, _ledger.ANSWERED)
            np.subtract.at(self.pending, arms, 1)  # the batch's arms only, not every worker's
            self._on_answers(new_ids, arms, values[accepted])
            self._dirty = True
        return outcomes

    def _tell_one(self, ids: IntArray, values: NDArray[np.float64]) -> NDArray[np.int8]:
        """``tell_many`` of one known id with a valid reward, in scalar steps."""
        pull_id = int(ids[0])
        state = self._ledger.state(pull_id)
        if state != _ledger.PENDING:
            return OUTCOME_BY_STATE[state : state + 1].copy()
        arms = self._ledger.arms_of(ids)
        self._ledger.mark(ids, _ledger.ANSWERED)
        self.pending[arms[0]] -= 1
        self._on_answers(ids.copy(), arms, values.copy())
        self._dirty = True
        return OUTCOME_BY_STATE[:1].copy()

    def tell1(self, pull_id: int, reward: float) -> TellOutcome:
        """``tell`` in scalar steps, for one-pull-at-a-time loops: the same rules (an unknown
        id raises UnknownPullError, a reward outside the bounds InvalidRewardError, a second
        answer is a DUPLICATE and one after release LATE, both no-ops) and the same state
        after, without arrays of one.

        Examples
        --------
        >>> from screener import RoundRobin
        >>> algorithm = RoundRobin(2)
        >>> pull_id, arm, seq = algorithm.ask1()
        >>> algorithm.tell1(pull_id, 1.0), algorithm.tell1(pull_id, 1.0)
        (<TellOutcome.ACCEPTED: 0>, <TellOutcome.DUPLICATE: 1>)
        """
        ledger = self._ledger
        if not 0 <= pull_id < ledger.size:
            self._check_known(np.array([pull_id], dtype=np.int64))  # raises, one message
        reward = float(reward)
        # lower <= reward <= upper is False for NaN; infinities fail it too (finite bounds)
        if not self.lower <= reward <= self.upper:
            raise self._reward_error(pull_id, reward)
        state = ledger.state(pull_id)
        if state != _PENDING:
            return OUTCOMES[state]
        arm = ledger.answer1(pull_id)
        self.pending[arm] -= 1
        self._on_answer1(pull_id, arm, reward)
        self._dirty = True
        return TellOutcome.ACCEPTED

    @final
    def preview(self, pull_ids: ArrayLike) -> NDArray[np.int8]:
        """The TellOutcome ``tell_many`` would give each answer now, rewards aside, without
        telling: the one rule for duplicates and late answers, which the orchestrator also
        needs before it journals a batch (UnknownPullError for an id never handed out).

        Examples
        --------
        >>> from screener import RoundRobin
        >>> algorithm = RoundRobin(2)
        >>> ask = algorithm.ask(2)
        >>> _ = algorithm.release(1)
        >>> [TellOutcome(o).name for o in algorithm.preview([0, 0, 1])]
        ['ACCEPTED', 'DUPLICATE', 'LATE']
        >>> algorithm.n_answered  # nothing was told
        0
        """
        ids = np.asarray(pull_ids, dtype=np.int64).reshape(-1)
        self._check_known(ids)
        return self._outcomes(ids)

    def _outcomes(self, ids: IntArray) -> NDArray[np.int8]:
        states = self._ledger.states_of(ids)
        outcomes = OUTCOME_BY_STATE[states]
        accepted = states == _ledger.PENDING
        if ids.size > 1 and not (ids[1:] > ids[:-1]).all() and accepted.any():
            # The same pending id twice in one batch: only its first copy counts.
            _, first_index = np.unique(ids, return_index=True)
            first = np.zeros(ids.size, dtype=bool)
            first[first_index] = True
            outcomes[accepted & ~first] = TellOutcome.DUPLICATE
        return outcomes

    @final
    def release(self, pull_id: int) -> bool:
        """A pull failed, timed out or was cancelled: forget it and reissue it if useful.

        Returns False when the pull had already been answered or released (a no-op).
        The freed question slot goes to the next pull of the same worker, which is put first
        in line, so a released pull is replaced by the same question to the same worker.
        """
        self._check_known(np.array([pull_id], dtype=np.int64))
        if self._ledger.state(pull_id) != _ledger.PENDING:
            return False
        arm = self._ledger.release(pull_id)
        self.pending[arm] -= 1
        self._released += 1
        if self.available[arm]:
            self._retry.append(arm)
        self._on_released(pull_id, arm)
        return True

    @final
    def set_unavailable(self, arm: int, reason: str) -> None:
        """The worker left or ran out of gold questions: never ask for it again."""
        self._check_arm(arm)
        if not self.available[arm]:
            return
        self.available[arm] = False
        self.unavailable_reason[arm] = reason
        self._retry = deque(a for a in self._retry if a != arm)
        self._dirty = True
        self._on_unavailable(arm)

    @property
    def finished(self) -> bool:
        return self._stop_reason is not None

    @property
    def stop_reason(self) -> StopReason | None:
        return self._stop_reason

    @property
    def n_answered(self) -> int:
        return self.stats.n_samples

    @property
    def n_pending(self) -> int:
        return self._ledger.n_pending

    @property
    def n_asked(self) -> int:
        return self._ledger.size

    def pull_info(self, pull_id: int) -> PullInfo | None:
        """Arm, seq and status of a pull this algorithm handed out; None for unknown ids."""
        if not 0 <= pull_id < self._ledger.size:
            return None
        ledger = self._ledger
        return PullInfo(ledger.arm(pull_id), ledger.seq(pull_id), STATUSES[ledger.state(pull_id)])

    def is_pending(self, pull_id: int) -> bool:
        """True for a pull handed out and neither answered nor released (cheap)."""
        return 0 <= pull_id < self._ledger.size and self._ledger.state(pull_id) == _ledger.PENDING

    def accepts_reward(self, reward: float) -> bool:
        """True when ``reward`` is a finite number inside the reward bounds."""
        return math.isfinite(reward) and self.lower <= reward <= self.upper

    # ----------------------------------------------------------- hooks of the tell path
    def _on_answers(self, pull_ids: IntArray, arms: IntArray, rewards: NDArray[np.float64]) -> None:
        """Hook: accepted answers (first copies only). The default updates the statistics."""
        self.stats.update_many(arms, rewards)

    def _on_answer1(self, pull_id: int, arm: int, reward: float) -> None:
        """Hook of ``tell1``: one accepted answer, with the effect ``_on_answers`` has on
        arrays of one. The default updates the statistics, as ``_on_answers`` does; a class
        that overrides ``_on_answers`` alone gets ``_answer1_as_batch`` instead, and one
        whose answer hook has a scalar form overrides both."""
        self.stats.update(arm, reward)

    def _answer1_as_batch(self, pull_id: int, arm: int, reward: float) -> None:
        """``_on_answer1`` through ``_on_answers``, with arrays of one."""
        ids = np.array([pull_id], dtype=np.int64)
        self._on_answers(ids, np.array([arm], dtype=np.int64), np.array([reward]))

    def _on_released(self, pull_id: int, arm: int) -> None:
        """After a pending pull of ``arm`` was released (it will be asked again)."""

    def _on_unavailable(self, arm: int) -> None:
        """After ``arm`` became unavailable."""

    # ------------------------------------------------------------------------ helpers
    def _check_arm(self, arm: int) -> None:
        if not 0 <= arm < self.n_arms:
            raise ConfigError(f"no worker with index {arm} (pool has {self.n_arms})")

    def _check_known(self, ids: IntArray) -> None:
        if ids.size == 1 and 0 <= ids[0] < self._ledger.size:
            return
        unknown = (ids < 0) | (ids >= self._ledger.size)
        if unknown.any():
            raise UnknownPullError(
                f"pull {int(ids[unknown][0])} was never handed out by this {self.name} "
                f"(it has asked {self._ledger.size} pulls)",
                "answers must name a pull id returned by ask()",
            )

    def _reward_error(self, pull_id: int, reward: float) -> InvalidRewardError:
        return InvalidRewardError(
            f"reward {reward!r} for pull {pull_id} is outside [{self.lower}, {self.upper}]",
            "check the oracle's scoring or the algorithm's reward bounds",
        )

    def _take_retries(self, limit: int) -> IntArray:
        taken: list[int] = []
        while self._retry and len(taken) < limit:
            taken.append(self._retry.popleft())
        return np.array(taken, dtype=np.int64) if taken else NO_ARMS.copy()

    def _availability_reason(self, arm: int) -> str | None:
        reason = self.unavailable_reason.get(arm)
        if reason is None:
            return None
        # Said once: an answer source's own reason may already start with the word.
        return f"unavailable: {reason.removeprefix('unavailable').lstrip(': ') or 'left'}"
