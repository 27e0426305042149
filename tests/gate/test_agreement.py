"""Agreement anchored on gold: the e-process holds its level at the bar, bans spammers on
their task labels, and keeps its promise in the cascade order and with workers who recognise
gold (seeded crowds, one-sided binomial tests)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from stats_helpers import binomial_sf

from screener.gate import FirstGold, Gate, GateSettings, ReplyKind
from screener.gate.agreement import AgreementJudge, reference_floor
from screener.gate.labels import TaskLabels


def _binary_judge(alpha: float) -> AgreementJudge:
    return AgreementJudge(TaskLabels(), 0.6, alpha, binary=True)


@pytest.mark.slow
def test_a_worker_agreeing_at_the_floor_is_banned_at_most_alpha_of_the_time() -> None:
    """At the null's edge (agreement exactly m with every comparison), bans <= alpha."""
    alpha, runs, banned = 0.1, 400, 0
    for seed in range(runs):
        rng = np.random.default_rng(seed)
        judge = _binary_judge(alpha)
        judge.labels.add("ref", "warm", "0")
        judge.gold_changed("ref", 0.8)  # m = 0.6 * 0.8 + 0.4 * 0.2 = 0.56
        m = judge.floor_of_agreement(0.8)
        for i in range(600):
            item = f"i{i}"
            judge.labels.add("ref", item, "1")
            judge.labelled("ref", item)
            judge.labels.add("w", item, "1" if rng.random() < m else "0")
            if judge.labelled("w", item):
                banned += 1
                break
    assert binomial_sf(banned, runs, alpha) > 0.01, banned


def _floor(answers: int, accuracy: float, seed: int) -> float:
    rng = np.random.default_rng(seed)
    return reference_floor(float((rng.random(answers) < accuracy).sum()), answers)


def test_the_reference_floor_covers_its_accuracy() -> None:
    misses = sum(_floor(40, 0.85, seed) > 0.85 for seed in range(400))
    assert binomial_sf(misses, 400, 0.05) > 0.01, misses


@dataclass(frozen=True)
class Member:
    name: str
    gold: float  # accuracy on gold questions
    task: float  # accuracy on real tasks (binary labels)
    requests: int


def _stream(crowd: list[Member], order: str, seed: int) -> list[str]:
    """Request order: 'mixed' interleaves everyone; 'spammers-first' lets the workers at
    chance make all their requests before anyone else."""
    rng = np.random.default_rng(seed)
    requests = [m.name for m in crowd for _ in range(m.requests)]
    if order == "mixed":
        return [requests[i] for i in rng.permutation(len(requests))]
    early = [r for r in requests if r.startswith("spam")]
    late = [r for r in requests if not r.startswith("spam")]
    return early + [late[i] for i in rng.permutation(len(late))]


def _run(crowd: list[Member], order: str, seed: int, alpha: float = 0.05) -> Gate:
    """A gate with agreement bans behind a quiz of 30 gold questions (bar 0.6, which makes
    the references), driven by the crowd, 3 binary labels an item."""
    rng = np.random.default_rng(seed + 1)
    settings = GateSettings(
        algorithm="quiz", params={"threshold": 0.6, "quiz_size": 30},
        policy=FirstGold(), max_unscreened=0, audit_rate=0.0, agreement=alpha,
        binary_labels=True, seed=seed,
    )  # fmt: skip
    gate = Gate(settings)
    truth = rng.integers(0, 2, 5000)
    next_item: dict[int, int] = {}  # labels given per item
    cursor = 0
    by_name = {m.name: m for m in crowd}
    for name in _stream(crowd, order, seed):
        member = by_name[name]
        reply = gate.next(name)
        if reply.kind is ReplyKind.GOLD:
            assert reply.gold is not None
            gate.answer(reply.gold, worker=reply.worker, reward=float(rng.random() < member.gold))
        elif reply.kind is not ReplyKind.BLOCKED:
            while next_item.get(cursor, 0) >= 3:
                cursor += 1
            item = cursor + int(rng.integers(0, 4))
            if next_item.get(item, 0) >= 3 or f"i{item}" in _labelled(gate, name):
                item = cursor
            next_item[item] = next_item.get(item, 0) + 1
            right = rng.random() < member.task
            label = int(truth[item]) if right else 1 - int(truth[item])
            gate.tell_label(name, f"i{item}", label)
    return gate


def _labelled(gate: Gate, worker: str) -> set[str]:
    return set(gate.labels.items_of(worker))


def _crowd(spammers: int, recognisers: int, good: int, requests: int) -> list[Member]:
    return (
        [Member(f"spam{i}", 0.5, 0.5, requests) for i in range(spammers)]
        + [Member(f"reco{i}", 0.95, 0.5, requests) for i in range(recognisers)]
        + [Member(f"good{i}", 0.88, 0.88, requests) for i in range(good)]
    )


def _bans(gate: Gate, prefix: str) -> tuple[int, int, int]:
    """Of the workers named ``prefix``...: banned on agreement, banned at all, in all."""
    named = [w for w in gate.workers if w.startswith(prefix)]
    on_agreement = {d.worker for d in gate.decisions
                    if d.decision == "banned" and "agreement" in d.reason}  # fmt: skip
    banned = [w for w in named if gate.workers[w].banned]
    return len(set(banned) & on_agreement), len(banned), len(named)


@pytest.mark.slow
@pytest.mark.parametrize("order", ["mixed", "spammers-first"])
def test_no_good_worker_is_banned_in_any_order(order: str) -> None:
    """With spammers and workers who recognise gold in the crowd, in the cascade order (the
    prolific spammers first) too, agreement bans no good worker: references come from gold,
    never from a consensus the spammers could drive, and a reference who recognises gold is
    itself judged on its labels."""
    good_banned = good = 0
    for seed in range(12):
        gate = _run(_crowd(spammers=4, recognisers=3, good=8, requests=300), order, seed)
        _, banned, named = _bans(gate, "good")
        good_banned, good = good_banned + banned, good + named
        assert gate.agreement is not None and len(gate.agreement.references) >= 4
    assert good == 96 and binomial_sf(good_banned, good, 0.05) > 0.01, good_banned


def test_a_banned_reference_stops_serving_and_its_test_stops() -> None:
    judge = _binary_judge(0.05)
    for worker in ("ref", "w"):
        judge.labels.add(worker, "i0", "1")
    judge.gold_changed("ref", 0.9)
    judge.labelled("w", "i0")
    assert judge.evidence["w"].compared == 1 and "ref" in judge.references
    judge.retire("ref")
    judge.labels.add("w", "i1", "0")
    judge.labels.add("ref", "i1", "1")
    assert judge.labelled("ref", "i1") == [] and judge.labelled("w", "i1") == []
    assert "ref" not in judge.references and judge.evidence["w"].compared == 1


def test_the_panel_trains_at_most_its_size_and_stops_once_full() -> None:
    """With a panel of 2, the default gate (which asks a worker little gold) gives gold to at
    most 2 trainees at a time until 2 references exist, then no more panel gold."""
    gate = Gate(GateSettings(agreement=0.05, binary_labels=True, panel=2, audit_rate=0.0))
    assert gate.agreement is not None
    panel_gold: dict[str, int] = {}
    for _ in range(120):
        for worker in ("ann", "bob", "cy", "dee"):
            reply = gate.next(worker)
            if reply.kind is ReplyKind.GOLD:
                assert reply.gold is not None
                if reply.reason == "reference panel":
                    panel_gold[worker] = panel_gold.get(worker, 0) + 1
                gate.answer(reply.gold, worker=reply.worker, reward=1.0)
            assert len(gate.agreement.trainees) <= 2
        if len(gate.agreement.references) == 2:
            break
    assert len(gate.agreement.references) == 2 and len(panel_gold) == 2, panel_gold
    given = dict(panel_gold)
    for worker in ("ann", "bob", "cy", "dee"):  # the panel is full: no more panel gold
        for _ in range(10):
            reply = gate.next(worker)
            assert reply.reason != "reference panel"
            if reply.kind is ReplyKind.GOLD and reply.gold is not None:
                gate.answer(reply.gold, worker=reply.worker, reward=1.0)
    assert panel_gold == given and not gate.agreement.trainees
