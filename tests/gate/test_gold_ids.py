"""Safe ids (issue 50, item 4), in process: an answer names its worker and only the worker
the gold question was given to may answer it; gold ids are keyed by a secret per gate, the
same for the same settings, and never sequential."""

from __future__ import annotations

import re

import pytest

from screener.errors import ConfigError, UnknownPullError
from screener.gate import AnswerOutcome, FirstGold, Gate, GateSettings, ReplyKind
from screener.gate.ids import gold_id, new_gold_key


def quiz(**values: object) -> GateSettings:
    return GateSettings(policy=FirstGold(), max_unscreened=0, audit_rate=0.0, **values)  # type: ignore[arg-type]


def golds(gate: Gate, workers: int) -> list[str]:
    """The gold id each of ``workers`` workers gets at its first request."""
    found = []
    for index in range(workers):
        reply = gate.next(f"w{index}")
        assert reply.kind is ReplyKind.GOLD and reply.gold is not None
        found.append(reply.gold)
    return found


def test_an_answer_by_another_worker_is_refused_and_changes_nothing() -> None:
    """A gold id passed through a worker's browser let one worker answer another's gold."""
    gate = Gate(quiz())
    ann, bob = gate.next("ann"), gate.next("bob")
    assert ann.gold is not None and bob.gold is not None
    with pytest.raises(UnknownPullError) as refused:
        gate.answer(ann.gold, worker="bob", reward=1.0)
    message = str(refused.value)
    assert "not given to worker 'bob'" in message and "'ann'" not in message  # no one named
    with pytest.raises(UnknownPullError):
        gate.check_answer(ann.gold, worker="cy", reward=1.0)  # a worker the gate never saw
    assert gate.workers["ann"].answered == 0 and not gate.golds[ann.gold].answered
    assert gate.answer(ann.gold, worker="ann", reward=1.0) is AnswerOutcome.ACCEPTED
    with pytest.raises(ConfigError):
        gate.answer(bob.gold, worker="", reward=1.0)  # not a worker id


def test_gold_ids_are_keyed_the_same_for_the_same_settings_and_not_sequential() -> None:
    settings = quiz()
    first, again = golds(Gate(settings), 50), golds(Gate(settings), 50)
    assert first == again  # determinism: a replayed gate names its questions alike
    other = golds(Gate(quiz()), 50)  # another gate: another key
    assert not set(first) & set(other)
    assert len(set(first)) == 50
    assert all(re.fullmatch(r"g[0-9a-f]{16}", gold) for gold in first)
    assert not {f"g{n}" for n in range(100)} & set(first)


def test_a_gate_journaled_before_gold_keys_keeps_its_sequential_ids() -> None:
    assert golds(Gate(quiz(gold_key=None)), 3) == ["g0", "g1", "g2"]


def test_the_gold_key_is_a_secret_of_the_settings() -> None:
    """Kept out of ``to_dict`` (what the status and reports show) and of ``repr`` (logs,
    tracebacks); given back with the rest, it rebuilds the same settings."""
    settings = quiz()
    assert settings.gold_key is not None
    assert settings.gold_key not in repr(settings) + str(settings.to_dict())
    assert GateSettings.from_dict(settings.to_dict()) != settings  # a fresh key
    stored = {**settings.to_dict(), "gold_key": settings.gold_key}
    assert GateSettings.from_dict(stored) == settings


@pytest.mark.parametrize("key", ["", "00" * 31, "zz" * 32, 7])
def test_a_bad_gold_key_is_refused_without_being_shown(key: object) -> None:
    with pytest.raises(ConfigError) as refused:
        quiz(gold_key=key)
    assert "leave it out" in str(refused.value) and "zz" not in str(refused.value)


def test_a_clash_of_keyed_ids_is_skipped_the_same_way_each_time() -> None:
    key = new_gold_key()
    first = gold_id(key, 0, set())
    instead = gold_id(key, 0, {first})
    assert instead != first and instead == gold_id(key, 0, {first})
    assert re.fullmatch(r"g[0-9a-f]{16}", instead)
