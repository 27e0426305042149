"""The gold check of final labels (``screener.gate.calibration``): on seeded crowds where a
share of items misleads every worker alike (drawn per crowd from the check's own prior), the
printed confidence is calibrated both ways (one-sided binomial tests) where the model's alone
is overconfident; through a gate's own gold answers too; a check's rules one by one."""

from __future__ import annotations

import numpy as np
import pytest
from stats_helpers import assert_rate_at_most

from screener.bank import GoldBank, GoldQuestion, Scoring
from screener.errors import ConfigError
from screener.gate import FirstGold, Gate, GateSettings, ReplyKind
from screener.gate.calibration import PRIOR, GoldCheck
from screener.gate.items import ItemBook
from screener.gate.labels import TaskLabels
from screener.reports.final_labels import check_note


class _Crowd:
    """Workers with accuracies from the uniform prior, estimated from four gold answers each
    (their Beta(1, 1) posterior means); items of ``k`` classes, each misleading with
    probability ``share``: then every worker answers as if its answer were a decoy drawn
    uniformly from the classes (so a label settled on it is right only by chance)."""

    def __init__(self, rng: np.random.Generator, k: int, share: float) -> None:
        self.rng, self.k = rng, k
        self.accuracy = {f"w{i}": float(rng.random()) for i in range(40)}
        self.gold = {w: (int(rng.binomial(4, p)), 4) for w, p in self.accuracy.items()}
        self.truth: dict[str, str] = {}
        self.seen: dict[str, str] = {}  # the answer workers give as if it were right

    def item(self, name: str, share: float) -> None:
        self.truth[name] = f"c{int(self.rng.integers(self.k))}"
        misleads = self.rng.random() < share
        self.seen[name] = f"c{int(self.rng.integers(self.k))}" if misleads else self.truth[name]

    def estimate(self, worker: str) -> float:
        right, asked = self.gold[worker]
        return (right + 1) / (asked + 2)

    def label(self, worker: str, item: str) -> str:
        seen = self.seen[item]
        if self.rng.random() < self.accuracy[worker]:
            return seen
        others = [f"c{c}" for c in range(self.k) if f"c{c}" != seen]
        return others[int(self.rng.integers(self.k - 1))]


def _crowd_run(seed: int, k: int) -> tuple[ItemBook, _Crowd]:
    """One crowd: 60 task items capped at 15 labels, 40 gold items; each step a random worker
    labels the book's choice or answers a gold item it has not answered, alternately."""
    rng = np.random.default_rng(seed)
    share = float(rng.beta(*PRIOR))  # the check's prior is the truth's: its mean is exact
    crowd = _Crowd(rng, k, share)
    book = ItemBook(TaskLabels(), crowd.estimate, confidence=0.9, task_price=0.05, binary=k == 2)
    for j in range(60):
        crowd.item(f"i{j}", share)
        book.add(f"i{j}", cap=15)
    golds = [f"g{j}" for j in range(40)]
    for gold in golds:
        crowd.item(gold, share)
    answered: set[tuple[str, str]] = set()
    workers = sorted(crowd.accuracy)
    for step in range(6000):
        worker = workers[int(rng.integers(len(workers)))]
        if step % 2:
            gold = golds[int(rng.integers(len(golds)))]
            if (worker, gold) not in answered:
                answered.add((worker, gold))
                given = crowd.label(worker, gold)
                right = given == crowd.truth[gold]
                book.gold_answered(gold, worker, given, crowd.estimate(worker), right)
        elif (item := book.choose(worker)) is not None:
            book.labels.add(worker, item, crowd.label(worker, item))
            book.labelled(worker, item)
    return book, crowd


@pytest.mark.slow
@pytest.mark.parametrize("k", [2, 4])
def test_printed_confidence_is_as_often_wrong_as_it_says_where_the_model_is_not(k: int) -> None:
    """Misleading items at a share drawn from the check's prior: the printed confidence's
    wrong labels number sum(1 - printed) in expectation (a 1% test each way), while the
    model's confidence, which settles the items, falls short of the wrong ones."""
    wrong = right = settled = 0
    printed_wrong = model_wrong = 0.0
    for seed in range(120):
        book, crowd = _crowd_run(seed, k)
        for entry in {e.item: e for e in book.since()}.values():
            if entry.state != "settled":
                continue
            settled += 1
            printed_wrong += 1.0 - entry.confidence
            model_wrong += 1.0 - book.items[entry.item].confidence
            wrong += entry.label != crowd.truth[entry.item]
            right += entry.label == crowd.truth[entry.item]
    assert settled > 3000
    assert_rate_at_most(wrong, settled, printed_wrong / settled)
    assert_rate_at_most(right, settled, 1.0 - printed_wrong / settled)
    with pytest.raises(AssertionError):  # the model alone: overconfident
        assert_rate_at_most(wrong, settled, model_wrong / settled)


def test_a_check_is_right_when_its_label_was_scored_right_and_starts_over() -> None:
    check = GoldCheck(confidence=0.9)
    check.answered("g", "ann", "cat", 0.8, True, 2)
    assert check.checks == 0  # 0.8 < 0.9
    check.answered("g", "ann", "cat", 0.8, True, 2)
    assert check.checks == 0  # ann's second answer to g: one vote a worker
    check.answered("g", "bob", "cat", 0.8, True, 2)
    assert (check.checks, check.wrong) == (1, 0)  # 0.94: a right check
    check.answered("g", "ann", "dog", 0.95, False, 2)  # g starts over: one wrong answer
    assert (check.checks, check.wrong) == (2, 1)
    assert check.misleading > PRIOR[0] / sum(PRIOR)  # a wrong label at 0.95: misleading
    assert check.corrected(0.95, 2) == pytest.approx(
        (1 - check.misleading) * 0.95 + check.misleading / 2
    )


def test_a_gate_checks_a_bank_answer_as_the_key_it_was_scored_right_by() -> None:
    questions = tuple(
        GoldQuestion(f"q{i}", "cat?", "Cat", Scoring.CASE_INSENSITIVE) for i in range(9)
    )
    gate = Gate(GateSettings(policy=FirstGold(), max_unscreened=0), bank=GoldBank(questions, "b"))
    for worker in ("ann", "bob", "cy"):
        reply = gate.next(worker)
        assert reply.kind is ReplyKind.GOLD and reply.gold is not None
        gate.answer(reply.gold, worker=worker, answer=" cat ")
    votes = [v for vs in gate.items.check._open.values() for v in vs]
    assert [v.label for v in votes] == ["Cat"] * 3  # three answers, none settling a check


def test_an_answer_naming_an_item_needs_its_label_and_a_bank_knows_its_own() -> None:
    gate = Gate(GateSettings(policy=FirstGold(), max_unscreened=0, audit_rate=0.0))
    reply = gate.next("ann")
    assert reply.gold is not None
    with pytest.raises(ConfigError, match="needs the gold item"):
        gate.answer(reply.gold, worker="ann", reward=1.0, answer="cat")
    with pytest.raises(ConfigError, match="raw answer beside it"):
        gate.answer(reply.gold, worker="ann", reward=1.0, item="g7")
    assert gate.answer(reply.gold, worker="ann", reward=1.0, answer="cat", item="g7").value
    assert [v.label for v in gate.items.check._open["g7"]] == ["cat"]
    graded = gate.next("bob").gold
    assert graded is not None
    gate.answer(graded, worker="bob", reward=0.5, answer="cat", item="g8")  # neither way
    assert "g8" not in gate.items.check._open


def _misleading_gate_run(seed: int) -> tuple[Gate, dict[str, str]]:
    """The default gate (crowd-prior: the workers' prior fitted on the crowd) over binary
    items, a gold question first for every worker: its gold answers name their gold items and
    labels."""
    rng = np.random.default_rng(2000 + seed)
    share = float(rng.beta(*PRIOR))
    accuracy = {f"w{i}": float(rng.random()) for i in range(30)}
    truth = {f"i{j}": str(int(rng.integers(2))) for j in range(80)}
    golds = {f"g{j}": str(int(rng.integers(2))) for j in range(30)}
    seen = {
        item: str(int(rng.integers(2))) if rng.random() < share else answer
        for item, answer in {**truth, **golds}.items()
    }
    gate = Gate(
        GateSettings(
            policy=FirstGold(), max_unscreened=0, audit_rate=0.0, confidence=0.9,
            binary_labels=True, seed=seed,
        )
    )  # fmt: skip
    gate.add_items((item, 9, 0.0) for item in truth)
    workers = sorted(accuracy)

    def give(worker: str, item: str) -> str:
        correct = rng.random() < accuracy[worker]
        return seen[item] if correct else str(1 - int(seen[item]))

    for _ in range(4000):
        worker = workers[int(rng.integers(len(workers)))]
        reply = gate.next(worker)
        if reply.kind is ReplyKind.GOLD:
            assert reply.gold is not None
            gold = list(golds)[int(rng.integers(len(golds)))]
            label = give(worker, gold)
            reward = float(label == golds[gold])
            gate.answer(reply.gold, worker=worker, reward=reward, answer=label, item=gold)
        elif reply.item is not None:
            gate.tell_label(worker, reply.item, give(worker, reply.item))
    return gate, truth


@pytest.mark.slow
def test_a_gate_prints_a_confidence_its_own_gold_checked() -> None:
    """The whole path: the gate's gold answers name their items, each weighed as its worker
    stood before it; the printed confidence is calibrated both ways (1% tests), the model's
    is not. (Misleading gold items squeeze the workers' right-answer rates towards chance:
    a gate whose prior is not fitted, the quiz's uniform one, weighs them too surely.)"""
    wrong = right = settled = checks = 0
    printed_wrong = model_wrong = 0.0
    for seed in range(60):
        gate, truth = _misleading_gate_run(seed)
        checks += gate.items.check.checks
        for entry in {e.item: e for e in gate.final_labels()}.values():
            if entry.state == "settled":
                settled += 1
                printed_wrong += 1.0 - entry.confidence
                model_wrong += 1.0 - gate.items.items[entry.item].confidence
                wrong += entry.label != truth[entry.item]
                right += entry.label == truth[entry.item]
    assert settled > 2000 and checks > 1000
    assert_rate_at_most(wrong, settled, printed_wrong / settled)
    assert_rate_at_most(right, settled, 1.0 - printed_wrong / settled)
    with pytest.raises(AssertionError):
        assert_rate_at_most(wrong, settled, model_wrong / settled)


def test_the_export_says_whether_gold_checked_the_confidence() -> None:
    gate = Gate(GateSettings(policy=FirstGold(), max_unscreened=0, audit_rate=0.0, confidence=0.6))
    assert "no gold settlement" in check_note(gate) and "10%" in check_note(gate)
    for item in ("g0", "g1"):  # a second answer weighs more than the prior's 0.5
        for worker in ("ann", "bob"):
            reply = gate.next(worker)
            assert reply.gold is not None
            gate.answer(reply.gold, worker=worker, reward=1.0, answer="cat", item=item)
    assert gate.items.check.checks >= 1
    assert check_note(gate).startswith(f"confidence checked against {gate.items.check.checks}")
