"""Safe ids (issue 50, item 4), in process: an answer names its worker and only the worker
the gold question was given to may answer it; gold ids are keyed by a secret per gate, the
same for the same settings, and never sequential."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from screener.bank import GoldBank, GoldQuestion
from screener.errors import ConfigError, UnknownPullError
from screener.gate import AnswerOutcome, FirstGold, Gate, GateSettings, GoldShare, ReplyKind
from screener.gate.ids import gold_id, new_gold_key, sealed_gold_id, unsealed


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
    assert gate.workers["ann"].answered == 0 and not gate.gold(ann.gold).answered  # type: ignore[union-attr]
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


# ------------------------------------------------------------------ sealed ids
def test_a_sealed_id_opens_to_its_arm_and_number_under_its_key_only() -> None:
    key, other = new_gold_key(), new_gold_key()
    rng = np.random.default_rng(7)
    pairs = {(0, 0), (2**32 - 1, 2**32 - 1), (0, 2**32 - 1), (5, 1)}
    pairs |= {(int(a), int(n)) for a, n in rng.integers(0, 2**32, size=(2_000, 2))}
    ids = {pair: sealed_gold_id(key, *pair) for pair in pairs}
    assert all(unsealed(key, ident) == pair for pair, ident in ids.items())
    assert len(set(ids.values())) == len(pairs)  # a permutation: no two pairs share an id
    assert all(re.fullmatch(r"g[0-9a-f]{16}", ident) for ident in ids.values())
    assert sum(unsealed(other, ident) == pair for pair, ident in ids.items()) == 0
    # Neighbouring questions of one worker share no visible structure: their ids differ in
    # about half their 64 bits.
    flips = [
        bin(int(sealed_gold_id(key, 9, n)[1:], 16) ^ int(sealed_gold_id(key, 9, n + 1)[1:], 16))
        for n in range(500)
    ]
    assert 30 < np.mean([bits.count("1") for bits in flips]) < 34
    for text in ("g7", "G" + "0" * 16, "g" + "0" * 15 + "x", "x" * 17, ""):
        assert unsealed(key, text) is None
    with pytest.raises(ConfigError):
        sealed_gold_id(key, 2**32, 0)


def _seeded_calls(gate: Gate, seed: int) -> list[object]:
    """Seeded requests of 12 workers on ``gate`` with every kind of answer a platform sends:
    answered once, twice (a duplicate), after the worker left (late), by another worker, a
    guessed id; raw answers scored by the bank. What the gate said to each, its gold ids
    replaced by their order of first appearance (two id schemes compare alike)."""
    rng = np.random.default_rng(seed)
    names: dict[str, str] = {}
    said: list[object] = []

    def named(gold: str | None) -> str | None:
        return None if gold is None else names.setdefault(gold, f"#{len(names)}")

    answered: list[tuple[str, str]] = []
    for _ in range(700):
        worker = f"w{int(rng.integers(12))}"
        reply = gate.next(worker)
        said.append((reply.kind.value, named(reply.gold), reply.question, reply.reason))
        if reply.gold is None:
            continue
        roll = rng.random()
        if roll < 0.08:
            gate.leave(worker)
        raw = "right" if rng.random() < (0.3 if worker in ("w0", "w1") else 0.85) else "wrong"
        try:
            outcome = gate.answer(reply.gold, worker=worker, answer=raw).value
        except UnknownPullError as error:
            outcome = type(error).__name__
        said.append(outcome)
        answered.append((reply.gold, worker))
        if roll > 0.9 and answered:  # an old question answered again
            gold, by = answered[int(rng.integers(len(answered)))]
            said.append(gate.answer(gold, worker=by, answer="right").value)
        if roll > 0.97:  # another worker's answer to it, and a guessed id
            for gold, by in ((reply.gold, "w99"), (f"g{int(rng.integers(2**63)):016x}", worker)):
                with pytest.raises(UnknownPullError):
                    gate.check_answer(gold, worker=by, answer="right")
    said += [d.to_dict() for d in gate.decisions]
    return said


@pytest.mark.parametrize("seed", range(3))
def test_sealed_ids_keep_no_record_and_the_gate_says_what_hashed_ids_say(seed: int) -> None:
    bank = GoldBank(tuple(GoldQuestion(f"q{i}", f"item {i}", "right") for i in range(40)), "b")
    settings = GateSettings(
        policy=GoldShare(every=3), max_unscreened=1, audit_rate=0.2, on_change="reopen",
        seed=seed,
    )  # fmt: skip
    sealed = Gate(settings, bank=bank)
    hashed = Gate(dataclasses.replace(settings, gold_ids="hashed"), bank=bank)
    said = _seeded_calls(sealed, seed)
    assert said == _seeded_calls(hashed, seed)
    assert {"accepted", "duplicate", "late"} <= {x for x in said if isinstance(x, str)}
    assert sealed.golds.count == hashed.golds.count == len(hashed.golds.kept) > 100
    assert not sealed.golds.kept  # no record of a finished question
    assert sealed.gold_asked == hashed.gold_asked and sealed.decisions


def test_the_record_of_an_answered_sealed_question_is_made_again() -> None:
    bank = GoldBank(tuple(GoldQuestion(f"q{i}", f"item {i}", "8") for i in range(5)), "b")
    gate = Gate(quiz(), bank=bank)
    first = gate.next("ann")
    assert first.gold is not None
    assert gate.answer(first.gold, worker="ann", answer="8") is AnswerOutcome.ACCEPTED
    record = gate.gold(first.gold)
    assert record is not None and (record.worker, record.question) == ("ann", first.question)
    assert record.answered and not record.released and record.number == 0
    second = gate.next("ann")
    assert second.gold is not None and second.gold != first.gold
    gate.leave("ann")
    assert gate.answer(second.gold, worker="ann", answer="8") is AnswerOutcome.LATE
    assert gate.answer(first.gold, worker="ann", answer="7") is AnswerOutcome.DUPLICATE
    again = gate.gold(second.gold)
    assert again is not None and again.released and again.number == 1
    assert not gate.golds.kept and gate.golds.released == {"ann": {1}}
