"""The ask/tell contract every algorithm follows.

An algorithm is a pure decision object: no I/O, no clock, no awaits. It is asked for pulls
(one or a batch), told answers in any order, told when a pull failed (timed out, errored,
cancelled) and when a worker became unavailable; it says ``wait`` when it needs answers back
before it can choose a useful pull, and ``done`` when it has stopped.

Template method: the base class keeps the ledger of pulls, the per-arm statistics, budget,
retries and availability; a subclass supplies three steps (``_refresh`` the estimates from the
answers that arrived, ``_condition_met``, ``_schedule`` the next arms) and ``_describe``.

Two rules make replay exact. The stopping check runs lazily at the start of ``ask`` (after
answers arrived), never inside ``tell``; and ``ask(k)`` hands out exactly what k calls of
``ask(1)`` with no tell between them would. A journal that records asks and answers in the
order they happened therefore rebuilds the same state, call by call.
"""

from __future__ import annotations

import abc
import enum
import math
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from screener.algorithms import _ledger
from screener.algorithms._checks import check_count
from screener.algorithms._signature import parameters
from screener.algorithms.result import Decision, Result, StopReason, Threshold, WorkerResult
from screener.arrays import IntArray
from screener.errors import (
    ConfigError,
    InvalidRewardError,
    UnknownPullError,
)
from screener.stats import ArmStats

__all__ = ["Algorithm", "Ask", "AskState", "Pull", "PullInfo", "PullStatus", "TellOutcome"]

_EMPTY = np.empty(0, dtype=np.int64)
_EMPTY.flags.writeable = False


class AskState(enum.StrEnum):
    """What an ``ask`` returned: pulls to send, nothing now (wait for answers), or done.

    Examples
    --------
    >>> from screener import RoundRobin
    >>> algorithm = RoundRobin(2, budget=2)
    >>> algorithm.ask(5).state, len(algorithm.ask(5))  # two pulls, then the budget is out
    (<AskState.PULL: 'pull'>, 0)
    """

    PULL = "pull"
    WAIT = "wait"
    DONE = "done"


class PullStatus(enum.IntEnum):
    """Where a pull is: asked and unanswered, answered, or released (given up, to be asked
    again).

    Examples
    --------
    >>> from screener import RoundRobin
    >>> algorithm = RoundRobin(2)
    >>> ask = algorithm.ask(2)
    >>> _ = algorithm.tell(0, 1.0)
    >>> _ = algorithm.release(1)
    >>> algorithm.pull_info(0).status, algorithm.pull_info(1).status
    (<PullStatus.ANSWERED: 1>, <PullStatus.RELEASED: 2>)
    """

    PENDING = _ledger.PENDING
    ANSWERED = _ledger.ANSWERED
    RELEASED = _ledger.RELEASED


@dataclass(frozen=True, slots=True)
class PullInfo:
    """What an algorithm knows of one pull: its worker (arm), question number and status.

    Examples
    --------
    >>> from screener import RoundRobin
    >>> algorithm = RoundRobin(3)
    >>> ask = algorithm.ask(3)
    >>> algorithm.pull_info(2)
    PullInfo(arm=2, seq=0, status=<PullStatus.PENDING: 0>)
    """

    arm: int
    seq: int
    status: PullStatus


class TellOutcome(enum.IntEnum):
    """What ``tell`` did with an answer: used it, or ignored it as a second copy or as the
    answer to a pull already released.

    Examples
    --------
    >>> from screener import RoundRobin
    >>> algorithm = RoundRobin(2)
    >>> ask = algorithm.ask(2)
    >>> algorithm.tell(0, 1.0), algorithm.tell(0, 1.0)  # telling twice changes nothing
    (<TellOutcome.ACCEPTED: 0>, <TellOutcome.DUPLICATE: 1>)
    """

    ACCEPTED = 0
    DUPLICATE = 1
    LATE = 2  # the pull had already been released (timed out, failed or cancelled)


@dataclass(frozen=True, slots=True)
class Pull:
    """One gold question to ask: pull ``id`` of ``arm``, the arm's ``seq``-th question.

    Examples
    --------
    >>> from screener import RoundRobin
    >>> pull = next(iter(RoundRobin(3).ask(1)))
    >>> pull.id, pull.arm, pull.seq
    (0, 0, 0)
    """

    id: int
    arm: int
    seq: int


@dataclass(frozen=True, slots=True)
class Ask:
    """The answer to ``ask``: a batch of pulls with consecutive ids, or wait, or done.

    Examples
    --------
    >>> from screener import RoundRobin
    >>> ask = RoundRobin(3).ask(2)
    >>> ask.state.value, ask.ids.tolist(), ask.arms.tolist(), ask.seqs.tolist()
    ('pull', [0, 1], [0, 1], [0, 0])
    >>> list(ask)[1]
    Pull(id=1, arm=1, seq=0)
    """

    state: AskState
    first_id: int = 0
    arms: IntArray = field(default_factory=lambda: _EMPTY)
    seqs: IntArray = field(default_factory=lambda: _EMPTY)

    @property
    def ids(self) -> IntArray:
        return np.arange(self.first_id, self.first_id + self.arms.size, dtype=np.int64)

    @property
    def done(self) -> bool:
        return self.state is AskState.DONE

    @property
    def wait(self) -> bool:
        return self.state is AskState.WAIT

    def __len__(self) -> int:
        return int(self.arms.size)

    def __iter__(self) -> Iterator[Pull]:
        pairs = zip(self.arms.tolist(), self.seqs.tolist(), strict=True)
        for offset, (arm, seq) in enumerate(pairs):
            yield Pull(self.first_id + offset, arm, seq)


class Algorithm(abc.ABC):
    """Base class of every screening algorithm (see the module docstring for the contract).

    Examples
    --------
    The ask / tell loop every algorithm runs, here Round-Robin against simulated answers
    (``simulate`` runs the same loop):

    >>> import numpy as np
    >>> from screener import RoundRobin
    >>> algorithm = RoundRobin(3, k=1.0, budget=30, seed=0)
    >>> ask = algorithm.ask(3)  # three pulls: one per worker
    >>> ask.arms.tolist(), ask.seqs.tolist()
    ([0, 1, 2], [0, 0, 0])
    >>> algorithm.tell_many(ask.ids.tolist(), [1.0, 1.0, 0.0]).tolist()  # 0: accepted
    [0, 0, 0]
    >>> algorithm.n_answered, algorithm.finished
    (3, False)
    """

    name: ClassVar[str]
    #: What the algorithm promises when its stopping condition holds; None for heuristics.
    guarantee: ClassVar[str | None] = None
    #: Smallest pool the algorithm is defined for.
    min_workers: ClassVar[int] = 1
    #: Why the algorithm needs its roster fixed when it starts; None when workers may join,
    #: leave and come back mid-run (``add_workers``, ``set_unavailable``, ``set_available``).
    fixed_roster: ClassVar[str | None] = (
        "its decisions are defined relative to the whole crowd it started with"
    )
    #: True when a decided worker keeps its decision for the rest of the run (it can be acted
    #: on at once); False when decisions are provisional until the run stops.
    decisions_final: ClassVar[bool] = False
    #: No worker is decided before it has this many answers. Fixed-confidence algorithms take
    #: it as a parameter (``_set_min_answers``); 1 is the papers' behaviour.
    min_answers: int = 1

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

    # ----------------------------------------------------------------- public contract
    @final
    def ask(self, limit: int = 1) -> Ask:
        """Up to ``limit`` new pulls, or WAIT (answers needed first), or DONE."""
        if limit < 1:
            raise ConfigError(f"ask limit must be at least 1, got {limit}")
        if self._stop_reason is not None:
            return Ask(AskState.DONE)
        self._before_ask()
        ask = self._next_ask(limit)
        self._on_asked(ask)
        return ask

    def _next_ask(self, limit: int) -> Ask:
        self._ensure_fresh()
        if self._condition_met():
            return self._stop(StopReason.CONDITION_MET)
        n_pending = int(self.pending.sum())
        if self.budget is not None:
            room = self.budget - self.stats.n_samples - n_pending
            if room <= 0:
                return self._stop(StopReason.BUDGET_SPENT) if n_pending == 0 else _WAIT
            limit = min(limit, room)
        arms = self._take_retries(limit)
        retried = arms.size
        # Retried pulls count as pending before the schedule runs, as they would after one
        # ask(1) each (a schedule may depend on pending counts, e.g. WRR's m_i + pending_i).
        _count_into(self.pending, arms)
        if arms.size < limit and self._can_progress():
            scheduled = self._schedule(limit - arms.size)
            arms = scheduled if arms.size == 0 else np.concatenate([arms, scheduled])
        if arms.size == 0:
            if self._condition_met():  # a schedule may conclude without a pull (ADE's free pairs)
                return self._stop(StopReason.CONDITION_MET)
            # Nothing useful to pull: wait for answers, or stop if none can come.
            return self._stop(StopReason.WORKERS_EXHAUSTED) if n_pending == 0 else _WAIT
        first, seqs = self._ledger.append(arms)
        _count_into(self.pending, arms[retried:])
        arms.flags.writeable = False
        seqs.flags.writeable = False
        return Ask(AskState.PULL, first, arms, seqs)

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
        bad = ~np.isfinite(values) | (values < self.lower) | (values > self.upper)
        if bad.any():
            raise InvalidRewardError(
                f"reward {values[bad][0]!r} for pull {ids[bad][0]} is outside "
                f"[{self.lower}, {self.upper}]",
                "check the oracle's scoring or the algorithm's reward bounds",
            )
        outcomes = self._outcomes(ids)
        accepted = outcomes == TellOutcome.ACCEPTED
        if accepted.any():
            new_ids = ids[accepted]
            arms = self._ledger.arms_of(new_ids)
            self._ledger.mark(new_ids, _ledger.ANSWERED)
            self.pending -= np.bincount(arms, minlength=self.n_arms)
            self._on_answers(new_ids, arms, values[accepted])
            self._dirty = True
        return outcomes

    def _tell_one(self, ids: IntArray, values: NDArray[np.float64]) -> NDArray[np.int8]:
        """``tell_many`` of one known id with a valid reward, in scalar steps."""
        pull_id = int(ids[0])
        state = self._ledger.state(pull_id)
        if state != _ledger.PENDING:
            return _OUTCOME_BY_STATE[state : state + 1].copy()
        arms = self._ledger.arms_of(ids)
        self._ledger.mark(ids, _ledger.ANSWERED)
        self.pending[arms[0]] -= 1
        self._on_answers(ids.copy(), arms, values.copy())
        self._dirty = True
        return _ACCEPTED_ONE.copy()

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
        outcomes = _OUTCOME_BY_STATE[states]
        accepted = states == _ledger.PENDING
        if ids.size > 1 and not bool(np.all(ids[1:] > ids[:-1])) and accepted.any():
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
    def add_workers(self, count: int = 1) -> IntArray:
        """Workers who joined mid-run: ``count`` new arms, numbered after the existing ones
        (returned), asked and decided like the others from now on. A run that had stopped
        because every worker was decided, or none could be asked, is open again; a spent
        budget stays spent. An algorithm that needs a fixed roster refuses, saying why, and
        changes nothing.

        Examples
        --------
        >>> from screener.algorithms import CrowdPrior
        >>> algorithm = CrowdPrior(2, threshold=0.6)
        >>> algorithm.add_workers(2).tolist(), algorithm.n_arms
        ([2, 3], 4)
        """
        if self.fixed_roster is not None:
            raise ConfigError(
                f"{self.name} needs a fixed roster: {self.fixed_roster}",
                "screen an open pool against a bar: crowd-prior, confident-thresholding, "
                "fdr-thresholding, toloka-rule, quiz or lsa",
            )
        check_count("count", count, 1, "add at least one worker")
        self._check_joining(count)
        first = self.n_arms
        arms = np.arange(first, first + count, dtype=np.int64)
        self.n_arms += count
        self.stats.grow(count)
        self.pending = np.concatenate([self.pending, np.zeros(count, dtype=np.int64)])
        self.available = np.concatenate([self.available, np.ones(count, dtype=bool)])
        self._ledger.grow(count)
        self._on_joined(arms)
        self._dirty = True
        self._reopen()
        return arms

    @final
    def set_available(self, arm: int) -> None:
        """A worker who left (``set_unavailable``) came back: it may be asked again. Only for
        algorithms whose workers may come and go (``fixed_roster`` is None).

        Examples
        --------
        >>> from screener.algorithms import CrowdPrior
        >>> algorithm = CrowdPrior(3, threshold=0.6)
        >>> algorithm.set_unavailable(1, "worker left")
        >>> algorithm.set_available(1)
        >>> bool(algorithm.available[1]), algorithm.unavailable_reason
        (True, {})
        """
        if not 0 <= arm < self.n_arms:
            raise ConfigError(f"no worker with index {arm} (pool has {self.n_arms})")
        if self.fixed_roster is not None:
            raise ConfigError(
                f"{self.name} needs a fixed roster: {self.fixed_roster}",
                "a worker who left stays gone for it; screen open pools with crowd-prior",
            )
        if self.available[arm]:
            return
        self.available[arm] = True
        del self.unavailable_reason[arm]
        self._dirty = True
        self._on_returned(arm)
        self._reopen()

    @final
    def ask_for(self, arm: int, *, audit: bool = False) -> Ask:
        """One pull of worker ``arm``, if the algorithm would use its answer now: the question
        a stream asks when that worker arrives ("a gold question for this one?"). WAIT when it
        would not (the worker is decided, at its bound, waiting for an answer in flight, or
        gone), DONE when the run has stopped. Replays like ``ask``: the same calls in the same
        order give the same pulls. ``audit``: a question to a worker already decided, whose
        answer the method may use to reconsider it (only where ``_audits`` says so).

        Examples
        --------
        >>> from screener.algorithms import CrowdPrior
        >>> algorithm = CrowdPrior(3, threshold=0.6)
        >>> ask = algorithm.ask_for(2)
        >>> ask.state.value, ask.arms.tolist(), ask.seqs.tolist()
        ('pull', [2], [0])
        """
        if not 0 <= arm < self.n_arms:
            raise ConfigError(f"no worker with index {arm} (pool has {self.n_arms})")
        if self._stop_reason is not None:
            return Ask(AskState.DONE)
        self._before_ask()
        ask = self._next_ask_for(arm, audit)
        self._on_asked_for(ask)
        return ask

    def _next_ask_for(self, arm: int, audit: bool) -> Ask:
        self._ensure_fresh()
        if self._condition_met() and not audit:
            return self._stop(StopReason.CONDITION_MET)
        if self.budget is not None and self.budget - self.stats.n_samples - self.n_pending <= 0:
            return self._stop(StopReason.BUDGET_SPENT) if self.n_pending == 0 else _WAIT
        retried = arm in self._retry
        if retried:
            self._retry.remove(arm)
        elif not (self.available[arm] and (self._audits(arm) if audit else self._wants(arm))):
            return _WAIT
        arms = np.array([arm], dtype=np.int64)
        first, seqs = self._ledger.append(arms)
        self.pending[arm] += 1
        arms.flags.writeable = False
        seqs.flags.writeable = False
        return Ask(AskState.PULL, first, arms, seqs)

    @final
    def set_unavailable(self, arm: int, reason: str) -> None:
        """The worker left or ran out of gold questions: never ask for it again."""
        if not 0 <= arm < self.n_arms:
            raise ConfigError(f"no worker with index {arm} (pool has {self.n_arms})")
        if not self.available[arm]:
            return
        self.available[arm] = False
        self.unavailable_reason[arm] = reason
        self._retry = deque(a for a in self._retry if a != arm)
        self._dirty = True
        self._on_unavailable(arm)

    def result(self) -> Result:
        """An immutable snapshot of the current conclusions (legal at any time)."""
        self._ensure_fresh()
        return self._describe()

    def n_undecided(self) -> int:
        """How many workers ``result()`` would show undecided (an algorithm whose decisions
        are at hand counts them without building the result)."""
        return sum(w.decision is Decision.UNDECIDED for w in self.result().workers)

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
        return int(self.pending.sum())

    @property
    def n_asked(self) -> int:
        return self._ledger.size

    def pull_info(self, pull_id: int) -> PullInfo | None:
        """Arm, seq and status of a pull this algorithm handed out; None for unknown ids."""
        if not 0 <= pull_id < self._ledger.size:
            return None
        ledger = self._ledger
        return PullInfo(ledger.arm(pull_id), ledger.seq(pull_id), _STATUSES[ledger.state(pull_id)])

    def is_pending(self, pull_id: int) -> bool:
        """True for a pull handed out and neither answered nor released (cheap)."""
        return 0 <= pull_id < self._ledger.size and self._ledger.state(pull_id) == _ledger.PENDING

    def accepts_reward(self, reward: float) -> bool:
        """True when ``reward`` is a finite number inside the reward bounds."""
        return math.isfinite(reward) and self.lower <= reward <= self.upper

    def params(self) -> dict[str, Any]:
        """The constructor's keyword arguments, enough to rebuild an identical algorithm.

        Derived from the constructor's signature (every keyword parameter, up the ``**kwargs``
        chain), each read from the attribute of the same name; a subclass that stores one
        otherwise says so in ``_param_value``.
        """
        return {p.name: self._param_value(p.name) for p in parameters(type(self))}

    def _param_value(self, name: str) -> Any:
        """The value constructor parameter ``name`` was given, as ``params()`` reports it."""
        return getattr(self, name)

    @property
    def max_questions_per_worker(self) -> int | None:
        """No worker is ever asked more gold questions than this (None: no such bound).
        Known before the run, so a requester can be told the worst case up front."""
        return None

    # ------------------------------------------------------------------ subclass steps
    # ask, release and set_unavailable are final; an algorithm that must act around them
    # overrides these hooks, which do nothing here.
    def _before_ask(self) -> None:  # noqa: B027 (hooks do nothing unless overridden)
        """Before an ask that may hand out pulls (the run is not over): decisions that must
        wait for an ask, not a result() (IB's stages, NRR's stability)."""

    def _on_asked(self, ask: Ask) -> None:  # noqa: B027
        """After every such ask, whatever it returned (ADE gives each pull its slot)."""

    def _on_released(self, pull_id: int, arm: int) -> None:  # noqa: B027
        """After a pending pull of ``arm`` was released (it will be asked again)."""

    def _on_unavailable(self, arm: int) -> None:  # noqa: B027
        """After ``arm`` became unavailable."""

    def _on_returned(self, arm: int) -> None:  # noqa: B027
        """After ``arm``, which had left, came back (open rosters only)."""

    def _on_asked_for(self, ask: Ask) -> None:
        """After every ``ask_for``, whatever it returned (as ``_on_asked`` after ``ask``)."""
        self._on_asked(ask)

    def _on_joined(self, arms: IntArray) -> None:  # noqa: B027
        """After ``arms`` joined (open rosters only): grow the per-worker state to
        ``n_arms``; the base class has grown the statistics, ledger and availability."""

    def _check_joining(self, count: int) -> None:  # noqa: B027
        """Refuse ``count`` more workers where the promise was spread over a set number."""

    def _wants(self, arm: int) -> bool:
        """Whether one more question to available worker ``arm`` now could serve the
        decisions (``ask_for``). Open-roster algorithms say when; by default, never."""
        return False

    def _audits(self, arm: int) -> bool:
        """Whether an audit question to decided worker ``arm`` (``ask_for(arm, audit=True)``)
        would be used: by default, never (decisions are final)."""
        return False

    @abc.abstractmethod
    def _refresh(self) -> None:
        """Recompute estimates and the stopping condition from the answers so far."""

    @abc.abstractmethod
    def _condition_met(self) -> bool:
        """The algorithm's stopping condition, on the state of the last refresh."""

    @abc.abstractmethod
    def _schedule(self, limit: int) -> IntArray:
        """Up to ``limit`` available arms to pull next (empty: nothing useful until answers)."""

    @abc.abstractmethod
    def _describe(self) -> Result:
        """Build the result from the current state."""

    def _can_progress(self) -> bool:
        """False when pulls of available workers cannot change the outcome any more."""
        return bool(self.available.any())

    def _on_answers(self, pull_ids: IntArray, arms: IntArray, rewards: NDArray[np.float64]) -> None:
        """Hook: accepted answers (first copies only). The default updates the statistics."""
        self.stats.update_many(arms, rewards)

    # ------------------------------------------------------------------------ helpers
    def _result(
        self,
        workers: tuple[WorkerResult, ...],
        *,
        threshold: Threshold | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> Result:
        """A Result with the bookkeeping every algorithm shares filled in."""
        return Result(
            algorithm=self.name,
            params=self.params(),
            workers=workers,
            stop_reason=self.stop_reason,
            guarantee=self.guarantee,
            total_pulls=self.n_answered,
            pending_pulls=self.n_pending,
            released_pulls=self._released,
            threshold=threshold,
            extra={**(extra or {}), "max_questions_per_worker": self.max_questions_per_worker},
        )

    def _ensure_fresh(self) -> None:
        if self._dirty:
            self._refresh()
            self._dirty = False

    def _reopen(self) -> None:
        """A worker joined or came back: a run stopped for want of undecided or askable
        workers may go on (a spent budget stays spent)."""
        if self._stop_reason in (StopReason.CONDITION_MET, StopReason.WORKERS_EXHAUSTED):
            self._stop_reason = None

    def _stop(self, reason: StopReason) -> Ask:
        self._stop_reason = reason
        self._retry.clear()
        return Ask(AskState.DONE)

    def _take_retries(self, limit: int) -> IntArray:
        taken: list[int] = []
        while self._retry and len(taken) < limit:
            taken.append(self._retry.popleft())
        return np.array(taken, dtype=np.int64) if taken else _EMPTY.copy()

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

    def _set_min_answers(self, value: object) -> None:
        """Check and keep a fixed-confidence algorithm's ``min_answers`` parameter."""
        self.min_answers = check_count(
            "min_answers", value, 1, "give the fewest answers a decision may rest on, e.g. 3"
        )

    def _too_few_answers(self) -> NDArray[np.bool_]:
        """Workers that cannot be decided yet: fewer than ``min_answers`` answers. Each
        fixed-confidence algorithm keeps them undecided, and asked, where it decides."""
        return np.asarray(self.stats.count < self.min_answers)

    @property
    def _too_few_reason(self) -> str:
        return f"fewer than min_answers = {self.min_answers} answers"

    def _availability_reason(self, arm: int) -> str | None:
        reason = self.unavailable_reason.get(arm)
        if reason is None:
            return None
        # Said once: an answer source's own reason may already start with the word.
        return f"unavailable: {reason.removeprefix('unavailable').lstrip(': ') or 'left'}"


def _count_into(counts: IntArray, arms: IntArray) -> None:
    """``counts += bincount(arms)``; one or no arm without the bincount."""
    if arms.size > 1:
        counts += np.bincount(arms, minlength=counts.size)
    elif arms.size == 1:
        counts[arms[0]] += 1


_WAIT = Ask(AskState.WAIT)
_STATUSES = tuple(PullStatus)  # indexed by ledger state; cheaper than calling the enum
# Indexed by ledger state (PENDING, ANSWERED, RELEASED).
_OUTCOME_BY_STATE = np.array(
    [TellOutcome.ACCEPTED, TellOutcome.DUPLICATE, TellOutcome.LATE], dtype=np.int8
)
_ACCEPTED_ONE = _OUTCOME_BY_STATE[:1]
