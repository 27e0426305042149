"""What every algorithm conformance check works with: the ``Context`` (how to build the
algorithm, the pool, the histories) and the small steps the checks share."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from screener.algorithms import ALGORITHMS, Algorithm, AskState, create_algorithm
from screener.testing._history import History, Port
from screener.testing._report import Failed

__all__ = [
    "AlgorithmFactory",
    "Context",
    "arm_of",
    "build_with",
    "expect",
    "expect_error",
    "mid_run",
    "params_json",
]

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


def expect_error(error: type[Exception], call: Callable[[], object], what: str, rule: str) -> None:
    try:
        call()
    except error:
        return
    except Exception as other:
        raise Failed(f"{what} raised {type(other).__name__} ({other}); {rule}") from None
    raise Failed(f"{what} raised nothing; {rule}")


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise Failed(message)


def mid_run(context: Context, wanted: int = 3) -> tuple[Algorithm, list[int]] | str:
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


def build_with(context: Context, original: Algorithm, params: Mapping[str, Any]) -> Algorithm:
    """``original``'s class built from plain ``params``: by name when it is registered."""
    if ALGORITHMS.get(getattr(original, "name", "")) is type(original):
        return create_algorithm(original.name, context.n_workers, params)
    return type(original)(context.n_workers, **params)


def _plain(value: object) -> object:
    """json.dumps fallback as the journal has it: read-only mappings become objects."""
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def params_json(algorithm: Algorithm) -> str:
    try:
        return json.dumps(algorithm.params(), default=_plain, sort_keys=True)
    except (TypeError, ValueError) as error:
        raise Failed(
            f"params() cannot be stored as JSON ({error}); the journal stores it to rebuild "
            "the algorithm on resume, so give plain numbers, strings, lists and mappings"
        ) from None


def arm_of(algorithm: Algorithm, pull_id: int) -> int:
    info = algorithm.pull_info(pull_id)
    assert info is not None
    return info.arm
