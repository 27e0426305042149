"""The platform stand-in's task stream: what a replayed dataset gives each request, what a ban
takes back, what the requester pays for, all on a small hand-made dataset."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from screener.gate import Gate, GateSettings
from screener.oracles.dataset import Record, RecordedAnswers
from screener.testing.platform import StreamSettings, TaskStream, run_stream


def dataset(workers: int = 12, items: int = 40, seed: int = 0, bad: float = 0.5) -> RecordedAnswers:
    """Every worker answers every item (binary truth "a"/"b"); the last quarter is right with
    probability ``bad``, the others 0.9."""
    rng = np.random.default_rng(seed)
    truth = {f"i{j}": "a" if rng.random() < 0.5 else "b" for j in range(items)}
    records = []
    for w in range(workers):
        accuracy = bad if w >= workers * 3 // 4 else 0.9
        rows = []
        for item, answer in truth.items():
            right = rng.random() < accuracy
            given = answer if right else ("b" if answer == "a" else "a")
            rows.append(Record(item, given, float(right)))
        records.append(tuple(rows))
    return RecordedAnswers(tuple(f"w{w}" for w in range(workers)), tuple(records), "made", truth)


def test_requests_follow_the_recorded_answers() -> None:
    data = dataset()
    stream = TaskStream(data, StreamSettings(seed=1))
    counts = Counter(stream.schedule)
    assert counts == {w: 80 for w in data.workers}  # twice its answers: gold is extra
    assert 0 < len(stream.gold_items) <= 5  # 10% of 40 items
    assert stream.schedule != sorted(stream.schedule)  # interleaved


def test_recorded_overlap_fills_every_item_to_its_recorded_count() -> None:
    data = dataset()
    stream = TaskStream(data, StreamSettings(overlap="recorded", seed=2))
    outcome, before_gold = run_stream(stream, None)
    assert all(len(labels) == 12 for labels in outcome.labels.values())
    assert outcome.replacements == 0 and outcome.gold_answers == 0
    assert outcome.task_labels == 12 * len(outcome.labels)
    assert before_gold > 0


def test_a_ban_discards_labels_which_are_bought_again() -> None:
    data = dataset()
    stream = TaskStream(data, StreamSettings(overlap="recorded", seed=3))
    first = stream.schedule[0]
    for worker in list(stream.schedule)[:400]:
        stream.task(worker)
    made = len(stream.workers[first].labels)
    assert made > 0
    stream.ban(first)
    assert all(w != first for labels in stream.kept.values() for w, _ in labels)
    outcome = stream.finish()
    assert outcome.discarded == made
    assert all(len(labels) == 12 for labels in outcome.labels.values())  # filled again
    assert first in outcome.banned


def test_dynamic_overlap_stops_at_a_lead_of_two() -> None:
    data = dataset()
    stream = TaskStream(data, StreamSettings(overlap="dynamic", seed=4))
    outcome, _ = run_stream(stream, None)
    for labels in outcome.labels.values():
        counts = Counter(answer for _, answer in labels).most_common()
        lead = counts[0][1] - (counts[1][1] if len(counts) > 1 else 0)
        assert lead >= 2 or len(labels) == 12
    assert outcome.task_labels < 12 * len(outcome.labels)


def test_the_same_seed_replays_the_same_stream() -> None:
    def once() -> tuple[int, int, list[str]]:
        stream = TaskStream(dataset(), StreamSettings(seed=5))
        outcome, _ = run_stream(stream, Gate(GateSettings(policy="first")))
        return outcome.gold_answers, outcome.task_labels, sorted(outcome.banned)

    assert once() == once()


def test_screening_bans_the_bad_workers_and_keeps_the_limit() -> None:
    data = dataset(workers=16, items=80, bad=0.25)
    stream = TaskStream(data, StreamSettings(gold_share=0.3, seed=6))
    gate = Gate(GateSettings(policy="first", params={"threshold": 0.6, "pilot": 8}))
    outcome, before_gold = run_stream(stream, gate)
    assert before_gold <= gate.settings.max_unscreened
    assert outcome.banned <= {"w12", "w13", "w14", "w15"}
    assert len(outcome.banned) >= 2


def test_no_gold_question_goes_to_a_worker_without_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """With dynamic overlap the items are done long before the late workers' requests end: a
    gate that asks gold on every request would pay for gold nobody needs. The platform puts a
    request to the gate only while the worker has a task item still needing a label."""
    data = dataset(workers=16, items=40, bad=0.9)  # nobody under the bar
    stream = TaskStream(data, StreamSettings(overlap="dynamic", seed=7))
    asked: list[tuple[str, bool]] = []
    gate = Gate(GateSettings(policy="first"))
    next_of = gate.next

    def recording_next(worker: str) -> object:
        asked.append((worker, _has_open_item(stream, worker)))
        return next_of(worker)

    monkeypatch.setattr(gate, "next", recording_next)
    outcome, _ = run_stream(stream, gate)
    assert asked and all(open_item for _, open_item in asked)
    assert len(asked) < len(stream.schedule)  # requests after the work ran out: not asked
    assert outcome.gold_answers < len(asked)


def _has_open_item(stream: TaskStream, worker: str) -> bool:
    """Whether one of ``worker``'s remaining recorded task items still needs a label, read
    without changing the stream (the rule, written apart from TaskStream.has_work)."""
    remaining = stream.workers[worker].tasks
    return any(stream._needs_label(item) for item, _ in remaining)


def test_a_dataset_without_truth_is_refused() -> None:
    data = dataset()
    no_truth = RecordedAnswers(data.workers, data.records, "made", None)
    with pytest.raises(ValueError):
        TaskStream(no_truth)
