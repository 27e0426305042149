"""The algorithm conformance checks: each drives fresh algorithms through one part of the
ask/tell contract of ``screener.algorithms.base`` and passes, fails with one line saying what
the contract asks for, or says why it could not run (``screener.testing.algorithm_conformance``
documents them and runs them)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from screener.algorithms import (
    ALGORITHMS,
    Algorithm,
    AskState,
    PullStatus,
    StopReason,
    TellOutcome,
    create_algorithm,
)
from screener.algorithms.snapshot import dump_state, load_state
from screener.errors import (
    ConfigError,
    InvalidRewardError,
    ScreenerError,
    SnapshotError,
    UnknownPullError,
)
from screener.journal import Event
from screener.runs import replay
from screener.testing._history import History, Port, Solo, Twins, same_results, show_ask
from screener.testing.conformance import _Failed

__all__ = ["ALGORITHM_CHECKS", "AlgorithmFactory", "Context"]

#: Builds an algorithm: ``factory(n_workers, seed)``.
AlgorithmFactory = Callable[[int, int], Algorithm]


@dataclass
class Context:
    """What every check gets: how to build algorithms, the pool size, and the histories."""

    factory: AlgorithmFactory
    n_workers: int
    means: tuple[float, ...]
    seed: int
    histories: int
    steps: int
    notes: list[str] = field(default_factory=list)

    def build(self) -> Algorithm:
        return self.factory(self.n_workers, self.seed)

    def history_seeds(self) -> range:
        return range(self.seed, self.seed + self.histories)

    def play(self, port: Port, seed: int, *, departures: bool = True) -> History:
        """Play one whole history (up to ``steps`` steps) and note how it ended."""
        history = History(port.algorithm, self.means, seed, departures=departures)
        history.play(port, self.steps)
        algorithm = port.algorithm
        ending = "unfinished" if algorithm.stop_reason is None else algorithm.stop_reason.value
        self.notes.append(
            f"history {seed}: {history.steps} steps, {algorithm.n_answered} answers, {ending}"
        )
        return history


# --------------------------------------------------------------------------- helpers
def _expect_error(error: type[Exception], call: Callable[[], object], what: str, rule: str) -> None:
    try:
        call()
    except error:
        return
    except Exception as other:
        raise _Failed(f"{what} raised {type(other).__name__} ({other}); {rule}") from None
    raise _Failed(f"{what} raised nothing; {rule}")


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise _Failed(message)


def _mid_run(context: Context, wanted: int = 3) -> tuple[Algorithm, list[int]] | str:
    """An algorithm with half of its first batch answered and ``wanted`` pulls in flight
    (their ids), or why it could not get there."""
    algorithm = context.build()
    first = algorithm.ask(2 * algorithm.n_arms).ids.tolist()
    answered = first[: len(first) // 2]
    algorithm.tell_many(answered, [algorithm.upper] * len(answered))
    pending = first[len(answered) :]
    while len(pending) < wanted:
        more = algorithm.ask(wanted - len(pending))
        if more.state is not AskState.PULL:
            return (
                f"a fresh algorithm did not hand out {wanted} pulls to have in flight "
                f"(ask({2 * algorithm.n_arms}) gave {len(first)}, then {more.state.value})"
            )
        pending += more.ids.tolist()
    return algorithm, pending


def _build_with(context: Context, original: Algorithm, params: Mapping[str, Any]) -> Algorithm:
    """``original``'s class built from plain ``params``: by name when it is registered."""
    if ALGORITHMS.get(getattr(original, "name", "")) is type(original):
        return create_algorithm(original.name, context.n_workers, params)
    return type(original)(context.n_workers, **params)


def _plain(value: object) -> object:
    """json.dumps fallback as the journal has it: read-only mappings become objects."""
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _params_json(algorithm: Algorithm) -> str:
    try:
        return json.dumps(algorithm.params(), default=_plain, sort_keys=True)
    except (TypeError, ValueError) as error:
        raise _Failed(
            f"params() cannot be stored as JSON ({error}); the journal stores it to rebuild "
            "the algorithm on resume, so give plain numbers, strings, lists and mappings"
        ) from None


# ---------------------------------------------------------------------------- checks
def _check_deterministic(context: Context) -> str | None:
    """Two algorithms built with the same seed go through the same history alike (one
    history: every other history check compares twins too; this one names the cause)."""
    for seed in context.history_seeds()[:1]:
        twins = Twins(
            context.build(),
            context.build(),
            "same",
            "a twin built with the same seed",
            "an algorithm is a pure function of its seed and the calls it gets",
        )
        context.play(twins, seed)
        twins.compare_results("after the same history")
    return None


def _check_batch_asks(context: Context) -> str | None:
    """``ask(k)`` equals k calls of ``ask(1)`` through whole histories; ``ask(0)`` raises."""
    _expect_error(
        ConfigError,
        lambda: context.build().ask(0),
        "ask(0)",
        "ask's limit must be at least 1 (ConfigError)",
    )
    for seed in context.history_seeds():
        twins = Twins(
            context.build(),
            context.build(),
            "single",
            "a twin asked one at a time",
            "ask(k) hands out exactly what k calls of ask(1) would",
        )
        context.play(twins, seed)
        twins.compare_results("at the end of the history")
    return None


def _check_results(context: Context) -> str | None:
    """``result()`` changes nothing; results are frozen snapshots."""
    for seed in context.history_seeds():
        twins = Twins(
            context.build(),
            context.build(),
            "peek",
            "a twin whose result() was taken after every call",
            "taking a result must change nothing",
        )
        context.play(twins, seed)
        twins.compare_results("at the end of the history")
    algorithm = context.build()
    history = History(algorithm, context.means, context.seed)
    port = Solo(algorithm)
    history.play(port, 12)
    kept, edited = algorithm.result(), algorithm.result()
    snapshot, now = kept.to_json(), algorithm.params()
    for name in ("workers", "total_pulls", "stop_reason", "params", "extra"):
        _expect_error(
            dataclasses.FrozenInstanceError,
            partial(setattr, edited, name, None),
            f"setting result().{name}",
            "a result is frozen (an immutable snapshot)",
        )
    _expect(isinstance(edited.workers, tuple), "result().workers must be a tuple")
    for part, name in (
        (edited.workers[0] if edited.workers else None, "decision"),
        (edited.threshold, "estimate"),
    ):
        if part is not None:
            _expect_error(
                dataclasses.FrozenInstanceError,
                partial(setattr, part, name, None),
                f"setting a result's {type(part).__name__}.{name}",
                "a result is frozen (an immutable snapshot)",
            )
    for mapping in (edited.params, edited.extra):
        if isinstance(mapping, dict):
            mapping["conformance"] = "edited"
            mapping.clear()
    _expect(
        algorithm.params() == now and algorithm.result().to_json() == snapshot,
        "editing the mappings of a result changed the algorithm; give each result its own",
    )
    history.play(port, 30)
    _expect(
        kept.to_json() == snapshot,
        "a result changed after the algorithm went on; result() must be a snapshot (copy "
        "arrays and mappings the algorithm keeps updating)",
    )
    return None


def _check_idempotent_tell(context: Context) -> str | None:
    """A second answer to a pull is a DUPLICATE no-op; in one batch the first copy counts."""
    found = _mid_run(context)
    if isinstance(found, str):
        return found
    algorithm, (p0, p1, p2, *_) = found
    low, high = algorithm.lower, algorithm.upper
    outcomes = algorithm.tell_many([p0, p1], [high, low]).tolist()
    _expect(
        outcomes == [TellOutcome.ACCEPTED] * 2,
        f"first answers to pending pulls gave {outcomes}, not ACCEPTED",
    )
    before, answered = algorithm.result().to_json(), algorithm.n_answered
    _expect(
        algorithm.tell(p0, low) is TellOutcome.DUPLICATE,
        "a second tell of an answered pull must return DUPLICATE",
    )
    outcomes = algorithm.tell_many([p1, p0], [high, high]).tolist()
    _expect(
        outcomes == [TellOutcome.DUPLICATE] * 2,
        f"a batch of answered pulls gave {outcomes}, not DUPLICATE",
    )
    _expect(
        algorithm.result().to_json() == before and algorithm.n_answered == answered,
        "a duplicate answer changed the algorithm; telling is idempotent (a no-op the second time)",
    )
    info = algorithm.pull_info(p0)
    _expect(
        info is not None and info.status is PullStatus.ANSWERED and not algorithm.is_pending(p0),
        f"pull_info({p0}) after its answer is {info}, not ANSWERED",
    )
    twice = algorithm.tell_many([p2, p2], [high, low]).tolist()
    _expect(
        twice == [TellOutcome.ACCEPTED, TellOutcome.DUPLICATE],
        f"one pull twice in a batch gave {twice}; the first copy counts, the second is a DUPLICATE",
    )
    twin = _mid_run(context)
    assert not isinstance(twin, str)  # the same factory, seed and calls as above
    twin[0].tell_many([p0, p1], [high, low])
    twin[0].tell(p2, high)
    _expect(
        algorithm.result().to_json() == twin[0].result().to_json(),
        "one pull twice in a batch did not count as its first copy alone",
    )
    return None


def _check_unknown_pull(context: Context) -> str | None:
    """Ids never handed out raise UnknownPullError and change nothing."""
    found = _mid_run(context, wanted=1)
    if isinstance(found, str):
        return found
    algorithm, (known, *_) = found
    before, rule = algorithm.result().to_json(), "an unknown pull id raises UnknownPullError"
    for bad in (algorithm.n_asked, algorithm.n_asked + 10**6, -1):
        _expect_error(
            UnknownPullError,
            partial(algorithm.tell, bad, algorithm.upper),
            f"tell({bad}, ...)",
            rule,
        )
        _expect_error(UnknownPullError, partial(algorithm.release, bad), f"release({bad})", rule)
        _expect(
            algorithm.pull_info(bad) is None and not algorithm.is_pending(bad),
            f"pull_info({bad}) of an id never handed out must be None",
        )
    bad = algorithm.n_asked
    _expect_error(
        UnknownPullError,
        lambda: algorithm.tell_many([known, bad], [algorithm.upper] * 2),
        f"tell_many([{known}, {bad}])",
        rule + " for the whole batch",
    )
    _expect(
        algorithm.is_pending(known) and algorithm.result().to_json() == before,
        "a batch with an unknown id was partly taken; it must be rejected as a whole",
    )
    _expect(
        algorithm.tell(known, algorithm.upper) is TellOutcome.ACCEPTED,
        "after a rejected batch, its known pull's answer must still be ACCEPTED",
    )
    _expect(issubclass(UnknownPullError, ScreenerError), "UnknownPullError is a ScreenerError")
    return None


def _check_late_tell(context: Context) -> str | None:
    """An answer after release is LATE and changes nothing; release is True only once."""
    found = _mid_run(context, wanted=2)
    if isinstance(found, str):
        return found
    algorithm, (p0, p1, *_) = found
    _expect(algorithm.release(p1) is True, f"release({p1}) of a pending pull must return True")
    _expect(algorithm.release(p1) is False, "releasing a pull twice must return False")
    before, answered = algorithm.result().to_json(), algorithm.n_answered
    late = [algorithm.tell(p1, algorithm.upper), *algorithm.tell_many([p1], [algorithm.lower])]
    _expect(late == [TellOutcome.LATE] * 2, f"answers to a released pull gave {late}, not LATE")
    _expect(
        algorithm.result().to_json() == before and algorithm.n_answered == answered,
        "a late answer changed the algorithm; an answer after release is ignored",
    )
    info = algorithm.pull_info(p1)
    _expect(
        info is not None and info.status is PullStatus.RELEASED,
        f"pull_info({p1}) after release is {info}, not RELEASED",
    )
    _expect(
        algorithm.tell(p0, algorithm.upper) is TellOutcome.ACCEPTED,
        "the answer to a pending pull must be ACCEPTED",
    )
    _expect(algorithm.release(p0) is False, "releasing an answered pull must return False")
    return None


def _check_reward_bounds(context: Context) -> str | None:
    """Rewards outside [lower, upper] or not finite raise InvalidRewardError, atomically."""
    found = _mid_run(context)
    if isinstance(found, str):
        return found
    algorithm, (p0, p1, p2, *_) = found
    low, high = algorithm.lower, algorithm.upper
    width = high - low
    before = algorithm.result().to_json()
    rule = f"rewards outside [{low}, {high}] raise InvalidRewardError and nothing is taken"
    for bad in (high + width / 2, low - width / 2, float("nan"), float("inf"), float("-inf")):
        _expect_error(
            InvalidRewardError, partial(algorithm.tell, p0, bad), f"tell({p0}, {bad})", rule
        )
        _expect_error(
            InvalidRewardError,
            partial(algorithm.tell_many, [p0, p1], [low, bad]),
            f"tell_many([{p0}, {p1}], [{low}, {bad}])",
            rule,
        )
        _expect(not algorithm.accepts_reward(bad), f"accepts_reward({bad}) must be False")
    _expect(
        algorithm.is_pending(p0) and algorithm.result().to_json() == before,
        "a rejected batch was partly taken; a bad reward rejects the whole batch",
    )
    outcomes = algorithm.tell_many([p0, p1, p2], [low, high, low + width / 2]).tolist()
    _expect(
        outcomes == [TellOutcome.ACCEPTED] * 3,
        f"rewards {low}, {high} and {low + width / 2} gave {outcomes}; the bounds are inside",
    )
    return None


def _check_release_retry(context: Context) -> str | None:
    """A released pull is asked again first: same worker, same seq, a new id."""
    found = _mid_run(context)
    if isinstance(found, str):
        return found
    algorithm, pending = found
    pending += algorithm.ask(3).ids.tolist()  # uneven counts, where the schedule allows
    # The pulls of the busiest workers first: those a schedule would not choose next anyway.
    arms = [_arm(algorithm, i) for i in range(algorithm.n_asked)]
    pending.sort(key=lambda i: (arms.count(arms[i]), i), reverse=True)
    for released, limit in ((pending[:1], 1), (pending[1:3], 3)):
        expected = []
        for pull_id in released:
            info = algorithm.pull_info(pull_id)
            assert info is not None
            expected.append((info.arm, info.seq))
            _expect(algorithm.release(pull_id), f"release({pull_id}) must return True")
        next_id = algorithm.n_asked
        again = algorithm.ask(limit)
        if again.done:
            context.notes.append("the algorithm stopped instead of retrying: condition met")
            return None
        retried = list(zip(again.arms.tolist(), again.seqs.tolist(), strict=True))
        _expect(
            again.state is AskState.PULL
            and sorted(retried[: len(expected)]) == sorted(expected)
            and again.first_id == next_id,
            f"after releasing pulls (arm, seq) {expected}, ask({limit}) gave {show_ask(again)}; "
            f"a released pull is asked again first, same worker and seq, new id {next_id}",
        )
        info = algorithm.pull_info(next_id)
        _expect(
            info is not None
            and info.status is PullStatus.PENDING
            and (info.arm, info.seq) == retried[0],
            f"pull_info({next_id}) of the retry is {info}, not PENDING {retried[0]}",
        )
    return None


def _check_unavailable(context: Context) -> str | None:
    """Departed workers are never asked again; everyone leaving ends the run."""
    algorithm = context.build()
    rule = "set_unavailable of a worker not in the pool raises ConfigError"
    for arm in (-1, algorithm.n_arms):
        _expect_error(
            ConfigError,
            partial(algorithm.set_unavailable, arm, "left"),
            f"set_unavailable({arm}, ...)",
            rule,
        )
    for seed in context.history_seeds():
        algorithm = context.build()
        port = Solo(algorithm)
        history = History(algorithm, context.means, seed)
        history.play(port, 8)
        if history.finished:
            continue
        staying = [a for a in range(algorithm.n_arms) if a not in history.departed]
        busy = [a for i in history.outstanding if (a := _arm(algorithm, i)) in staying]
        arm = (busy or staying)[0]
        history.leave(port, arm, with_pull=True)  # then its released pull is not retried
        algorithm.set_unavailable(arm, "a second reason")
        _expect(
            algorithm.unavailable_reason.get(arm) == "left",
            f"unavailable_reason[{arm}] is {algorithm.unavailable_reason.get(arm)!r}; the "
            "first reason given is kept",
        )
        history.play(port, context.steps)  # History fails if the worker is asked again
    algorithm = context.build()
    port, history = Solo(algorithm), History(algorithm, context.means, context.seed)
    history.ask(port, 2 * algorithm.n_arms)
    for arm in range(algorithm.n_arms):
        history.leave(port, arm)
    while not history.finished:
        if history.outstanding:
            history.answer(port)
        history.ask(port, 1)  # never a pull; WAIT only while answers are in flight
    _expect(algorithm.finished, "the run must stop once every worker left")
    return None


def _arm(algorithm: Algorithm, pull_id: int) -> int:
    info = algorithm.pull_info(pull_id)
    assert info is not None
    return info.arm


def _check_budget(context: Context) -> str | None:
    """Rebuilt with a small budget, the run stops within it and stays stopped."""
    original = context.build()
    budget = 2 * original.n_arms + 3
    algorithm = _build_with(context, original, {**original.params(), "budget": budget})
    history = context.play(Solo(algorithm), context.seed, departures=False)
    _expect(
        history.finished,
        f"with a budget of {budget} pulls, all answered, the run did not "
        f"stop within {context.steps} steps",
    )
    answered, reason = algorithm.n_answered, algorithm.stop_reason
    _expect(answered <= budget, f"{answered} answers for a budget of {budget}")
    _expect(
        reason is not StopReason.BUDGET_SPENT or answered == budget,
        f"stopped with 'budget spent' after {answered} of {budget} answers; it means the "
        "whole budget was answered",
    )
    result = algorithm.result()
    _expect(
        result.stop_reason is reason and result.total_pulls == answered,
        f"result() says {result.stop_reason} after {result.total_pulls} pulls, the algorithm "
        f"{reason} after {answered}",
    )
    again = [algorithm.ask(1).state, algorithm.ask(5).state]
    _expect(again == [AskState.DONE] * 2, f"after DONE, asks gave {again}; it stays DONE")
    return None


def _check_rebuild(context: Context) -> str | None:
    """``params()`` is JSON, stays fixed, and rebuilds an algorithm that behaves the same."""
    for seed in context.history_seeds():
        original = context.build()
        stored = _params_json(original)
        rebuilt = _build_with(context, original, json.loads(stored))
        _expect(
            type(rebuilt) is type(original), f"rebuilt from params() as {type(rebuilt).__name__}"
        )
        _expect(
            _params_json(rebuilt) == stored,
            f"rebuilt from params() {stored}, it has params() {_params_json(rebuilt)}; "
            "params() must be the constructor's keyword arguments",
        )
        twins = Twins(
            original,
            rebuilt,
            "same",
            "the algorithm rebuilt from its params()",
            "params() must rebuild an identical algorithm (resume depends on it)",
        )
        context.play(twins, seed)
        twins.compare_results("at the end of the history")
        _expect(
            _params_json(original) == stored,
            "params() changed during the run; it describes how the algorithm was built",
        )
    return None


def _check_replay(context: Context) -> str | None:
    """Replaying the journal rebuilds the live state, which then goes on as the live one.

    Results are compared to 1e-9 relative: replay tells each run of consecutive answers in
    one ``tell_many``, where the live run may have told them in several, and floating-point
    work on a batch may round differently. The pulls handed out must be exactly the same."""
    for seed in context.history_seeds():
        live, journal = context.build(), list[Event]()
        port = Solo(live, journal)
        history = History(live, context.means, seed)
        for cut in (10, 40, 100):
            history.play(port, cut - history.steps)
            rebuilt = _replayed(context, journal, history.steps)
            if history.finished:
                # A finished run (rescored, reported): the rebuilt one stops on its next ask.
                _expect(
                    rebuilt.ask(1).done,
                    "replaying a finished run's journal and asking once more must say DONE",
                )
            if not same_results(rebuilt.result(), live.result(), close=True):
                raise _Failed(
                    f"after replaying the {len(journal)} events of {history.steps} steps, the "
                    "result differs from the live one; replay must rebuild the same state"
                )
            if history.finished:
                break
        else:
            twins = Twins(
                live,
                rebuilt,
                "same",
                "the algorithm rebuilt by replaying the journal",
                "replay must rebuild the live state, which then goes on alike",
            )
            history.play(twins, context.steps)
            twins.compare_results("at the end of the history", close=True)
    return None


def _check_snapshot(context: Context) -> str | None:
    """The state stored by ``dump_state`` and read back by ``load_state`` is the live state:
    the same result, exactly, and then exactly the same pulls to the end. Each history is
    cut at another point (10, 40, 100 steps, in turn)."""
    for index, seed in enumerate(context.history_seeds()):
        live = context.build()
        history = History(live, context.means, seed)
        history.play(Solo(live), (10, 40, 100)[index % 3])
        try:
            copy = load_state(dump_state(live), type(live))
        except SnapshotError as error:
            return f"its state cannot be stored ({error}); runs replay the journal instead"
        if not same_results(copy.result(), live.result()):
            raise _Failed(
                f"after {history.steps} steps, the state read back from a snapshot has another "
                "result; a snapshot must keep the whole state"
            )
        twins = Twins(
            live,
            copy,
            "same",
            "the algorithm read back from a snapshot",
            "a snapshot must keep the whole state, so that the copy goes on alike",
        )
        history.play(twins, context.steps)
        twins.compare_results("at the end of the history")
    return None


def _replayed(context: Context, journal: list[Event], steps: int) -> Algorithm:
    rebuilt = context.build()
    try:
        replay(rebuilt, journal)
    except ScreenerError as error:
        raise _Failed(f"replaying the journal of {steps} steps raised {error}") from None
    return rebuilt


#: The checks by name, in the order they run.
ALGORITHM_CHECKS: Mapping[str, Callable[[Context], str | None]] = {
    "deterministic": _check_deterministic,
    "batch_asks": _check_batch_asks,
    "results": _check_results,
    "idempotent_tell": _check_idempotent_tell,
    "unknown_pull": _check_unknown_pull,
    "late_tell": _check_late_tell,
    "reward_bounds": _check_reward_bounds,
    "release_retry": _check_release_retry,
    "unavailable": _check_unavailable,
    "budget": _check_budget,
    "rebuild": _check_rebuild,
    "replay": _check_replay,
    "snapshot": _check_snapshot,
}
