"""Registered items: the one-coin posterior against enumeration, the model's confidence
calibrated on seeded crowds drawn from the prior the gate weighs with (one-sided binomial tests both
ways), caps and one label per worker and item, the heap and the candidates choosing alike,
a ban reopening an item it had settled."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from stats_helpers import assert_rate_at_most

from screener.errors import ConfigError
from screener.gate import FirstGold, Gate, GateSettings, GoldShare, ReplyKind
from screener.gate.items import NO_ITEM, ItemBook
from screener.gate.labels import TaskLabels
from screener.gate.one_coin import item_posterior


def _enumerated(votes: list[tuple[str, float]], classes: list[str]) -> list[float]:
    k = len(classes)
    like = np.ones(k)
    for label, p in votes:
        like *= np.where(np.array(classes) == label, p, (1 - p) / (k - 1))
    return [float(v) for v in like / like.sum()]


@pytest.mark.parametrize("seed", range(20))
def test_the_posterior_is_the_enumerated_one_coin_posterior(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    classes = [f"c{i}" for i in range(k)]
    votes = [
        (classes[int(rng.integers(k))], float(rng.uniform(0.05, 0.95)))
        for _ in range(int(rng.integers(1, 8)))
    ]
    label, confidence = item_posterior(votes, k)
    exact = _enumerated(votes, classes)
    seen = sorted({v for v, _ in votes})
    best = max(seen, key=lambda c: exact[classes.index(c)])
    assert label == best
    assert confidence == pytest.approx(exact[classes.index(best)], rel=1e-9)


def _crowd_book(
    rng: np.random.Generator, confidence: float, k: int
) -> tuple[ItemBook, dict[str, float], dict[str, str]]:
    """Workers whose accuracies are drawn from the uniform prior, each with a few gold
    answers; the book weighs them with their Beta(1, 1) posterior means."""
    accuracy = {f"w{i}": float(rng.random()) for i in range(40)}
    gold = {w: (int(rng.binomial(4, p)), 4) for w, p in accuracy.items()}
    labels = TaskLabels()

    def estimate(worker: str) -> float:
        right, asked = gold[worker]
        return (right + 1) / (asked + 2)

    book = ItemBook(labels, estimate, confidence=confidence, task_price=0.05, binary=k == 2)
    truth = {f"i{j}": f"c{int(rng.integers(k))}" for j in range(60)}
    for item in truth:
        book.add(item, cap=15)
    return book, accuracy, truth


def _label_until_done(
    book: ItemBook, accuracy: dict[str, float], truth: dict[str, str], k: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    workers = sorted(accuracy)
    for _ in range(3000):
        worker = workers[int(rng.integers(len(workers)))]
        item = book.choose(worker)
        if item is None:
            continue
        right = truth[item]
        wrong = [f"c{c}" for c in range(k) if f"c{c}" != right]
        given = right if rng.random() < accuracy[worker] else wrong[int(rng.integers(k - 1))]
        assert book.labels.add(worker, item, given).value == "accepted"
        book.labelled(worker, item)


@pytest.mark.slow
@pytest.mark.parametrize("k", [2, 4])
def test_settled_labels_are_as_often_wrong_as_the_model_says(k: int) -> None:
    """Workers drawn from the prior the book weighs with: the one-coin posterior is exact, so
    the wrong settled labels number sum(1 - the model's confidence) in expectation: neither
    more (overconfident) nor fewer (a confidence that undersells) beyond a 1% test. (The
    printed confidence is the gold check's: tests/gate/test_gold_check.py.)"""
    wrong = right = settled = 0
    stated_wrong = 0.0
    for seed in range(150):
        book, accuracy, truth = _crowd_book(np.random.default_rng(seed), 0.9, k)
        _label_until_done(book, accuracy, truth, k, seed)
        last = {entry.item: entry for entry in book.since()}
        for entry in last.values():
            if entry.state != "settled":
                continue
            settled += 1
            stated_wrong += 1.0 - book.items[entry.item].confidence
            wrong += entry.label != truth[entry.item]
            right += entry.label == truth[entry.item]
    assert settled > 3000
    assert_rate_at_most(wrong, settled, stated_wrong / settled)
    assert_rate_at_most(right, settled, 1.0 - stated_wrong / settled)


def _quiz_gate(**settings: object) -> Gate:
    return Gate(
        GateSettings(
            algorithm="quiz", params={"threshold": 0.6, "quiz_size": 4},
            policy=FirstGold(), max_unscreened=0, audit_rate=0.0, **settings,  # type: ignore[arg-type]
        )
    )  # fmt: skip


def _drive(gate: Gate, accuracy: dict[str, float], truth: dict[str, str], seed: int) -> None:
    """Workers asking at random; gold answered by accuracy, named items labelled (binary)."""
    rng = np.random.default_rng(seed)
    workers = sorted(accuracy)
    for _ in range(4000):
        worker = workers[int(rng.integers(len(workers)))]
        reply = gate.next(worker)
        if reply.kind is ReplyKind.GOLD:
            assert reply.gold is not None
            gate.answer(reply.gold, worker=worker, reward=float(rng.random() < accuracy[worker]))
        elif reply.item is not None:
            correct = rng.random() < accuracy[worker]
            given = truth[reply.item] if correct else str(1 - int(truth[reply.item]))
            assert gate.tell_label(worker, reply.item, given).value == "accepted"


@pytest.mark.slow
def test_a_gate_settles_calibrated_labels_from_its_own_gold() -> None:
    """The whole path: a gate's quiz gold, its bans, its estimates, its choice of items."""
    wrong = settled = 0
    stated_wrong = 0.0
    for seed in range(60):
        rng = np.random.default_rng(1000 + seed)
        accuracy = {f"w{i}": float(rng.random()) for i in range(30)}
        truth = {f"i{j}": str(int(rng.integers(2))) for j in range(80)}
        gate = _quiz_gate(confidence=0.9, binary_labels=True, seed=seed)
        gate.add_items((item, 9, 0.0) for item in truth)
        _drive(gate, accuracy, truth, seed)
        for entry in {e.item: e for e in gate.final_labels()}.values():
            if entry.state == "settled":
                settled += 1
                stated_wrong += 1.0 - entry.confidence
                wrong += entry.label != truth[entry.item]
    assert settled > 2000
    assert_rate_at_most(wrong, settled, stated_wrong / settled)


def test_no_item_takes_more_labels_than_its_cap_nor_a_worker_twice() -> None:
    rng = np.random.default_rng(3)
    accuracy = {f"w{i}": float(rng.uniform(0.5, 0.7)) for i in range(25)}
    truth = {f"i{j}": str(int(rng.integers(2))) for j in range(40)}
    gate = _quiz_gate(confidence=0.999, binary_labels=True)
    caps = {item: int(rng.integers(1, 6)) for item in truth}
    gate.add_items((item, cap, 0.0) for item, cap in caps.items())
    _drive(gate, accuracy, truth, 3)  # a second label of an item would fail in _drive
    for item, cap in caps.items():
        assert len(gate.labels.of_item(item)) <= cap
    assert gate.items.done_count == len(truth)  # every item capped at last
    assert gate.next("w0").reason in (NO_ITEM, "banned")


def test_the_heap_and_the_candidates_choose_the_same_item() -> None:
    rng = np.random.default_rng(5)
    labels = TaskLabels()
    book = ItemBook(labels, lambda w: 0.75, confidence=0.99, task_price=1.0, binary=True)
    items = [f"i{j}" for j in range(30)]
    for item in items:
        book.add(item, priority=float(rng.integers(3)))
    for step in range(200):
        worker = f"w{int(rng.integers(12))}"
        chosen = book.choose(worker)
        assert chosen == book.choose(worker, items)
        if chosen is None:
            continue
        labels.add(worker, chosen, str(int(rng.integers(2))))
        book.labelled(worker, chosen)
        assert worker in labels.of_item(chosen), step


def test_higher_priority_items_are_offered_first() -> None:
    book = ItemBook(TaskLabels(), lambda w: 0.8, confidence=0.95, task_price=1.0)
    book.add("low")
    book.add("high", priority=2.0)
    assert book.choose("ann") == "high"


def test_a_ban_reopens_an_item_its_label_settled_and_the_stream_says_so() -> None:
    gate = Gate(
        GateSettings(
            algorithm="quiz", params={"threshold": 0.6, "quiz_size": 4},
            policy=GoldShare(every=2), max_unscreened=0, audit_rate=0.0, confidence=0.6,
            binary_labels=True,
        )
    )  # fmt: skip
    gate.add_items([("x", None, 1.0)] + [(f"y{i}", None, 0.0) for i in range(4)])
    kinds = []
    for reward in (1.0, 0.0, 0.0, 0.0):  # 1 of 4 right: the quiz bans at the fourth
        reply = gate.next("bob")
        while reply.item is not None:  # after 1 right of 1 (2/3), bob's label settles x
            kinds.append(reply.item)
            gate.tell_label("bob", reply.item, "1")
            reply = gate.next("bob")
        assert reply.gold is not None
        kinds.append("gold")
        gate.answer(reply.gold, worker="bob", reward=reward)
    assert gate.workers["bob"].banned
    assert kinds[:3] == ["gold", "x", "gold"]
    x_entries = [e.state for e in gate.final_labels() if e.item == "x"]
    assert x_entries == ["settled", "reopened"]
    assert gate.items.is_open("x")


def test_a_done_item_is_offered_to_no_one_and_no_task_is_counted() -> None:
    gate = _quiz_gate(confidence=0.6, binary_labels=True)
    gate.add_items([("only", None, 0.0)])
    for _ in range(4):
        reply = gate.next("ann")
        assert reply.gold is not None
        gate.answer(reply.gold, worker="ann", reward=1.0)
    assert gate.next("ann").item == "only"
    gate.tell_label("ann", "only", "1")
    tasks = gate.tasks
    reply = gate.next("ann")
    assert (reply.item, reply.reason, gate.tasks) == (None, NO_ITEM, tasks)


def test_a_pickled_gate_settles_as_the_original() -> None:
    gate = _quiz_gate(confidence=0.9, binary_labels=True)
    gate.add_items((f"i{j}", 7, 0.0) for j in range(10))
    rng = np.random.default_rng(9)
    accuracy = {f"w{i}": float(rng.uniform(0.4, 1.0)) for i in range(8)}
    truth = {f"i{j}": str(int(rng.integers(2))) for j in range(10)}
    _drive(gate, accuracy, truth, 9)
    copy = pickle.loads(pickle.dumps(gate))
    for twin in (gate, copy):
        twin.add_items([("late", None, 0.0)])
        twin.next("w1")
    assert copy.final_labels() == gate.final_labels()
    assert copy.items.items["late"] == gate.items.items["late"]


@pytest.mark.parametrize(
    ("cap", "priority"), [(0, 0.0), (2.5, 0.0), (True, 0.0), (None, float("nan")), (None, "1")]
)
def test_a_bad_item_is_refused_whole_before_any_is_registered(
    cap: object, priority: object
) -> None:
    gate = _quiz_gate()
    with pytest.raises(ConfigError):
        gate.add_items([("fine", None, 0.0), ("bad", cap, priority)])  # type: ignore[list-item]
    assert gate.items.items == {}


def test_candidates_hold_no_registered_item_then_the_reply_names_none() -> None:
    gate = _quiz_gate()
    for _ in range(4):
        reply = gate.next("ann")
        assert reply.gold is not None
        gate.answer(reply.gold, worker="ann", reward=1.0)
    reply = gate.next("ann", candidates=["unregistered"])
    assert (reply.kind, reply.item, reply.reason) == (ReplyKind.QUALIFIED, None, NO_ITEM)


def test_an_open_offer_counts_against_the_cap_until_its_label_arrives() -> None:
    book = ItemBook(TaskLabels(), lambda w: 0.7, confidence=0.99, task_price=1.0)
    book.add("x", cap=1)
    book.add("y", cap=2)
    assert book.choose("ann") == "x"  # x: first registered
    assert book.choose("bob") == "y"  # x's one label is in flight with ann
    assert book.choose("ann") == "x"  # ann's offer lapsed when it asked again
    book.labels.add("ann", "x", "1")
    book.labelled("ann", "x")
    assert book.items["x"].done and book.choose("cid") == "y"  # y: bob's offer and cid's
    assert book.choose("dan") is None  # y's cap of 2 is taken by two open offers
    book.withdraw("bob")  # bob left
    assert book.choose("dan") == "y"
