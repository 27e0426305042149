"""Seeded random histories for the algorithm conformance checks, and the ports that play them.

A history is what a live run does to an algorithm: asks of assorted sizes, answers that come
back out of order and in batches (some twice, some after their pull was released), releases,
and workers who leave. It checks the rules that hold at every step of every history (pull ids,
bookkeeping, departed workers, the budget, no idle wait) and the outcome of every tell.

A port is how a history reaches the algorithm: one algorithm (optionally journaling the events
the orchestrator would write), or twins that must behave the same under some difference.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Literal, Protocol

import numpy as np

from screener.algorithms import Algorithm, Ask, AskState, Decision, Result, TellOutcome
from screener.journal import Event, EventKind
from screener.testing._report import Failed

__all__ = ["History", "Port", "Solo", "Twins", "same_results", "show_ask"]

_ACCEPTED, _DUPLICATE, _LATE = (
    int(TellOutcome.ACCEPTED),
    int(TellOutcome.DUPLICATE),
    int(TellOutcome.LATE),
)


class Port(Protocol):
    """Where a history's calls go; ``algorithm`` is the one whose bookkeeping is checked."""

    algorithm: Algorithm

    def ask(self, limit: int) -> Ask: ...

    def tell_many(self, ids: list[int], rewards: list[float]) -> list[int]: ...

    def release(self, pull_id: int) -> bool: ...

    def leave(self, arm: int, pull_id: int | None) -> None: ...


class Solo:
    """One algorithm; with ``journal`` it records the events the orchestrator would write."""

    def __init__(self, algorithm: Algorithm, journal: list[Event] | None = None) -> None:
        self.algorithm = algorithm
        self.journal = journal

    def ask(self, limit: int) -> Ask:
        ask = self.algorithm.ask(limit)
        if self.journal is not None:
            self.journal.extend(
                Event(kind=EventKind.ASKED, at=0.0, pull_id=p.id, arm=p.arm, seq=p.seq) for p in ask
            )
        return ask

    def tell_many(self, ids: list[int], rewards: list[float]) -> list[int]:
        outcomes: list[int] = self.algorithm.tell_many(ids, rewards).tolist()
        if self.journal is not None:
            kinds = {_ACCEPTED: EventKind.ANSWERED, _DUPLICATE: EventKind.DUPLICATE}
            self.journal.extend(
                Event(kind=kinds.get(o, EventKind.LATE), at=0.0, pull_id=i, reward=r)
                for i, r, o in zip(ids, rewards, outcomes, strict=True)
            )
        return outcomes

    def release(self, pull_id: int) -> bool:
        released = self.algorithm.release(pull_id)
        if self.journal is not None:
            self.journal.append(Event(kind=EventKind.TIMED_OUT, at=0.0, pull_id=pull_id))
        return released

    def leave(self, arm: int, pull_id: int | None) -> None:
        # As the orchestrator does for an answer saying the worker is gone: leave, release.
        self.algorithm.set_unavailable(arm, "left")
        if pull_id is not None:
            self.algorithm.release(pull_id)
        if self.journal is not None:
            event = Event(
                kind=EventKind.UNAVAILABLE, at=0.0, pull_id=pull_id, arm=arm, detail="left"
            )
            self.journal.append(event)


TwinMode = Literal["same", "single", "peek"]


class Twins:
    """Two algorithms given the same calls, except: ``single`` asks the right one a pull at a
    time (``ask(k)`` must equal k calls of ``ask(1)``), ``peek`` takes the right one's
    ``result()`` after every call (which must change nothing). ``what`` names the right one
    and ``rule`` says why both must agree, in failure messages."""

    def __init__(
        self, left: Algorithm, right: Algorithm, mode: TwinMode, what: str, rule: str
    ) -> None:
        self.algorithm = left
        self.right = right
        self.mode = mode
        self.what = what
        self.rule = rule

    def ask(self, limit: int) -> Ask:
        left = self.algorithm.ask(limit)
        if self.mode == "single":
            right, how = self._singles(limit), f"calls of ask(1) on {self.what}"
        else:
            right, how = self.right.ask(limit), f"the same ask of {self.what}"
        if not _same(left, right):
            self._fail(f"ask({limit}) gave {show_ask(left)} where {how} gave {show_ask(right)}")
        self._peek()
        return left

    def tell_many(self, ids: list[int], rewards: list[float]) -> list[int]:
        left: list[int] = self.algorithm.tell_many(ids, rewards).tolist()
        right: list[int] = self.right.tell_many(ids, rewards).tolist()
        if left != right:
            self._fail(f"telling pulls {ids} gave outcomes {left}, and {right} to {self.what}")
        self._peek()
        return left

    def release(self, pull_id: int) -> bool:
        left, right = self.algorithm.release(pull_id), self.right.release(pull_id)
        if left != right:
            self._fail(f"release({pull_id}) gave {left}, and {right} to {self.what}")
        self._peek()
        return left

    def leave(self, arm: int, pull_id: int | None) -> None:
        for algorithm in (self.algorithm, self.right):
            Solo(algorithm).leave(arm, pull_id)
        self._peek()

    def compare_results(self, when: str, *, close: bool = False) -> None:
        """Fail unless both results are the same (``close``: numbers to 1e-9 relative)."""
        left, right = self.algorithm.result(), self.right.result()
        if not same_results(left, right, close=close):
            self._fail(f"{when}, the result differs from the one of {self.what}")

    def _fail(self, what_happened: str) -> None:
        raise Failed(f"{what_happened}; {self.rule}")

    def _peek(self) -> None:
        if self.mode != "peek":
            return
        for line in self.right.result().workers:
            if line.decision not in (Decision.UNDECIDED, line.leaning):
                raise Failed(
                    f"worker {line.arm} is decided {line.decision.value} but leans "
                    f"{line.leaning.value}; a worker is undecided or leans to its decision"
                )

    def _singles(self, limit: int) -> Ask:
        """Up to ``limit`` calls of ``ask(1)`` on the right one, as one ask: their pulls, or
        the first call's answer when it had none (a later WAIT or DONE ends the run of
        calls: no tell came in between, and the next ask will say the same)."""
        parts: list[Ask] = []
        while len(parts) < limit:
            one = self.right.ask(1)
            if len(one) == 0:
                if not parts:
                    return one
                break
            parts.append(one)
        return Ask(
            AskState.PULL,
            parts[0].first_id,
            np.concatenate([p.arms for p in parts]),
            np.concatenate([p.seqs for p in parts]),
        )


def same_results(left: Result, right: Result, *, close: bool = False) -> bool:
    """Exactly the same results, or with ``close`` the same but for the last bits of numbers
    (answers told in other batches may be summed in another order)."""
    if not close:
        return left.to_json() == right.to_json()
    return _close(json.loads(left.to_json()), json.loads(right.to_json()))


def _close(left: object, right: object) -> bool:
    if isinstance(left, float) and isinstance(right, int | float):
        same_nan = math.isnan(left) and math.isnan(right)
        return same_nan or left == right or math.isclose(left, right, rel_tol=1e-9)
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_close(left[k], right[k]) for k in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(_close, left, right))
    return left == right


def _same(left: Ask, right: Ask) -> bool:
    """True when two asks hand out the same pulls (state, ids, arms, seqs)."""
    return (
        left.state is right.state
        and left.first_id == right.first_id
        and np.array_equal(left.arms, right.arms)
        and np.array_equal(left.seqs, right.seqs)
    )


def show_ask(ask: Ask) -> str:
    if ask.state is not AskState.PULL:
        return ask.state.value.upper()
    pulls = [(p.id, p.arm, p.seq) for p in ask]
    return f"pulls (id, arm, seq) {pulls[:6]}{'...' if len(pulls) > 6 else ''}"


class History:
    """One seeded random history; ``play`` drives a port through it step by step.

    Rewards are the algorithm's lower or upper bound, the upper with probability
    ``means[arm]``, drawn when the pull is asked. ``departures`` lets workers leave (at most a
    third of them); ``max_limit`` is the largest batch asked for.
    """

    def __init__(
        self,
        algorithm: Algorithm,
        means: Sequence[float],
        seed: int,
        *,
        departures: bool = True,
        max_limit: int | None = None,
    ) -> None:
        self.rng = np.random.default_rng(seed)
        self.means = np.asarray(means, dtype=np.float64)
        self.lower, self.upper = algorithm.lower, algorithm.upper
        self.departures = departures
        self.max_limit = max_limit or 16 * algorithm.n_arms
        self.next_id = 0
        self.outstanding: dict[int, float] = {}  # pending pull id -> its reward
        self.answered: list[int] = []
        self.released: list[int] = []
        self.departed: set[int] = set()
        self.finished = False
        self.steps = 0

    def play(self, port: Port, steps: int) -> bool:
        """Up to ``steps`` more steps; True once an ask said DONE."""
        for _ in range(steps):
            if self.finished:
                break
            self.step(port)
        return self.finished

    def step(self, port: Port) -> None:
        self.steps += 1
        roll = self.rng.random()
        if roll < 0.45 or not self.outstanding:
            self.ask(port)
        elif roll < 0.85:
            self.answer(port)
        elif roll < 0.96:
            self.release(port)
        elif self.departures and len(self.departed) < port.algorithm.n_arms // 3:
            self.leave(port)
        self._check_books(port.algorithm)

    def ask(self, port: Port, limit: int | None = None) -> Ask:
        if limit is None:
            big = self.rng.random() < 0.1
            limit = int(
                self.rng.integers(9, self.max_limit + 1) if big else self.rng.integers(1, 9)
            )
        ask = port.ask(limit)
        self._check_ask(ask, limit, port.algorithm)
        self.finished = ask.done
        drawn = self.rng.random(len(ask)) < self.means[ask.arms]
        rewards = np.where(drawn, self.upper, self.lower).tolist()
        self.outstanding.update(zip(ask.ids.tolist(), rewards, strict=True))
        self.next_id += len(ask)
        return ask

    def answer(self, port: Port) -> None:
        """A random subset of the pulls in flight, out of order; sometimes a pull twice in
        the batch, an answer to a released pull, or a second answer to an answered one."""
        pending = list(self.outstanding)
        chosen = self.rng.choice(pending, size=int(self.rng.integers(1, len(pending) + 1)))
        ids = list(dict.fromkeys(int(i) for i in chosen))  # random order, each once
        if self.rng.random() < 0.2:
            ids.append(ids[0])
        if self.released and self.rng.random() < 0.2:
            ids.append(self.released[int(self.rng.integers(len(self.released)))])
        if self.answered and self.rng.random() < 0.2:
            ids.append(self.answered[int(self.rng.integers(len(self.answered)))])
        expected = self._expected_outcomes(ids)
        rewards = [self.outstanding.get(i, self.upper) for i in ids]
        outcomes = port.tell_many(ids, rewards)
        if outcomes != expected:
            raise Failed(
                f"telling pulls {ids} gave outcomes {outcomes}, expected {expected}: a pull's "
                "first answer is ACCEPTED (0), a repeat a DUPLICATE no-op (1), an answer after "
                "release LATE (2)"
            )
        for pull_id in ids:
            if self.outstanding.pop(pull_id, None) is not None:
                self.answered.append(pull_id)

    def release(self, port: Port) -> None:
        pull_id = int(self.rng.choice(list(self.outstanding)))
        if not port.release(pull_id):
            raise Failed(f"release({pull_id}) of a pending pull returned False; it must be True")
        del self.outstanding[pull_id]
        self.released.append(pull_id)

    def leave(self, port: Port, arm: int | None = None, *, with_pull: bool | None = None) -> None:
        """A worker leaves: through an answer to one of its pulls in flight (which is released)
        when ``with_pull`` and it has one, or half the time when ``with_pull`` is None."""
        if arm is None:
            staying = [a for a in range(port.algorithm.n_arms) if a not in self.departed]
            arm = int(self.rng.choice(staying))
        own = [i for i in self.outstanding if _arm_of(port.algorithm, i) == arm]
        through = self.rng.random() < 0.5 if with_pull is None else with_pull
        pull_id = own[0] if own and through else None
        port.leave(arm, pull_id)
        self.departed.add(arm)
        if pull_id is not None:
            del self.outstanding[pull_id]
            self.released.append(pull_id)

    def _expected_outcomes(self, ids: list[int]) -> list[int]:
        seen: set[int] = set()
        expected = []
        for pull_id in ids:
            if pull_id in self.outstanding and pull_id not in seen:
                expected.append(_ACCEPTED)
            elif pull_id in self.released and pull_id not in self.outstanding:
                expected.append(_LATE)
            else:
                expected.append(_DUPLICATE)
            seen.add(pull_id)
        return expected

    def _check_ask(self, ask: Ask, limit: int, algorithm: Algorithm) -> None:
        size = len(ask)
        if ask.state is AskState.PULL and not 1 <= size <= limit:
            raise Failed(f"ask({limit}) handed out {size} pulls; a PULL has 1 to {limit}")
        if ask.state is not AskState.PULL and size:
            raise Failed(f"ask({limit}) said {ask.state.value.upper()} with {size} pulls")
        if size and ask.first_id != self.next_id:
            raise Failed(
                f"ask({limit}) numbered its pulls from {ask.first_id}; ids are dense, so the "
                f"next one is {self.next_id}"
            )
        if ask.seqs.shape != ask.arms.shape:
            raise Failed(f"ask({limit}) gave {ask.arms.size} arms but {ask.seqs.size} seqs")
        gone = sorted(self.departed.intersection(ask.arms.tolist()))
        if gone:
            raise Failed(
                f"worker {gone[0]} was asked again after set_unavailable; an unavailable "
                "worker is never asked again (nor its released pulls retried)"
            )
        if ask.wait and not self.outstanding:
            raise Failed(
                f"ask({limit}) said WAIT with no pull in flight: no answer can come, so it must "
                "hand out pulls or say DONE"
            )
        if (
            algorithm.budget is not None
            and algorithm.n_answered + algorithm.n_pending > algorithm.budget
        ):
            raise Failed(
                f"{algorithm.n_answered} answered and {algorithm.n_pending} in flight exceed the "
                f"budget of {algorithm.budget} pulls"
            )

    def _check_books(self, algorithm: Algorithm) -> None:
        pending, answered = len(self.outstanding), len(self.answered)
        if (algorithm.n_pending, algorithm.n_answered) != (pending, answered):
            raise Failed(
                f"n_pending = {algorithm.n_pending}, n_answered = {algorithm.n_answered} after "
                f"{pending} pulls in flight and {answered} accepted answers; they must agree"
            )
        if algorithm.n_asked != self.next_id:
            raise Failed(f"n_asked = {algorithm.n_asked} after {self.next_id} pulls handed out")


def _arm_of(algorithm: Algorithm, pull_id: int) -> int | None:
    info = algorithm.pull_info(pull_id)
    return None if info is None else info.arm
