"""The algorithm conformance checks: each drives fresh algorithms through one part of the
ask/tell contract of ``screener.algorithms.base`` and passes, fails with one line saying what
the contract asks for, or says why it could not run (``screener.testing.algorithm_conformance``
documents them and runs them)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from functools import partial

from screener.algorithms import Algorithm, AskState, Result, StopReason
from screener.algorithms.snapshot import dump_state, load_state
from screener.errors import ConfigError, ScreenerError, SnapshotError
from screener.journal import Event
from screener.runs import replay
from screener.testing._algorithm_context import (
    Context,
    arm_of,
    build_with,
    expect,
    expect_error,
    params_json,
)
from screener.testing._history import History, Solo, Twins, same_results
from screener.testing._report import Failed
from screener.testing._scalar_checks import check_scalar_path, check_scalar_tell
from screener.testing._tell_checks import (
    check_idempotent_tell,
    check_late_tell,
    check_release_retry,
    check_reward_bounds,
    check_unknown_pull,
)

__all__ = ["ALGORITHM_CHECKS"]


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
    expect_error(
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
    _expect_frozen(edited)
    expect(
        algorithm.params() == now and algorithm.result().to_json() == snapshot,
        "editing the mappings of a result changed the algorithm; give each result its own",
    )
    history.play(port, 30)
    expect(
        kept.to_json() == snapshot,
        "a result changed after the algorithm went on; result() must be a snapshot (copy "
        "arrays and mappings the algorithm keeps updating)",
    )
    return None


def _expect_frozen(result: Result) -> None:
    """Setting a field of ``result`` or of its parts raises; its mappings, edited, are its
    own (the caller checks the algorithm did not change)."""
    for name in ("workers", "total_pulls", "stop_reason", "params", "extra"):
        expect_error(
            dataclasses.FrozenInstanceError,
            partial(setattr, result, name, None),
            f"setting result().{name}",
            "a result is frozen (an immutable snapshot)",
        )
    expect(isinstance(result.workers, tuple), "result().workers must be a tuple")
    for part, name in (
        (result.workers[0] if result.workers else None, "decision"),
        (result.threshold, "estimate"),
    ):
        if part is not None:
            expect_error(
                dataclasses.FrozenInstanceError,
                partial(setattr, part, name, None),
                f"setting a result's {type(part).__name__}.{name}",
                "a result is frozen (an immutable snapshot)",
            )
    for mapping in (result.params, result.extra):
        if isinstance(mapping, dict):
            mapping["conformance"] = "edited"
            mapping.clear()


def _check_unavailable(context: Context) -> str | None:
    """Departed workers are never asked again; everyone leaving ends the run."""
    algorithm = context.build()
    rule = "set_unavailable of a worker not in the pool raises ConfigError"
    for arm in (-1, algorithm.n_arms):
        expect_error(
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
        busy = [a for i in history.outstanding if (a := arm_of(algorithm, i)) in staying]
        arm = (busy or staying)[0]
        history.leave(port, arm, with_pull=True)  # then its released pull is not retried
        algorithm.set_unavailable(arm, "a second reason")
        expect(
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
    expect(algorithm.finished, "the run must stop once every worker left")
    return None


def _check_budget(context: Context) -> str | None:
    """Rebuilt with a small budget, the run stops within it and stays stopped."""
    original = context.build()
    budget = 2 * original.n_arms + 3
    algorithm = build_with(context, original, {**original.params(), "budget": budget})
    history = context.play(Solo(algorithm), context.seed, departures=False)
    expect(
        history.finished,
        f"with a budget of {budget} pulls, all answered, the run did not "
        f"stop within {context.steps} steps",
    )
    answered, reason = algorithm.n_answered, algorithm.stop_reason
    expect(answered <= budget, f"{answered} answers for a budget of {budget}")
    expect(
        reason is not StopReason.BUDGET_SPENT or answered == budget,
        f"stopped with 'budget spent' after {answered} of {budget} answers; it means the "
        "whole budget was answered",
    )
    result = algorithm.result()
    expect(
        result.stop_reason is reason and result.total_pulls == answered,
        f"result() says {result.stop_reason} after {result.total_pulls} pulls, the algorithm "
        f"{reason} after {answered}",
    )
    again = [algorithm.ask(1).state, algorithm.ask(5).state]
    expect(again == [AskState.DONE] * 2, f"after DONE, asks gave {again}; it stays DONE")
    return None


def _check_rebuild(context: Context) -> str | None:
    """``params()`` is JSON, stays fixed, and rebuilds an algorithm that behaves the same."""
    for seed in context.history_seeds():
        original = context.build()
        stored = params_json(original)
        rebuilt = build_with(context, original, json.loads(stored))
        expect(
            type(rebuilt) is type(original), f"rebuilt from params() as {type(rebuilt).__name__}"
        )
        expect(
            params_json(rebuilt) == stored,
            f"rebuilt from params() {stored}, it has params() {params_json(rebuilt)}; "
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
        expect(
            params_json(original) == stored,
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
                expect(
                    rebuilt.ask(1).done,
                    "replaying a finished run's journal and asking once more must say DONE",
                )
            if not same_results(rebuilt.result(), live.result(), close=True):
                raise Failed(
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
            raise Failed(
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
        raise Failed(f"replaying the journal of {steps} steps raised {error}") from None
    return rebuilt


#: The checks by name, in the order they run.
ALGORITHM_CHECKS: Mapping[str, Callable[[Context], str | None]] = {
    "deterministic": _check_deterministic,
    "batch_asks": _check_batch_asks,
    "scalar_path": check_scalar_path,
    "results": _check_results,
    "idempotent_tell": check_idempotent_tell,
    "unknown_pull": check_unknown_pull,
    "late_tell": check_late_tell,
    "reward_bounds": check_reward_bounds,
    "scalar_tell": check_scalar_tell,
    "release_retry": check_release_retry,
    "unavailable": _check_unavailable,
    "budget": _check_budget,
    "rebuild": _check_rebuild,
    "replay": _check_replay,
    "snapshot": _check_snapshot,
}
