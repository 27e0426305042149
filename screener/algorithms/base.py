"""The ask/tell contract every algorithm follows.

An algorithm is a pure decision object: no I/O, no clock, no awaits. It is asked for pulls
(one or a batch), told answers in any order, told when a pull failed (timed out, errored,
cancelled) and when a worker became unavailable; it says ``wait`` when it needs answers back
before it can choose a useful pull, and ``done`` when it has stopped.

Template method: the base classes keep the ledger of pulls, the per-arm statistics, budget,
retries and availability (``_bookkeeping``); a subclass supplies three steps (``_refresh`` the
estimates from the answers that arrived, ``_condition_met``, ``_schedule`` the next arms) and
``_describe``.

Two rules make replay exact. The stopping check runs lazily at the start of ``ask`` (after
answers arrived), never inside ``tell``; and ``ask(k)`` hands out exactly what k calls of
``ask(1)`` with no tell between them would. A journal that records asks and answers in the
order they happened therefore rebuilds the same state, call by call.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any, ClassVar, final

import numpy as np
from numpy.typing import NDArray

from screener.algorithms._bookkeeping import PullBookkeeping
from screener.algorithms._test_setups import AlgorithmSetup
from screener.algorithms.ask_tell import (
    NO_ARMS,
    WAIT,
    Ask,
    AskState,
    PullTuple,
)
from screener.algorithms.result import Result, StopReason
from screener.algorithms.signature import overrides_batch_form, parameters
from screener.algorithms.worker_result import Decision, Threshold, WorkerResult
from screener.arrays import IntArray, grown
from screener.checks import check_count
from screener.errors import ConfigError

__all__ = ["Algorithm"]


class Algorithm(PullBookkeeping, abc.ABC):
    """Base class of every screening algorithm (see the module docstring for the contract).

    Examples
    --------
    The ask / tell loop every algorithm runs, here Round-Robin against simulated answers
    (``simulate`` runs the same loop):

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

    #: What the algorithm promises when its stopping condition holds; None for heuristics.
    guarantee: ClassVar[str | None] = None
    #: Why the algorithm needs its roster fixed when it starts; None when workers may join,
    #: leave and come back mid-run (``add_workers``, ``set_unavailable``, ``set_available``).
    fixed_roster: ClassVar[str | None] = (
        "its decisions are defined relative to the whole crowd it started with"
    )
    #: True when a decided worker keeps its decision for the rest of the run (it can be acted
    #: on at once); False when decisions are provisional until the run stops.
    decisions_final: ClassVar[bool] = False
    #: Small test parameters the conformance suite runs the algorithm with, first the
    #: default; every registered algorithm lists its own.
    test_setups: ClassVar[tuple[AlgorithmSetup, ...]] = ()
    #: No worker is decided before it has this many answers. Fixed-confidence algorithms take
    #: it as a parameter (``_set_min_answers``); 1 is the papers' behaviour.
    min_answers: int = 1
    #: True when ``ask1`` may run its scalar steps: the class acts around
    #: no ask (``_before_ask``, ``_on_asked``, ``_next_ask``); set per class, from its hooks.
    _asks_in_scalars: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._asks_in_scalars = (
            cls._before_ask is Algorithm._before_ask
            and cls._on_asked is Algorithm._on_asked
            and cls._next_ask is Algorithm._next_ask
        )
        if overrides_batch_form(cls, "_schedule", "_schedule1"):
            cls._schedule1 = Algorithm._schedule1  # type: ignore[method-assign]

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
        n_pending = self._ledger.n_pending
        if self.budget is not None:
            room = self.budget - self.stats.n_samples - n_pending
            if room <= 0:
                return self._stop(StopReason.BUDGET_SPENT) if n_pending == 0 else WAIT
            limit = min(limit, room)
        if self._retry:
            arms = self._take_retries(limit)
            # Retried pulls count as pending before the schedule runs, as they would after
            # one ask(1) each (a schedule may depend on pending counts, e.g. WRR's m_i +
            # pending_i).
            _count_into(self.pending, arms)
        else:
            arms = NO_ARMS
        retried = arms.size
        if retried < limit and self._can_progress():
            scheduled = self._schedule(limit - retried)
            arms = scheduled if retried == 0 else np.concatenate([arms, scheduled])
        if arms.size == 0:
            if self._condition_met():  # a schedule may conclude without a pull (ADE's free pairs)
                return self._stop(StopReason.CONDITION_MET)
            # Nothing useful to pull: wait for answers, or stop if none can come.
            return self._stop(StopReason.WORKERS_EXHAUSTED) if n_pending == 0 else WAIT
        first, seqs = self._ledger.append(arms)
        _count_into(self.pending, arms[retried:])
        arms.flags.writeable = False
        seqs.flags.writeable = False
        return Ask(AskState.PULL, first, arms, seqs)

    @final
    def ask1(self) -> PullTuple | AskState:
        """One pull as ``ask(1)`` would hand it out, for one-pull-at-a-time loops: the
        tuple ``(id, arm, seq)`` (``Pull``'s fields, in its order: ``Pull(*pull)``), or
        ``AskState.WAIT`` or ``AskState.DONE`` where ``ask(1)`` returns no pull. The same
        pulls and the same state after as ``ask(1)``, so the two mix freely and a journal
        replays either; a plain tuple because building a frozen ``Pull`` costs about as
        much as the rest of the step.

        Examples
        --------
        >>> from screener import RoundRobin
        >>> algorithm = RoundRobin(2, budget=2)
        >>> algorithm.ask1(), algorithm.ask1(), algorithm.ask1()
        ((0, 0, 0), (1, 1, 0), <AskState.WAIT: 'wait'>)
        """
        if self._stop_reason is not None:
            return AskState.DONE
        if not self._asks_in_scalars:
            ask = self.ask(1)
            return (ask.first_id, int(ask.arms[0]), int(ask.seqs[0])) if len(ask) else ask.state
        # ``_next_ask(1)`` in scalar steps, written out (this runs once a pull): the same rules
        # in the same order, held to the same pulls by the conformance suite (``scalar_path``).
        if self._dirty:
            self._refresh()
            self._dirty = False
        if self._condition_met():
            return self._stop(StopReason.CONDITION_MET).state
        ledger = self._ledger
        n_pending = ledger.n_pending
        if self.budget is not None and self.budget - self.stats.n_samples - n_pending <= 0:
            return self._stop(StopReason.BUDGET_SPENT).state if n_pending == 0 else AskState.WAIT
        if self._retry:
            arm = self._retry.popleft()
        else:
            arm = self._schedule1() if self._can_progress() else -1
        if arm < 0:
            if self._condition_met():
                return self._stop(StopReason.CONDITION_MET).state
            return (
                self._stop(StopReason.WORKERS_EXHAUSTED).state if n_pending == 0 else AskState.WAIT
            )
        pull_id, seq = ledger.append1(arm)
        self.pending[arm] += 1
        return pull_id, arm, seq

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
        self.pending = grown(self.pending, count, 0)
        self.available = grown(self.available, count, True)
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
        >>> algorithm = CrowdPrior(3, threshold=0.6)
        >>> algorithm.set_unavailable(1, "worker left")
        >>> algorithm.set_available(1)
        >>> bool(algorithm.available[1]), algorithm.unavailable_reason
        (True, {})
        """
        self._check_arm(arm)
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
        >>> algorithm = CrowdPrior(3, threshold=0.6)
        >>> ask = algorithm.ask_for(2)
        >>> ask.state.value, ask.arms.tolist(), ask.seqs.tolist()
        ('pull', [2], [0])
        """
        self._check_arm(arm)
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
            return self._stop(StopReason.BUDGET_SPENT) if self.n_pending == 0 else WAIT
        retried = arm in self._retry
        if retried:
            self._retry.remove(arm)
        elif not (self.available[arm] and (self._audits(arm) if audit else self._wants(arm))):
            return WAIT
        arms = np.array([arm], dtype=np.int64)
        first, seqs = self._ledger.append(arms)
        self.pending[arm] += 1
        arms.flags.writeable = False
        seqs.flags.writeable = False
        return Ask(AskState.PULL, first, arms, seqs)

    def result(self) -> Result:
        """An immutable snapshot of the current conclusions (legal at any time)."""
        self._ensure_fresh()
        return self._describe()

    def n_undecided(self) -> int:
        """How many workers ``result()`` would show undecided (an algorithm whose decisions
        are at hand counts them without building the result)."""
        return sum(w.decision is Decision.UNDECIDED for w in self.result().workers)

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
    def _before_ask(self) -> None:
        """Before an ask that may hand out pulls (the run is not over): decisions that must
        wait for an ask, not a result() (IB's stages, NRR's stability)."""

    def _on_asked(self, ask: Ask) -> None:
        """After every such ask, whatever it returned (ADE gives each pull its slot)."""

    def _on_returned(self, arm: int) -> None:
        """After ``arm``, which had left, came back (open rosters only)."""

    def _on_asked_for(self, ask: Ask) -> None:
        """After every ``ask_for``, whatever it returned (as ``_on_asked`` after ``ask``)."""
        self._on_asked(ask)

    def _on_joined(self, arms: IntArray) -> None:
        """After ``arms`` joined (open rosters only): grow the per-worker state to
        ``n_arms``; the base class has grown the statistics, ledger and availability."""

    def _check_joining(self, count: int) -> None:
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

    def _schedule1(self) -> int:
        """``_schedule(1)`` as a scalar: the arm to pull next, -1 for none. An algorithm
        whose schedule has a scalar form overrides it (the default builds the array)."""
        arms = self._schedule(1)
        return int(arms[0]) if arms.size else -1

    @abc.abstractmethod
    def _describe(self) -> Result:
        """Build the result from the current state."""

    def _can_progress(self) -> bool:
        """False when pulls of available workers cannot change the outcome any more."""
        return len(self.unavailable_reason) < self.n_arms  # ``available.any()``, kept

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


def _count_into(counts: IntArray, arms: IntArray) -> None:
    """``counts += bincount(arms)``; one or no arm without the bincount, and a few arms of
    many without touching the others."""
    if arms.size * 8 < counts.size:
        np.add.at(counts, arms, 1)
    elif arms.size > 1:
        counts += np.bincount(arms, minlength=counts.size)
    elif arms.size == 1:
        counts[arms[0]] += 1
