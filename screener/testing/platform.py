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
like tasks, from the whole crowd not banned, never twice from one worker on one item: a
recorded answer of the item left unused first; else a worker drawn by its recorded activity
answers right with a chance that keeps the item's difficulty (``_right_chance``: its recorded
accuracy moved by the item's easiness, fitted to the item's recorded answers), else one of the
item's other recorded answers (graded: the truth moved by a score drawn from the worker's
recorded scores).
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

__all__ = [
    "StreamOutcome",
    "StreamSettings",
    "TaskStream",
    "item_easiness",
    "right_chance",
    "run_stream",
]

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
        mean answer, scored ``1 - |mean - truth|``; an item left with no label (every worker
        who could label it banned) scores 0."""
        rng = np.random.default_rng(seed)
        right = []
        for item in sorted(self.labels):
            answers = [answer for _, answer in self.labels[item]]
            truth = self.truth[item]
            if not answers:  # every worker who could label it was banned: none delivered
                right.append(0.0)
                continue
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
        self._item_answers = _item_records(answers, self.workers)
        self._easiness: dict[str, float] = {}
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
        """Fill the items still short (``_fill``) and return what was bought."""
        available = [w for w in self.workers.values() if not w.banned]
        weights = np.array([max(len(w.labels) + len(w.tasks), 1) for w in available], float)
        unused: dict[str, list[tuple[str, str]]] = {}  # item -> recorded answers left
        for state in available:
            for task, answer in state.tasks:
                unused.setdefault(task, []).append((state.name, answer))
        replacements = short = 0
        for item in sorted(self.kept):
            missing = 0
            while self._needs_label(item):
                filled = self._fill(item, unused.get(item, []), available, weights)
                if filled is None:
                    break  # every available worker has labelled it: it stays short
                self.kept[item].append(filled)
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

    def _fill(
        self,
        item: str,
        unused: list[tuple[str, str]],
        available: list[_Worker],
        weights: np.ndarray,
    ) -> tuple[str, str] | None:
        """One paid label for a short item, as the platform would buy it after the stream:
        from a worker not banned who has not labelled the item, never the same worker twice
        on one item. A recorded answer of the item left unused comes first (the item's own
        difficulty, as the data has it); else a worker drawn by its activity answers by the
        item's difficulty model (``_right_chance``; graded: a score drawn from its own)."""
        had = {worker for worker, _ in self.kept[item]}
        while unused:
            name, answer = unused.pop(0)
            if name not in had and f"replacement:{name}" not in had:
                return f"replacement:{name}", answer
        free = np.array([w.name not in had and f"replacement:{w.name}" not in had
                         for w in available])  # fmt: skip
        if not free.any():
            return None
        chances = weights * free
        who = available[int(self.rng.choice(len(available), p=chances / chances.sum()))]
        return f"replacement:{who.name}", self._draw(who, item)

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
        if self.rng.random() < self._right_chance(worker, item):
            return truth
        others = [a for a in self.answer_set[item] if a != truth] or ["(wrong)"]
        return others[int(self.rng.integers(len(others)))]

    def _right_chance(self, worker: _Worker, item: str) -> float:
        """The chance ``worker`` labels ``item`` right: ``sigmoid(logit(accuracy) + b)``, the
        item's easiness ``b`` from its recorded answers (``item_easiness``): a contested item
        is hard for everyone."""
        easiness = self._easiness.get(item)
        if easiness is None:
            accuracies, rewards = self._item_answers[item]
            easiness = self._easiness[item] = item_easiness(accuracies, rewards)
        return right_chance(worker.accuracy, easiness)

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


def _item_records(
    answers: RecordedAnswers, workers: dict[str, _Worker]
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per item, the recorded accuracies of the workers who answered it and the rewards of
    their answers to it."""
    found: dict[str, tuple[list[float], list[float]]] = {}
    for name, records in zip(answers.workers, answers.records, strict=True):
        for record in records:
            accuracies, rewards = found.setdefault(record.item, ([], []))
            accuracies.append(workers[name].accuracy)
            rewards.append(float(record.reward))
    return {item: (np.array(a), np.array(r)) for item, (a, r) in found.items()}


def right_chance(accuracy: float, easiness: float) -> float:
    """The chance a worker of this accuracy answers an item of this easiness right."""
    return float(_sigmoid(_clipped_logits(np.array([accuracy]))[0] + easiness))


def item_easiness(accuracies: np.ndarray, rewards: np.ndarray) -> float:
    """An item's easiness ``b``: the answerers' mean ``sigmoid(logit(accuracy) + b)`` equals
    the share of their answers that are right, shrunk by ``_PSEUDO_ANSWERS`` answers at the
    chance their accuracies alone give (so an item with few answers stays near ``b = 0``).

    Checked against the real answers (tests/testing/test_platform.py): held out, on the items
    most answers got wrong, a good worker's chance is within 0.1 of its real share right on
    22 of the 24 shared categorical datasets, where its accuracy alone is 0.1-0.69 too high."""
    logits = _clipped_logits(accuracies)
    prior = float(_sigmoid(logits).mean())
    share = (float(rewards.sum()) + _PSEUDO_ANSWERS * prior) / (rewards.size + _PSEUDO_ANSWERS)
    return _fit_easiness(logits, share)


def _clipped_logits(p: np.ndarray) -> np.ndarray:
    q = np.clip(p, _EDGE, 1.0 - _EDGE)
    return np.asarray(np.log(q / (1.0 - q)))


def _sigmoid(x: float | np.ndarray) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-np.asarray(x))))


def _fit_easiness(logits: np.ndarray, share: float) -> float:
    """The ``b`` with ``mean(sigmoid(logits + b)) = share`` (clipped into (0, 1)), by
    bisection: the mean is increasing in ``b``."""
    target = min(max(share, _EDGE), 1.0 - _EDGE)
    low, high = -20.0, 20.0
    for _ in range(60):
        middle = (low + high) / 2.0
        if float(_sigmoid(logits + middle).mean()) < target:
            low = middle
        else:
            high = middle
    return (low + high) / 2.0


#: Probabilities are kept this far from 0 and 1 in the difficulty model (finite logits).
_EDGE = 0.02
#: Pseudo-answers an item's easiness is shrunk by: chosen on 7 shared datasets by the Brier
#: score of a held-out answer (2 beat the accuracy alone on 5 of 7; no shrinking on 4).
_PSEUDO_ANSWERS = 2.0


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
            gate.answer(reply.gold, worker=worker, reward=stream.gold(worker)[1])
        if gate is not None and len(gate.decisions) > acted:
            for decision in gate.decisions[acted:]:
                if decision.decision == "banned":
                    stream.ban(decision.worker)
            acted = len(gate.decisions)
    return stream.finish(), max(before_gold.values(), default=0)
