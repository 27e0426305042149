"""The open-roster conformance checks: workers who join, leave and come back mid-run.

An algorithm that takes joiners (``fixed_roster`` None, and for the ones that spread an error
level over the roster, room in ``max_workers``) is driven through seeded stream histories:
workers join in ones and twos, each arriving worker is asked for by name (``ask_for``, as
the gate does) or the algorithm chooses (``ask``), answers come back in any order, workers leave
and return. At every step: pulls name existing, present workers, ``ask_for`` pulls only the
worker asked for, the books (pending, answered, asked) agree, and the ``verdicts`` agree
with the result. An algorithm that needs a fixed roster must refuse a joiner (and a returner)
with a ConfigError and change nothing; so must an algorithm whose error level is spread over its
starting roster (without ``max_workers``), which still takes back a worker who left.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from screener.algorithms import Algorithm, AskState, Decision, ThresholdingAlgorithm
from screener.algorithms.snapshot import dump_state, load_state
from screener.errors import ConfigError, SnapshotError
from screener.testing._algorithm_context import Context
from screener.testing._history import same_results
from screener.testing._report import Failed

__all__ = ["ROSTER_CHECKS"]

_STEPS = 400


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise Failed(message)


def _refuses_joiners(algorithm: Algorithm) -> str | None:
    """Why ``algorithm`` takes no joiner (it refused one, changing nothing), or None."""
    before = (algorithm.n_arms, algorithm.n_asked, algorithm.n_answered)
    try:
        algorithm.add_workers(1)
    except ConfigError as error:
        after = (algorithm.n_arms, algorithm.n_asked, algorithm.n_answered)
        _expect(after == before, f"a refused joiner changed the books: {before} -> {after}")
        return str(error)
    return None


class _Stream:
    """One seeded stream history on one algorithm, logging the calls it made."""

    def __init__(self, algorithm: Algorithm, means: tuple[float, ...], seed: int) -> None:
        self.algorithm = algorithm
        self.means = list(means)
        self.rng = np.random.default_rng(seed)
        self.pending: list[int] = []
        self.calls: list[tuple[str, int, float]] = []

    def play(self, steps: int) -> None:
        for _ in range(steps):
            self.step()

    def step(self) -> None:
        roll = float(self.rng.random())
        algorithm = self.algorithm
        if roll < 0.08:
            self._call("join", 0, 0.0)
        elif roll < 0.12 and algorithm.n_arms > 1:
            self._call("leave", int(self.rng.integers(algorithm.n_arms)), 0.0)
        elif roll < 0.18:
            gone = np.flatnonzero(~algorithm.available)
            if gone.size:
                self._call("return", int(self.rng.choice(gone)), 0.0)
        elif roll < 0.55:
            self._call("ask_for", int(self.rng.integers(algorithm.n_arms)), 0.0)
        elif roll < 0.65:
            self._call("ask", int(self.rng.integers(1, 4)), 0.0)
        elif self.pending:
            index = int(self.rng.integers(len(self.pending)))
            pull = self.pending.pop(index)
            arm = algorithm.pull_info(pull)
            rate = self.means[arm.arm] if arm is not None else 0.5
            self._call("tell", pull, float(self.rng.random() < rate))
        self._check_books()

    def _call(self, what: str, value: int, reward: float) -> None:
        self.calls.append((what, value, reward))
        algorithm = self.algorithm
        if what == "join":
            new = algorithm.add_workers(1)
            _expect(new.tolist() == [algorithm.n_arms - 1], f"add_workers gave arms {new}")
            self.means.append(float(self.rng.random()))
        elif what == "leave":
            algorithm.set_unavailable(value, "left")
        elif what == "return":
            algorithm.set_available(value)
        elif what == "ask_for":
            ask = algorithm.ask_for(value)
            _expect(
                set(ask.arms.tolist()) <= {value},
                f"ask_for({value}) handed out pulls of workers {ask.arms.tolist()}",
            )
            self._took(ask.ids.tolist(), ask.arms.tolist())
        elif what == "ask":
            ask = algorithm.ask(value)
            self._took(ask.ids.tolist(), ask.arms.tolist())
        else:
            algorithm.tell(value, reward)

    def _took(self, ids: list[int], arms: list[int]) -> None:
        algorithm = self.algorithm
        for arm in arms:
            _expect(0 <= arm < algorithm.n_arms, f"a pull of worker {arm} of {algorithm.n_arms}")
            _expect(bool(algorithm.available[arm]), f"worker {arm}, who left, was asked")
        self.pending += ids

    def _check_books(self) -> None:
        algorithm = self.algorithm
        _expect(
            algorithm.n_pending == len(self.pending),
            f"n_pending {algorithm.n_pending}, but {len(self.pending)} pulls are in flight",
        )
        _expect(
            algorithm.n_asked >= algorithm.n_answered + algorithm.n_pending,
            "more pulls answered and in flight than asked",
        )


def _replayed(build: Callable[[], Algorithm], calls: list[tuple[str, int, float]]) -> Algorithm:
    """A fresh algorithm given the same calls (joins draw no random numbers of the stream)."""
    algorithm = build()
    for what, value, reward in calls:
        if what == "join":
            algorithm.add_workers(1)
        elif what == "leave":
            algorithm.set_unavailable(value, "left")
        elif what == "return":
            algorithm.set_available(value)
        elif what == "ask_for":
            algorithm.ask_for(value)
        elif what == "ask":
            algorithm.ask(value)
        else:
            algorithm.tell(value, reward)
    return algorithm


def _check_verdicts(algorithm: Algorithm) -> None:
    """A verdict is what the result says; an algorithm with a confidence rule has no other
    decisions (a fixed budget's classification before its end is not a verdict)."""
    if not isinstance(algorithm, ThresholdingAlgorithm):
        return
    verdicts = algorithm.verdicts().tolist()
    for line in algorithm.result().workers:
        shown = {Decision.ABOVE: 1, Decision.BELOW: -1}.get(line.decision, 0)
        verdict = verdicts[line.arm]
        agree = verdict == shown or (verdict == 0 and algorithm.fixed_budget)
        _expect(
            agree,
            f"verdicts() says {verdict} for worker {line.arm}, whose result line is "
            f"{line.decision.value}",
        )


def _check_joining(context: Context) -> str | None:
    """Joiners are asked, decided and reported like the others; or refused, saying why."""
    refused = _refuses_joiners(context.build())
    if refused is not None:
        context.notes.append(f"no joiners: {refused}")
        return None
    for seed in context.history_seeds():
        stream = _Stream(context.build(), context.means, seed)
        stream.play(_STEPS)
        algorithm = stream.algorithm
        _expect(
            len(algorithm.result().workers) == algorithm.n_arms,
            f"the result lists {len(algorithm.result().workers)} of {algorithm.n_arms} workers",
        )
        _check_verdicts(algorithm)
        joined = sum(call[0] == "join" for call in stream.calls)
        context.notes.append(f"history {seed}: {joined} joined, {algorithm.n_answered} answers")
    return None


def _check_join_replay(context: Context) -> str | None:
    """The same calls, joins and returns included, rebuild the same state, pull for pull;
    a snapshot taken after joins reads back and goes on alike."""
    if _refuses_joiners(context.build()) is not None:
        return "the algorithm needs a fixed roster"
    stream = _Stream(context.build(), context.means, context.seed)
    stream.play(_STEPS)
    rebuilt = _replayed(context.build, stream.calls)
    _expect(
        same_results(stream.algorithm.result(), rebuilt.result()),
        "the same calls, joins included, gave another result",
    )
    try:
        copy = load_state(dump_state(stream.algorithm), type(stream.algorithm))
    except SnapshotError as error:
        return f"the state cannot be stored as a snapshot: {error}"
    for arm in range(stream.algorithm.n_arms):
        left, right = stream.algorithm.ask_for(arm), copy.ask_for(arm)
        _expect(
            left.arms.tolist() == right.arms.tolist() and left.state is right.state,
            f"after a snapshot, ask_for({arm}) gave {right.state.value} where the live "
            f"algorithm gave {left.state.value}",
        )
    return None


def _check_leave_return(context: Context) -> str | None:
    """A worker who left is never asked (by ``ask`` or ``ask_for``) until it comes back; a
    fixed-roster algorithm refuses the return, changing nothing."""
    algorithm = context.build()
    algorithm.set_unavailable(0, "left")
    if algorithm.fixed_roster is not None:
        try:
            algorithm.set_available(0)
        except ConfigError:
            _expect(not algorithm.available[0], "a refused return made the worker available")
            return None
        raise Failed("a fixed-roster algorithm took back a worker who had left")
    _expect(len(algorithm.ask_for(0)) == 0, "ask_for gave a pull of a worker who left")
    for _ in range(3 * algorithm.n_arms):
        ask = algorithm.ask(1)
        _expect(0 not in ask.arms.tolist(), "ask gave a pull of a worker who left")
        if ask.state is AskState.PULL:
            algorithm.tell(int(ask.first_id), algorithm.upper)
    algorithm.set_available(0)
    _expect(bool(algorithm.available[0]), "set_available left the worker unavailable")
    _expect(0 not in algorithm.unavailable_reason, "the returner kept its reason for leaving")
    return None


#: The open-roster checks by name, in the order they run.
ROSTER_CHECKS: Mapping[str, Callable[[Context], str | None]] = {
    "joining": _check_joining,
    "join_replay": _check_join_replay,
    "leave_return": _check_leave_return,
}
