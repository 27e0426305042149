"""Adversarial streams of the platform stand-in: spammers first, a colluding group, workers who
recognise gold; each checked on seeded hand-made crowds (one-sided binomial tests where the
claim is a probability)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from stats_helpers import assert_rate_at_most

from benchmarks.stream_oracle import run_oracle
from screener.oracles.answer_file import Record, RecordedAnswers
from screener.testing.doubles.adversaries import Adversary
from screener.testing.doubles.platform import MILESTONE, StreamSettings, TaskStream

CLASSES = ("a", "b", "c")


def crowd(workers: int = 40, items: int = 150, seed: int = 0) -> RecordedAnswers:
    """Every worker answers every item (three classes, truth uniform); a quarter of the
    workers at 0.4, the rest at 0.9; a wrong answer is one of the two other classes."""
    rng = np.random.default_rng(seed)
    truth = {f"i{j}": str(rng.choice(CLASSES)) for j in range(items)}
    records = []
    for w in range(workers):
        accuracy = 0.4 if w % 4 == 0 else 0.9
        rows = []
        for item, answer in truth.items():
            right = bool(rng.random() < accuracy)
            given = answer if right else str(rng.choice([c for c in CLASSES if c != answer]))
            rows.append(Record(item, given, float(right)))
        records.append(tuple(rows))
    names = tuple(f"w{w}" for w in range(workers))
    return RecordedAnswers(names, tuple(records), "made", truth)


def _stream(
    adversary: Adversary | None, seed: int = 1, data: RecordedAnswers | None = None
) -> TaskStream:
    settings = StreamSettings(overlap="dynamic", seed=seed, adversary=adversary)
    return TaskStream(data or crowd(), settings)


def _members(stream: TaskStream, role: str) -> list[str]:
    return sorted(name for name, w in stream.workers.items() if w.role == role)


def test_recognisers_are_right_on_every_gold_question_and_at_chance_on_tasks() -> None:
    stream = _stream("recognise-10")
    recognisers = _members(stream, "recogniser")
    assert len(recognisers) == 4  # 10% of 40
    rewards = [stream.gold(w)[1] for w in recognisers for _ in range(60)]  # past their records
    assert rewards == [1.0] * len(rewards)
    given = [(item, a) for w in recognisers for item, a in stream.workers[w].tasks]
    right = sum(a == stream.truth[item] for item, a in given)
    assert stream.adversaries is not None
    classes = stream.adversaries.classes  # an item's recorded labels: 3 (or 2, if one is rare)
    chance = float(np.mean([1 / len(classes[item]) for item, _ in given]))
    assert 1 / 3 <= chance < 0.36
    assert_rate_at_most(right, len(given), chance)  # not above chance ...
    assert_rate_at_most(len(given) - right, len(given), 1 - chance)  # ... nor below it
    accuracy = stream.finish().accuracy_of
    assert [accuracy[w] for w in recognisers] == pytest.approx([chance] * 4, abs=0.01)


def test_honest_workers_answer_as_recorded_beside_the_recognisers() -> None:
    """The same crowd's honest answers are the recorded ones: the test above can fail."""
    stream = _stream("recognise-10")
    honest = _members(stream, "honest")
    given = [(item, a) for w in honest for item, a in stream.workers[w].tasks]
    right = sum(a == stream.truth[item] for item, a in given)
    with pytest.raises(AssertionError):
        assert_rate_at_most(right, len(given), 1 / 3)


def test_colluders_share_one_wrong_label_per_item_and_answer_gold_as_recorded() -> None:
    data = crowd()
    stream = _stream("collude-20", data=data)
    colluders = _members(stream, "colluder")
    assert len(colluders) == 8  # 20% of 40
    by_item: dict[str, set[str]] = {}
    for w in colluders:
        for item, answer in stream.workers[w].tasks:
            by_item.setdefault(item, set()).add(answer)
    assert by_item and all(len(labels) == 1 for labels in by_item.values())
    assert all(labels != {stream.truth[item]} for item, labels in by_item.items())
    # The wrong class is a seeded draw of the two: the first of them neither always nor never.
    first = sum(
        next(iter(labels)) == min(c for c in CLASSES if c != stream.truth[item])
        for item, labels in by_item.items()
    )
    assert_rate_at_most(first, len(by_item), 0.5)
    assert_rate_at_most(len(by_item) - first, len(by_item), 0.5)
    recorded = dict(zip(data.workers, data.records, strict=True))
    for w in colluders:
        rewards = {r.item: r.reward for r in recorded[w]}
        answers = [stream.gold(w) for _ in range(len(stream.workers[w].gold))]
        assert all(reward == rewards[item] for item, reward, _ in answers)
    assert stream.finish().accuracy_of[colluders[0]] == 0.0


def test_collude_40_takes_40_percent_and_the_seed_draws_the_group() -> None:
    group = _members(_stream("collude-40", seed=1), "colluder")
    assert len(group) == 16
    assert group == _members(_stream("collude-40", seed=1), "colluder")
    assert group != _members(_stream("collude-40", seed=2), "colluder")


def test_fills_by_an_adversary_keep_its_role() -> None:
    """Items short at the end are filled from the whole crowd: a colluder filling one gives
    the group's label."""
    stream = _stream("collude-40", seed=3)
    for worker in list(stream.schedule)[:200]:
        stream.task(worker)
    honest = _members(stream, "honest")
    for worker in honest:
        stream.ban(worker)
    outcome = stream.finish()
    assert outcome.replacements > 0
    assert stream.adversaries is not None
    for item, labels in outcome.labels.items():
        assert {a for _, a in labels} <= {stream.adversaries.wrong[item]}


def test_spammers_first_puts_the_workers_under_the_bar_first_most_prolific_first() -> None:
    data = crowd(workers=24, items=100, seed=4)
    # Give the spammers (w0, w4, ...) different numbers of answers: w0 the fewest.
    records = [rs[: 20 + 4 * i] if i % 4 == 0 else rs for i, rs in enumerate(data.records)]
    data = RecordedAnswers(data.workers, tuple(records), "made", data.gold)
    spammers = [w for w, rs in zip(data.workers, data.records, strict=True)
                if np.mean([r.reward for r in rs]) < 0.6]  # fmt: skip
    prolific = sorted(spammers, key=lambda w: -len(data.records[data.workers.index(w)]))
    stream = _stream("spammers-first", seed=5, data=data)
    arrivals = list(dict.fromkeys(stream.schedule))
    assert arrivals[: len(spammers)] == prolific
    real = list(dict.fromkeys(_stream(None, seed=5, data=data).schedule))
    assert real[: len(spammers)] != prolific  # the real order does not
    assert Counter(stream.schedule) == Counter(_stream(None, seed=5, data=data).schedule)


def test_an_adversarial_stream_keeps_the_real_orders_gold_and_answer_orders() -> None:
    real, adversarial = _stream(None, seed=6), _stream("collude-20", seed=6)
    assert real.gold_items == adversarial.gold_items and real.schedule == adversarial.schedule
    honest = _members(adversarial, "honest")
    assert all(real.workers[w].tasks == adversarial.workers[w].tasks for w in honest)


def test_a_graded_dataset_is_refused_for_colluders_and_recognisers() -> None:
    data = crowd(workers=8, items=20)
    graded = tuple(tuple(Record(r.item, None, 0.5, "0.5") for r in rs) for rs in data.records)
    answers = RecordedAnswers(data.workers, graded, "graded", {i: "0.5" for i in data.gold or {}})
    adversaries: tuple[Adversary, ...] = ("collude-20", "recognise-10")
    for adversary in adversaries:
        with pytest.raises(ValueError, match="categor"):
            _stream(adversary, data=answers)
    assert _stream("spammers-first", data=answers).schedule


def test_the_stream_records_who_reached_a_50th_task_and_who_was_banned_before_it() -> None:
    stream = TaskStream(crowd(workers=4, items=200), StreamSettings(seed=7))
    late, early, small = "w1", "w2", "w3"
    for _ in range(MILESTONE):
        stream.task(late)
    stream.ban(late)  # after its 50th task: reached, not caught
    for _ in range(10):
        stream.task(early)
    stream.ban(early)  # after 10 of its ~180 tasks: it would have reached it
    while stream.workers[small].tasks and len(stream.workers[small].tasks) > MILESTONE - 5:
        stream.workers[small].tasks.pop()
    stream.ban(small)  # 45 task items: it could not reach it
    outcome = stream.finish()
    assert outcome.reached_milestone == {late, early}
    assert outcome.banned_before_milestone == {early}


def test_the_oracle_knows_the_adversaries_by_their_task_accuracy() -> None:
    """Colluders are under the bar by what they do on tasks (0), not by their record (0.9):
    the bound turns each one away that comes while there is work, and no honest good one."""
    stream = _stream("collude-20", seed=8)
    outcome, _ = run_oracle(stream, 0.6, None)
    colluders = set(_members(stream, "colluder"))
    good = {w for w, s in stream.workers.items() if s.role == "honest" and s.accuracy >= 0.6}
    assert outcome.banned & colluders and not outcome.banned & good
    assert outcome.roles == dict.fromkeys(sorted(colluders), "colluder")


def test_an_unknown_adversary_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match="recognise-10"):
        StreamSettings(adversary="collude-99")  # type: ignore[arg-type]
