"""The stream benchmark's bounds: screening that knows every worker, on a hand-made crowd."""

from __future__ import annotations

import numpy as np

from benchmarks.stream_oracle import ORACLES, recorded_book, run_oracle
from screener.oracles.answer_file import Record, RecordedAnswers
from screener.testing.doubles.platform import StreamSettings, TaskStream, run_stream

BAR = 0.6


def crowd(seed: int = 0, workers: int = 16, items: int = 60) -> RecordedAnswers:
    """Every worker answers every item (truth "a"/"b"): a quarter at accuracy 0.3, the rest 0.9."""
    rng = np.random.default_rng(seed)
    truth = {f"i{j}": str(rng.choice(["a", "b"])) for j in range(items)}
    records = []
    for w in range(workers):
        accuracy = 0.3 if w % 4 == 0 else 0.9
        rows = []
        for item, answer in truth.items():
            right = bool(rng.random() < accuracy)
            rows.append(Record(item, answer if right else {"a": "b", "b": "a"}[answer], right))
        records.append(tuple(rows))
    return RecordedAnswers(tuple(f"w{w}" for w in range(workers)), tuple(records), "made", truth)


def _stream(seed: int) -> TaskStream:
    return TaskStream(crowd(seed), StreamSettings(overlap="dynamic", seed=seed))


def test_the_oracle_turns_away_exactly_the_workers_under_the_bar_and_asks_no_gold() -> None:
    stream = _stream(1)
    outcome, _ = run_oracle(stream, BAR, ORACLES["oracle"])
    under = {w for w, accuracy in outcome.accuracy_of.items() if accuracy < BAR}
    assert outcome.banned and outcome.banned <= under  # those who came while there was work
    assert outcome.gold_answers == 0 and outcome.discarded == 0
    assert not any(w in under for labels in outcome.labels.values() for w, _ in labels)


def test_the_limit_bound_asks_each_kept_worker_one_gold_question_before_its_fourth_task() -> None:
    stream = _stream(2)
    outcome, before_gold = run_oracle(stream, BAR, ORACLES["oracle-limit"])
    kept_workers = {w for w, labels in ((n, s.labels) for n, s in stream.workers.items()) if labels}
    assert before_gold == 3
    assert 0 < outcome.gold_answers <= len(kept_workers)
    assert not outcome.banned & kept_workers


def test_the_bounds_buy_better_labels_for_less_than_no_screening_on_a_spammy_crowd() -> None:
    """Summed over seeds: one stream can cost the same either way."""
    seeds = range(8)
    nones = [run_stream(_stream(seed), None)[0] for seed in seeds]
    for limit in ORACLES.values():
        bounds = [run_oracle(_stream(seed), BAR, limit)[0] for seed in seeds]
        paid = sum(b.gold_answers + b.task_labels for b in bounds)
        assert paid < sum(n.task_labels for n in nones), limit
        gains = [
            b.label_accuracy(s) - n.label_accuracy(s)
            for s, b, n in zip(seeds, bounds, nones, strict=True)
        ]
        assert sum(gains) > 0, limit


def test_the_items_bound_settles_each_item_weighing_labels_at_recorded_accuracy() -> None:
    """Workers at 0.9 settle an item at 0.95 with two agreeing labels (0.988), never one."""
    stream = TaskStream(crowd(3), StreamSettings(overlap="gate", seed=3))
    book = recorded_book(stream, 0.95, binary=True)
    outcome, _ = run_oracle(stream, BAR, ORACLES["oracle-limit"], book)
    for name, worker in stream.workers.items():
        assert book.accuracy(name) == worker.task_accuracy
    states = list(book.items.values())
    assert all(s.done and (s.confidence >= 0.95 or s.full()) for s in states)
    counted = [len(outcome.labels[s.item]) for s in states]
    assert min(counted) >= 2 and max(counted) <= max(stream.recorded.values())
    assert np.mean(counted) < 3.0
    assert outcome.final is not None
    right = sum(outcome.final[s.item] == outcome.truth[s.item] for s in states)
    assert right >= 0.9 * len(states)
