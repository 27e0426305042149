"""A platform stand-in: a real dataset replayed as a task stream of arriving workers.

Each worker of a recorded dataset arrives at a seeded time and asks for work at a seeded pace
until it has given every recorded answer it still can (a gold question does not take the
place of one of its tasks; at most twice as many requests as it has answers); requests of all
workers are interleaved by time, so workers join late, overlap and leave. A seeded share of
the items serves as gold (their truth is known to the gate's platform); the others are the
real tasks, whose truth is hidden from every policy and used only to score the final labels.

A request is put to the policy only while the platform has work for the worker (one of its
recorded task items still needs a label): a platform serves nothing, gold questions
included, to a worker it has no task for, so a worker with none left leaves without a reply.
What a request gets, per the policy's reply:

* a gold question: the worker's next recorded answer to a gold item (seeded order); once it
  has none left, an answer drawn from its accuracy over all its recorded answers (right with
  that probability, else one of the item's other recorded answers);
* a real task: the worker's next recorded answer to a task item that still needs a label; a
  worker with no such item left has no more work and leaves (its later requests are dropped);
* blocked: the worker leaves.

A banned worker's task labels are discarded and its items need labels again (paid again).
Each task item needs its recorded number of labels (``overlap="recorded"``), or labels until
its top answer leads the next by two votes, at most that number (``overlap="dynamic"``, 0/1
and categorical answers). Items still short at the end are filled by replacement labels, paid
like tasks: a worker drawn from the ones kept, weighted by the task labels each made, answers
right with its recorded accuracy, else one of the item's other recorded answers (graded: the
truth moved by a score drawn from the worker's recorded scores).
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from screener.gate import Gate, ReplyKind
from screener.oracles.dataset import Record, RecordedAnswers

__all__ = ["StreamOutcome", "StreamSettings", "TaskStream", "run_stream"]

Overlap = Literal["recorded", "dynamic"]


@dataclass(frozen=True)
class StreamSettings:
    """``gold_share``: share of the items used as gold; ``overlap``: labels each task item
    needs; ``session``: share of the stream's span one worker's requests spread over;
    ``seed``: every draw (items, orders, arrivals, replacements)."""

    gold_share: float = 0.1
    overlap: Overlap = "recorded"
    session: float = 0.3
    seed: int = 0


@dataclass
class _Worker:
    name: str
    accuracy: float
    scores: np.ndarray
    gold: deque[tuple[str, float, str | None]]
    tasks: deque[tuple[str, str]]
    labels: list[str] = field(default_factory=list)  # task items it labelled (kept)
    left: bool = False
    banned: bool = False


@dataclass(frozen=True)
class StreamOutcome:
    """What the requester bought: the labels kept per task item, and the counts."""

    labels: dict[str, list[tuple[str, str]]]  # item -> (worker, answer), kept labels
    truth: dict[str, str]
    graded: bool
    gold_answers: int
    task_labels: int  # task labels paid for, discarded ones and replacements included
    replacements: int
    discarded: int
    accuracy_of: dict[str, float]  # worker -> recorded accuracy
    banned: frozenset[str]
    short_items: int  # items that needed replacement labels

    def label_accuracy(self, seed: int = 0) -> float:
        """The accuracy of the final labels of the task items (NaN without any): majority vote
        over the labels kept, ties broken by a draw seeded with ``seed``; graded answers: the
        mean answer, scored ``1 - |mean - truth|``."""
        rng = np.random.default_rng(seed)
        right = []
        for item in sorted(self.labels):
            answers = [answer for _, answer in self.labels[item]]
            truth = self.truth[item]
            if self.graded:
                mean = float(np.mean([float(a) for a in answers]))
                right.append(max(0.0, 1.0 - abs(mean - float(truth))))
                continue
            counts = Counter(answers).most_common()
            top = sorted(a for a, n in counts if n == counts[0][1])
            right.append(float(top[int(rng.integers(len(top)))] == truth))
        return float(np.mean(right)) if right else math.nan


class TaskStream:
    """One seeded replay of ``answers`` (see the module docstring)."""

    def __init__(self, answers: RecordedAnswers, settings: StreamSettings | None = None):
        if answers.gold is None:
            raise ValueError(f"{answers.source}: a task stream needs every item's truth")
        self.settings = settings or StreamSettings()
        self.rng = np.random.default_rng(self.settings.seed)
        self.truth = dict(answers.gold)
        self.graded = _is_graded(answers)
        items = sorted({r.item for records in answers.records for r in records})
        chosen = self.rng.permutation(len(items))[
            : max(1, round(self.settings.gold_share * len(items)))
        ]
        self.gold_items = frozenset(items[i] for i in chosen)
        self._gold_list = sorted(self.gold_items)
        self.recorded = Counter(
            r.item for rs in answers.records for r in rs if r.item not in self.gold_items
        )
        self.kept: dict[str, list[tuple[str, str]]] = {item: [] for item in self.recorded}
        self.answer_set: dict[str, list[str]] = {}
        for records in answers.records:
            for r in records:
                self.answer_set.setdefault(r.item, []).append(_given(r))
        self.workers = {
            name: self._worker(name, records, rewards)
            for name, records, rewards in zip(
                answers.workers, answers.records, answers.rewards, strict=True
            )
        }
        self.schedule = self._schedule(answers)
        self.gold_answers = 0
        self.task_labels = 0
        self.discarded = 0

    # ------------------------------------------------------------------ the stream
    def requests(self) -> Iterator[str]:
        """Worker ids in request order, each while it has work: a worker who left, or has no
        task item left needing a label (it leaves then), asks no more."""
        for worker in self.schedule:
            if not self.workers[worker].left and self.has_work(worker):
                yield worker

    def gold(self, worker: str) -> tuple[str, float]:
        """The worker's answer to a gold question: (item, reward)."""
        state = self.workers[worker]
        self.gold_answers += 1
        if state.gold:
            item, reward, _ = state.gold.popleft()
            return item, reward
        item = self._gold_list[int(self.rng.integers(len(self._gold_list)))]
        if self.graded:
            return item, float(self.rng.choice(state.scores))
        return item, float(self.rng.random() < state.accuracy)

    def has_work(self, worker: str) -> bool:
        """Whether one of the worker's recorded task items still needs a label; without one
        the worker has no more work and leaves (items that need no label now are passed
        over for good, as ``task`` passes them)."""
        state = self.workers[worker]
        while state.tasks and not self._needs_label(state.tasks[0][0]):
            state.tasks.popleft()
        if not state.tasks:
            state.left = True
        return bool(state.tasks)

    def task(self, worker: str) -> str | None:
        """Give the worker a real task: the item it labels, or None (no work: it leaves)."""
        if not self.has_work(worker):
            return None
        state = self.workers[worker]
        item, answer = state.tasks.popleft()
        self.kept[item].append((worker, answer))
        state.labels.append(item)
        self.task_labels += 1
        return item

    def block(self, worker: str) -> None:
        self.workers[worker].left = True

    def ban(self, worker: str) -> None:
        """Discard the worker's task labels (their items need labels again); it leaves."""
        state = self.workers[worker]
        if state.banned:
            return
        state.banned = state.left = True
        for item in set(state.labels):
            before = len(self.kept[item])
            self.kept[item] = [(w, a) for w, a in self.kept[item] if w != worker]
            self.discarded += before - len(self.kept[item])
        state.labels.clear()

    def finish(self) -> StreamOutcome:
        """Fill the items still short with replacement labels and return what was bought."""
        kept_workers = [w for w in self.workers.values() if not w.banned and w.labels]
        if not kept_workers:
            kept_workers = [w for w in self.workers.values() if not w.banned] or list(
                self.workers.values()
            )
        weights = np.array([max(len(w.labels), 1) for w in kept_workers], dtype=float)
        weights /= weights.sum()
        replacements = short = 0
        for item in sorted(self.kept):
            missing = 0
            while self._needs_label(item):
                who = kept_workers[int(self.rng.choice(len(kept_workers), p=weights))]
                self.kept[item].append((f"replacement:{who.name}", self._draw(who, item)))
                missing += 1
            replacements += missing
            short += missing > 0
        return StreamOutcome(
            labels=self.kept,
            truth={item: self.truth[item] for item in self.kept},
            graded=self.graded,
            gold_answers=self.gold_answers,
            task_labels=self.task_labels + replacements,
            replacements=replacements,
            discarded=self.discarded,
            accuracy_of={name: w.accuracy for name, w in self.workers.items()},
            banned=frozenset(name for name, w in self.workers.items() if w.banned),
            short_items=short,
        )

    # ------------------------------------------------------------------ helpers
    def _needs_label(self, item: str) -> bool:
        labels = self.kept[item]
        cap = self.recorded[item]
        if len(labels) >= cap:
            return False
        if self.settings.overlap == "recorded" or self.graded or len(labels) < 2:
            return True
        counts = Counter(answer for _, answer in labels).most_common(2)
        lead = counts[0][1] - (counts[1][1] if len(counts) > 1 else 0)
        return lead < 2

    def _draw(self, worker: _Worker, item: str) -> str:
        truth = self.truth[item]
        if self.graded:
            score = float(self.rng.choice(worker.scores))
            sign = 1.0 if self.rng.random() < 0.5 else -1.0
            value = min(max(float(truth) + sign * (1.0 - score), 0.0), 1.0)
            return f"{value:g}"
        if self.rng.random() < worker.accuracy:
            return truth
        others = [a for a in self.answer_set[item] if a != truth] or ["(wrong)"]
        return others[int(self.rng.integers(len(others)))]

    def _worker(self, name: str, records: tuple[Record, ...], rewards: np.ndarray) -> _Worker:
        order = self.rng.permutation(len(records))
        gold: deque[tuple[str, float, str | None]] = deque()
        tasks: deque[tuple[str, str]] = deque()
        for index in order.tolist():
            record = records[index]
            if record.item in self.gold_items:
                gold.append((record.item, float(record.reward), record.answer))
            else:
                tasks.append((record.item, _given(record)))
        return _Worker(name, float(rewards.mean()), np.asarray(rewards), gold, tasks)

    def _schedule(self, answers: RecordedAnswers) -> list[str]:
        """Each worker's requests (twice its recorded answers: it leaves when it has no task
        left) at a seeded arrival time and pace, interleaved by time."""
        span = self.settings.session
        times: list[np.ndarray] = []
        names: list[np.ndarray] = []
        for index, rewards in enumerate(answers.rewards):
            start = self.rng.random() * (1.0 - span)
            times.append(start + np.sort(self.rng.random(2 * rewards.size)) * span)
            names.append(np.full(2 * rewards.size, index))
        order = np.argsort(np.concatenate(times), kind="stable")
        workers = answers.workers
        return [workers[i] for i in np.concatenate(names)[order].tolist()]


def _given(record: Record) -> str:
    """A label as the worker gave it (a graded answer too)."""
    return str(record.given if record.given is not None else record.answer)


def _is_graded(answers: RecordedAnswers) -> bool:
    """Graded answers: rewards strictly between 0 and 1 occur."""
    return any(bool(((r > 0.0) & (r < 1.0)).any()) for r in answers.rewards)


def run_stream(stream: TaskStream, gate: Gate | None) -> tuple[StreamOutcome, int]:
    """Drive ``stream`` through ``gate`` (None: no screening, every request a task), telling
    it every task label as it is given and acting on each ban at once. Returns what was
    bought and the most real tasks a worker did before its first gold question (the gate's
    limit, as the platform saw it)."""
    acted = 0
    before_gold: Counter[str] = Counter()
    screened: set[str] = set()
    for worker in stream.requests():
        reply = None if gate is None else gate.next(worker)
        if reply is None or reply.kind in (ReplyKind.TASK, ReplyKind.QUALIFIED):
            item = stream.task(worker)
            if item is not None and gate is not None:
                gate.tell_label(worker, item, stream.kept[item][-1][1])
            if item is not None and worker not in screened:
                before_gold[worker] += 1
        elif reply.kind is ReplyKind.BLOCKED:
            stream.block(worker)
        else:
            assert gate is not None and reply.gold is not None
            screened.add(worker)
            gate.answer(reply.gold, reward=stream.gold(worker)[1])
        if gate is not None and len(gate.decisions) > acted:
            for decision in gate.decisions[acted:]:
                if decision.decision == "banned":
                    stream.ban(decision.worker)
            acted = len(gate.decisions)
    return stream.finish(), max(before_gold.values(), default=0)
