"""The oracle conformance checks, by name: each drives fresh oracles through the contract of
``screener.oracles.base`` and returns None (passed), a reason to skip, or raises ``Failed``
with one line saying what went wrong and what the contract asks for."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import tempfile
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from screener.algorithms import create_algorithm
from screener.crowd import WorkerPool
from screener.errors import ConfigError
from screener.journal import AsyncJournal, EventKind, Journal, RunSpec
from screener.oracles import Answer, Oracle, PullRequest
from screener.orchestrator import Orchestrator, RunOptions
from screener.testing._report import Failed

__all__ = ["CHECKS", "CheckContext", "OracleFactory"]


#: Builds an oracle: ``factory(pool, options, seed)``; ``Oracle.from_options`` is one.
OracleFactory = Callable[[WorkerPool, Mapping[str, Any], int], Oracle]

#: Keys that usually hold credentials; ``describe()`` is journaled, so it must not have them.
_SECRET_KEY = re.compile(r"token|secret|passw|api_?key|credential|auth", re.IGNORECASE)
#: The algorithm of the "timeouts" run: WRR (k-sigma outliers) with a pull budget, so it ends.
_TIMEOUT_PARAMS = {"k": 2.0, "delta": 0.1, "direction": "low"}


@dataclass
class CheckContext:
    """What every check gets: how to build oracles, the pool, and the time limits."""

    factory: OracleFactory
    options: Mapping[str, Any]
    silent_options: Mapping[str, Any] | None
    pool: WorkerPool
    seed: int
    settle: float
    answer_timeout: float
    notes: list[str] = field(default_factory=list)

    def build(self, options: Mapping[str, Any] | None = None) -> Oracle:
        return self.factory(
            self.pool, dict(self.options if options is None else options), self.seed
        )


# --------------------------------------------------------------------------- helpers
def _requests(pool: WorkerPool, seed: int, first: int, count: int) -> list[PullRequest]:
    """Pulls ``first``, ``first + 1``, ... round-robin over the workers, with their gold
    question when the pool has a bank (pulls past a worker's last question are left out, as
    the orchestrator does)."""
    n = len(pool)
    requests = []
    for pull_id in range(first, first + count):
        arm, seq = pull_id % n, pull_id // n
        question = None if pool.bank is None else pool.question_for(arm, seq, seed)
        if pool.bank is None or question is not None:
            requests.append(PullRequest(pull_id, pool.workers[arm], arm, seq, question))
    return requests


@dataclass
class _Delivery:
    """Everything ``receive`` returned: answers in order and the size of each batch."""

    answers: list[Answer] = field(default_factory=list)
    batches: list[int] = field(default_factory=list)

    def first(self) -> dict[int, Answer]:
        found: dict[int, Answer] = {}
        for answer in self.answers:
            found.setdefault(answer.pull_id, answer)
        return found

    def duplicates(self) -> int:
        return len(self.answers) - len(self.first())


async def _receive_one(oracle: Oracle, timeout: float) -> Sequence[Answer]:
    async with asyncio.timeout(timeout):
        batch = await oracle.receive()
    if isinstance(batch, str | bytes) or not isinstance(batch, Sequence):
        raise Failed(f"receive() returned {type(batch).__name__}, not a sequence of Answer")
    if not batch:
        raise Failed("receive() returned no answers; it must wait for at least one")
    wrong = [a for a in batch if not isinstance(a, Answer)]
    if wrong:
        raise Failed(f"receive() returned a {type(wrong[0]).__name__}, not an Answer")
    return batch


async def _collect(
    oracle: Oracle, expected: set[int], timeout: float, linger: float = 0.0
) -> _Delivery:
    """Receive until every expected pull has an answer, then ``linger`` seconds more."""
    delivery = _Delivery()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not expected <= delivery.first().keys():
        remaining = deadline - loop.time()
        missing = sorted(expected - delivery.first().keys())
        try:
            batch = await _receive_one(oracle, max(remaining, 0.0))
        except TimeoutError:
            raise Failed(
                f"no answer within {timeout:g}s for {len(missing)} pull(s) "
                f"(first: {missing[:5]}); every submitted pull must get an answer"
            ) from None
        delivery.answers.extend(batch)
        delivery.batches.append(len(batch))
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(linger):
            while True:
                batch = await _receive_one(oracle, linger + 1.0)
                delivery.answers.extend(batch)
                delivery.batches.append(len(batch))
    return delivery


def _fingerprint(answer: Answer) -> tuple[object, ...]:
    """What must repeat with the same seed (an error's wording may carry timings)."""
    return (answer.reward, answer.response, answer.unavailable, answer.error is not None)


def _show(answer: Answer) -> str:
    for label in ("reward", "response", "unavailable", "error"):
        value = getattr(answer, label)
        if value is not None:
            return f"{label}={value!r}"
    return "nothing"


async def _answers_to(context: CheckContext, oracle: Oracle) -> dict[int, Answer]:
    """The first answer to each of a fixed set of single and batched pulls."""
    requests = _requests(context.pool, context.seed, 0, 24)
    async with oracle:
        for request in requests[:4]:
            await oracle.submit([request])
        await oracle.submit(requests[4:])
        delivery = await _collect(oracle, {r.pull_id for r in requests}, context.answer_timeout)
    return delivery.first()


def _compare(first: dict[int, Answer], second: dict[int, Answer], what: str) -> None:
    for pull_id in sorted(first):
        a, b = first[pull_id], second[pull_id]
        if _fingerprint(a) != _fingerprint(b):
            raise Failed(
                f"pull {pull_id}: {_show(a)} from the first oracle, {_show(b)} from {what}; "
                "answers must be a pure function of the seed and the request"
            )


# ---------------------------------------------------------------------------- checks
async def _check_delivery(context: CheckContext) -> str | None:
    """Single and batched submits: exactly one non-duplicate answer per pull, right ids."""
    singles = _requests(context.pool, context.seed, 0, 5)
    batches = [
        _requests(context.pool, context.seed, 5, 20),
        _requests(context.pool, context.seed, 25, 11),
    ]
    expected = {r.pull_id for r in [*singles, *batches[0], *batches[1]]}
    async with context.build() as oracle:
        for request in singles:
            await oracle.submit([request])
        for batch in batches:
            await oracle.submit(batch)
        delivery = await _collect(oracle, expected, context.answer_timeout, linger=context.settle)
    strangers = sorted({a.pull_id for a in delivery.answers} - expected)
    if strangers:
        raise Failed(f"answers for pull ids never submitted: {strangers[:5]}")
    if delivery.duplicates():
        counts = Counter(a.pull_id for a in delivery.answers)
        twice = sorted(pull_id for pull_id, n in counts.items() if n > 1)
        context.notes.append(
            f"{delivery.duplicates()} duplicate answer(s) (pulls {twice[:5]}...): allowed, "
            "the orchestrator logs them as 'duplicate'"
        )
    context.notes.append(f"{len(expected)} pulls answered in {len(delivery.batches)} batches")
    return None


async def _check_receive_batches(context: CheckContext) -> str | None:
    """Answers that are ready together come back from one ``receive`` call."""
    requests = _requests(context.pool, context.seed, 0, 12)
    async with context.build() as oracle:
        await oracle.submit(requests)
        await asyncio.sleep(context.settle)
        first = await _receive_one(oracle, context.answer_timeout)
        rest = {r.pull_id for r in requests} - {a.pull_id for a in first}
        await _collect(oracle, rest, context.answer_timeout)
    if len(first) < 2:
        raise Failed(
            f"{context.settle:g}s after a batch of {len(requests)} pulls, receive() returned "
            f"{len(first)} answer; it must return every answer available now (or pass a "
            "larger settle= if the oracle is that slow)"
        )
    context.notes.append(f"first receive after settling returned {len(first)} answers")
    return None


async def _check_deterministic(context: CheckContext) -> str | None:
    """Two fresh oracles with the same seed give the same answer to each pull."""
    first = await _answers_to(context, context.build())
    second = await _answers_to(context, context.build())
    _compare(first, second, "a second oracle with the same seed")
    return None


def _retractable(oracle: Oracle) -> bool:
    """``Oracle.retractable`` (True unless the oracle says otherwise): then cancelled pulls
    must stay silent. Read leniently, for oracles that do not subclass ``Oracle``."""
    return bool(getattr(oracle, "retractable", True))


async def _check_cancel(context: CheckContext) -> str | None:
    """``cancel`` never raises; a retractable oracle sends nothing for cancelled pulls."""
    requests = _requests(context.pool, context.seed, 0, 16)
    cancelled = {r.pull_id for r in requests[::2]}
    kept = {r.pull_id for r in requests} - cancelled
    async with context.build() as oracle:
        retractable = _retractable(oracle)
        await oracle.submit(requests)
        await oracle.cancel(sorted(cancelled))
        delivery = await _collect(oracle, kept, context.answer_timeout, linger=context.settle)
        # Cancelling what was already answered, or twice, is what a racing timeout does.
        await oracle.cancel(sorted(kept | cancelled))
        after = _requests(context.pool, context.seed, 16, 2)
        await oracle.submit(after)
        await _collect(oracle, {r.pull_id for r in after}, context.answer_timeout)
    leaked = sorted(cancelled & delivery.first().keys())
    if leaked and retractable:
        raise Failed(
            f"pulls {leaked[:5]} were cancelled but their answers arrived afterwards; "
            "honour cancel() or declare retractable = False"
        )
    if leaked:
        context.notes.append(f"{len(leaked)} cancelled pull(s) answered anyway (not retractable)")
    return None


async def _check_timeouts(context: CheckContext) -> str | None:
    """Under the real orchestrator, unanswered pulls become "timed_out" and the run ends."""
    if context.silent_options is None:
        return (
            "no silent_options: pass options under which the oracle never answers some pulls "
            "to check timeouts"
        )
    oracle = context.build(context.silent_options)
    with tempfile.TemporaryDirectory(prefix="screener-conformance-") as folder:
        db = str(Path(folder) / "runs.db")
        kinds = await _run_with_timeouts(context, oracle, db)
    if kinds[EventKind.FINISHED] != 1:
        raise Failed("the run ended without a 'finished' event")
    if kinds[EventKind.TIMED_OUT] == 0:
        raise Failed("no 'timed_out' event: with silent_options some pulls must never be answered")
    context.notes.append(
        f"{kinds[EventKind.TIMED_OUT]} timed out, {kinds[EventKind.ANSWERED]} answered"
    )
    return None


async def _run_with_timeouts(context: CheckContext, oracle: Oracle, db: str) -> Counter[EventKind]:
    budget = 12 * len(context.pool)
    params = {**_TIMEOUT_PARAMS, "budget": budget, "seed": context.seed}
    algorithm = create_algorithm("wrr", len(context.pool), params)
    options = RunOptions(concurrency=16, timeout=0.1, max_failures=budget)
    limit = context.answer_timeout + budget * 0.1 / options.concurrency * 4
    journal = AsyncJournal(Journal(db))
    try:
        spec = RunSpec(
            "wrr", algorithm.params(), context.seed,
            {"name": getattr(oracle, "name", type(oracle).__name__), "options": oracle.describe()},
            context.pool.to_dict(),
            {"concurrency": options.concurrency, "timeout": options.timeout, "drain": 0.0},
        )  # fmt: skip
        run_id = await journal.create_run(spec)
        oracle.bind_run(run_id)
        async with oracle:
            orchestrator = Orchestrator(
                algorithm, oracle, journal, run_id, context.pool, options, seed=context.seed
            )
            try:
                async with asyncio.timeout(limit):
                    await orchestrator.run()
            except TimeoutError:
                raise Failed(f"the run did not end within {limit:.1f}s") from None
        return Counter(event.kind for event in await journal.events(run_id))
    finally:
        await journal.aclose()


async def _check_close(context: CheckContext) -> str | None:
    """After ``close()`` no task the oracle started is pending; ``close()`` twice is safe."""
    before = asyncio.all_tasks()
    oracle = context.build()
    await oracle.open()
    requests = _requests(context.pool, context.seed, 0, 6)
    await oracle.submit(requests)
    await _receive_one(oracle, context.answer_timeout)  # some answers may still be on the way
    await oracle.close()
    left = [t for t in asyncio.all_tasks() - before if not t.done()]
    if left:
        names = ", ".join(sorted(t.get_name() for t in left))
        raise Failed(
            f"close() returned while {len(left)} task(s) the oracle started are still pending "
            f"({names}); cancel and await them in close()"
        )
    try:
        await oracle.close()
    except Exception as error:
        raise Failed(f"a second close() raised {type(error).__name__}: {error}") from None
    return None


async def _check_describe(context: CheckContext) -> str | None:
    """``describe()`` is JSON, has no credential keys, and ``from_options`` rebuilds it."""
    oracle = context.build()
    described = oracle.describe()
    try:
        text = json.dumps(described, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise Failed(f"describe() is not JSON-serializable: {error}") from None
    # A key ending in "_env" names an environment variable (token_env), not a secret.
    secrets = sorted(
        key for key in _keys(described) if _SECRET_KEY.search(key) and not key.endswith("_env")
    )
    if secrets:
        raise Failed(
            f"describe() has key(s) {secrets} that look like credentials; it is journaled, "
            "so read secrets from the environment instead"
        )
    rebuilt = type(oracle).from_options(context.pool, json.loads(text), context.seed)
    again = json.dumps(rebuilt.describe(), sort_keys=True, allow_nan=False)
    if again != text:
        raise Failed(f"from_options(describe()) describes itself as {again}, not {text}")
    _compare(
        await _answers_to(context, oracle),
        await _answers_to(context, rebuilt),
        "the oracle rebuilt by from_options(pool, describe(), seed)",
    )
    return None


async def _check_options(context: CheckContext) -> str | None:
    """The oracle declares its options (``OPTIONS``: unique names, every key ``describe()``
    journals among them), and ``from_options`` refuses an undeclared one with ConfigError."""
    oracle = context.build()
    declared = [option.name for option in type(oracle).OPTIONS]
    if not declared:
        return "the oracle declares no OPTIONS: declare them so `screener oracles NAME` lists them"
    if len(set(declared)) != len(declared):
        raise Failed(f"OPTIONS names an option twice: {declared}")
    undeclared = sorted(set(oracle.describe()) - set(declared))
    if undeclared:
        raise Failed(f"describe() journals {undeclared}, which OPTIONS does not declare")
    try:
        context.build({**context.options, "no_such_option_xyz": 1})
    except ConfigError:
        return None
    raise Failed("from_options accepted an undeclared option; call cls.check_options(options)")


def _keys(value: object) -> Iterator[str]:
    """Every mapping key in a JSON-like value, at any depth."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from _keys(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _keys(item)


#: The checks by name, in the order they run.
CHECKS: Mapping[str, Callable[[CheckContext], Awaitable[str | None]]] = {
    "delivery": _check_delivery,
    "receive_batches": _check_receive_batches,
    "deterministic": _check_deterministic,
    "cancel": _check_cancel,
    "timeouts": _check_timeouts,
    "close": _check_close,
    "describe": _check_describe,
    "options": _check_options,
}
