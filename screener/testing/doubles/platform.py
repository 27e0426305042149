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
its top answer leads the next by ``lead`` votes (two by default), at most that number
(``overlap="dynamic"``, 0/1 and categorical answers), or labels until the gate settles it
(``overlap="gate"``, categorical answers: ``run_stream`` registers every task item with the
gate, its cap its recorded number of labels; a task request names the first ``PAGE`` of the
worker's recorded items still open as candidates, and the worker labels the one the gate
names; the final labels are the gate's, ``screener.gate.items``). Items still short at the end
(under gate overlap: not settled, by the gate's weighing of the labels kept) are filled by
replacement labels, paid like tasks, from the whole crowd not banned, never twice
from one worker on one item: a recorded answer of the item left unused first; else a worker
drawn by its recorded activity answers right with a chance that keeps the item's difficulty
(``_right_chance``: its recorded accuracy moved by the item's easiness, fitted to the item's
recorded answers), else one of the item's other recorded answers (graded: the truth moved by
a score drawn from the worker's recorded scores).

Adversarial streams (``adversary``, ``screener.testing.doubles.adversaries``) replay the same order
with spammers first, a colluding group or gold-recognising workers; the outcome reports each
worker's accuracy on real tasks as they gave them (an adversary's, not its recorded one), and
which workers reached their ``MILESTONE``-th real task and which were banned before it.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

import numpy as np

from screener.algorithms import Verdict
from screener.gate import Gate, ReplyKind
from screener.gate.items import ItemBook
from screener.oracles.answer_file import Record, RecordedAnswers
from screener.testing.doubles._difficulty import item_easiness, right_chance
from screener.testing.doubles.adversaries import (
    ADVERSARIES,
    GROUPS,
    Adversaries,
    Adversary,
    Role,
    arrivals_spammers_first,
)
from screener.testing.doubles.outcome import StreamOutcome

__all__ = ["MILESTONE", "REPLACEMENT", "StreamSettings", "TaskStream", "run_stream"]

Overlap = Literal["recorded", "dynamic", "gate"]
#: The candidates a task request names under gate overlap: a platform's page of tasks.
PAGE = 20
#: The real task by which a worker who gives no real evidence should be banned (issue 48: of
#: the gold recognisers who reach a 50th real task, 75% banned before it).
MILESTONE = 50
#: How a filled label names its worker: the platform bought it after the stream, unscreened.
REPLACEMENT = "replacement:"


@dataclass(frozen=True)
class StreamSettings:
    """``gold_share``: share of the items used as gold; ``overlap``: labels each task item
    needs; ``session``: share of the stream's span one worker's requests spread over;
    ``seed``: every draw (items, orders, arrivals, replacements); ``lead``: the votes the top
    answer must lead by under dynamic overlap; ``adversary``: an adversarial stream (None: the
    real order); ``bar``: the accuracy under which a worker is a spammer (``spammers-first``)."""

    gold_share: float = 0.1
    overlap: Overlap = "recorded"
    session: float = 0.3
    seed: int = 0
    lead: int = 2
    adversary: Adversary | None = None
    bar: float = 0.6

    def __post_init__(self) -> None:
        if self.lead < 1:
            raise ValueError(f"lead={self.lead}: a top answer must lead by at least 1 vote")
        if self.adversary is not None and self.adversary not in ADVERSARIES:
            raise ValueError(f"adversary={self.adversary!r}: choose one of {ADVERSARIES}")


class GoldAnswer(NamedTuple):
    """A worker's answer to a gold question: the gold item, the reward, the worker's label
    (None when the platform has none to show: the gate then cannot check final labels with
    it)."""

    item: str
    reward: float
    label: str | None


@dataclass
class _Worker:
    name: str
    accuracy: float
    scores: np.ndarray
    gold: deque[tuple[str, float, str | None]]
    tasks: deque[tuple[str, str]]
    task_accuracy: float  # its accuracy on real tasks as it gives them (an adversary's own)
    role: Role = "honest"
    labels: list[str] = field(default_factory=list)  # task items it labelled (kept)
    left: bool = False
    banned: bool = False
    done: int = 0  # real tasks given, discarded ones included
    reached_at: int | None = None  # the stream's clock at its MILESTONE-th real task
    banned_at: int | None = None  # the stream's clock at its ban
    could_reach: bool = False  # at its ban: done and task items left needing it reach MILESTONE


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
                self.answer_set.setdefault(r.item, []).append(self._label(r))
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
        self.adversaries = self._arm_adversaries()
        self.book: ItemBook | None = None  # the gate's items, under gate overlap
        self.settled: set[str] = set()  # items a remote gate settled: they need no label

    def settle_with(self, book: ItemBook) -> None:
        """Gate overlap: register every task item in ``book`` (a gate's items; its cap its
        recorded number of labels); from now on the book settles them."""
        if self.settings.overlap != "gate" or self.graded:
            raise ValueError("a gate settles items under overlap='gate', categorical answers")
        for item, count in sorted(self.recorded.items()):
            book.add(item, count)
        self.book = book

    def settle(self, items: Iterable[str]) -> None:
        """A gate served over HTTP settled ``items``: they need no more labels (nor
        replacements at the end)."""
        self.settled.update(items)

    def candidates(self, worker: str, page: int = PAGE) -> list[str]:
        """The first ``page`` of the worker's recorded task items still needing a label."""
        state = self.workers[worker]
        found = []
        for item, _ in state.tasks:
            if self._needs_label(item):
                found.append(item)
                if len(found) == page:
                    break
        return found

    # ------------------------------------------------------------------ the stream
    def requests(self) -> Iterator[str]:
        """Worker ids in request order, each while it has work: a worker who left, or has no
        task item left needing a label (it leaves then), asks no more."""
        for worker in self.schedule:
            if not self.workers[worker].left and self.has_work(worker):
                yield worker

    def gold(self, worker: str) -> GoldAnswer:
        """The worker's answer to a gold question: its item, reward and label (a recogniser's
        is the item's answer; None for an answer drawn past the worker's records)."""
        state = self.workers[worker]
        self.gold_answers += 1
        recognised = state.role == "recogniser"
        if state.gold:
            item, reward, label = state.gold.popleft()
            if recognised:
                return GoldAnswer(item, 1.0, self.truth[item])
            return GoldAnswer(item, reward, label)
        item = self._gold_list[int(self.rng.integers(len(self._gold_list)))]
        if self.graded:
            return GoldAnswer(item, float(self.rng.choice(state.scores)), None)
        return GoldAnswer(item, float(self.rng.random() < state.accuracy or recognised), None)

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

    def task(self, worker: str, item: str | None = None) -> str | None:
        """Give the worker a real task: ``item`` (one of its ``candidates``, as a gate named
        it), else its next one that needs a label; the item it labels, or None (no work: it
        leaves; or the named item needs no label any more, filled meanwhile)."""
        if not self.has_work(worker):
            return None
        state = self.workers[worker]
        if item is None:
            item, answer = state.tasks.popleft()
        elif (taken := self._take(state, item)) is None:
            return None
        else:
            answer = taken
        self.kept[item].append((worker, answer))
        state.labels.append(item)
        self.task_labels += 1
        state.done += 1
        if state.done == MILESTONE:
            state.reached_at = self._clock()
        return item

    def block(self, worker: str) -> None:
        self.workers[worker].left = True

    def ban(self, worker: str) -> None:
        """Discard the worker's task labels (their items need labels again); it leaves."""
        state = self.workers[worker]
        if state.banned:
            return
        state.banned = state.left = True
        state.banned_at = self._clock()
        left = sum(self._needs_label(item) for item, _ in state.tasks)
        state.could_reach = state.done + left >= MILESTONE
        for item in set(state.labels):
            before = len(self.kept[item])
            self.kept[item] = [(w, a) for w, a in self.kept[item] if w != worker]
            self.discarded += before - len(self.kept[item])
        state.labels.clear()

    def finish(self) -> StreamOutcome:
        """Fill the items still short (``_fill``) and return what was bought."""
        available = [w for w in self.workers.values() if not w.banned]
        weights = np.array([max(len(w.labels) + len(w.tasks), 1) for w in available], float)
        slots = {w.name: slot for slot, w in enumerate(available)}
        unused: dict[str, list[tuple[str, str]]] = {}  # item -> recorded answers left
        for state in available:
            for task, answer in state.tasks:
                unused.setdefault(task, []).append((state.name, answer))
        replacements = short = 0
        for item in sorted(self.kept):
            missing = 0
            while self._needs_label(item):
                filled = self._fill(item, unused.get(item, []), available, weights, slots)
                if filled is None:
                    break  # every available worker has labelled it: it stays short
                self.kept[item].append(filled)
                missing += 1
            replacements += missing
            short += missing > 0
        final, confidence = self._settled()
        return StreamOutcome(
            labels=self.kept,
            truth={item: self.truth[item] for item in self.kept},
            graded=self.graded,
            gold_answers=self.gold_answers,
            task_labels=self.task_labels + replacements,
            replacements=replacements,
            discarded=self.discarded,
            accuracy_of={name: w.task_accuracy for name, w in self.workers.items()},
            banned=frozenset(name for name, w in self.workers.items() if w.banned),
            short_items=short,
            roles={name: w.role for name, w in self.workers.items() if w.role != "honest"},
            final=final,
            confidence=confidence,
            **self._milestones(),
        )

    def _settled(self) -> tuple[dict[str, str] | None, dict[str, float] | None]:
        """Under gate overlap, each item's final label and its confidence: the gate's last
        settlement, else (reopened, or never settled: filled after the stream) its weighing
        of the labels kept, printed as the gate prints one (checked against its gold)."""
        if self.book is None:
            return None, None
        last = {entry.item: entry for entry in self.book.since()}
        final, confidence = {}, {}
        for item, labels in self.kept.items():
            entry = last.get(item)
            if entry is not None and entry.label is not None:
                final[item], confidence[item] = entry.label, entry.confidence
                continue
            label, modelled = self._judged(labels)
            final[item], confidence[item] = (
                "" if label is None else label,
                self.book.printed(modelled),
            )
        return final, confidence

    def _judged(self, labels: list[tuple[str, str]]) -> tuple[str | None, float]:
        assert self.book is not None
        return self.book.judge((w.removeprefix(REPLACEMENT), a) for w, a in labels)

    def _milestones(self) -> dict[str, frozenset[str]]:
        """Who reached the MILESTONE-th real task (``StreamOutcome``), who was banned before."""
        reached = [
            w for w in self.workers.values()
            if w.reached_at is not None or (w.banned_at is not None and w.could_reach)
        ]  # fmt: skip
        before = [
            w for w in reached
            if w.banned_at is not None and (w.reached_at is None or w.banned_at < w.reached_at)
        ]  # fmt: skip
        return {
            "reached_milestone": frozenset(w.name for w in reached),
            "banned_before_milestone": frozenset(w.name for w in before),
        }

    def _fill(
        self,
        item: str,
        unused: list[tuple[str, str]],
        available: list[_Worker],
        weights: np.ndarray,
        slots: dict[str, int],
    ) -> tuple[str, str] | None:
        """One paid label for a short item, as the platform would buy it after the stream:
        from a worker not banned who has not labelled the item, never the same worker twice
        on one item. A recorded answer of the item left unused comes first (the item's own
        difficulty, as the data has it); else a worker drawn by its activity answers by the
        item's difficulty model (``_right_chance``; graded: a score drawn from its own)."""
        had = {worker for worker, _ in self.kept[item]}
        while unused:
            name, answer = unused.pop(0)
            if name not in had and REPLACEMENT + name not in had:
                return REPLACEMENT + name, answer
        free = np.ones(len(available), dtype=bool)  # not in ``had``, nor as a replacement
        for name in had:
            for taken in {name, name.removeprefix(REPLACEMENT)}:
                if (slot := slots.get(taken)) is not None:
                    free[slot] = False
        if not free.any():
            return None
        chances = weights * free
        who = available[int(self.rng.choice(len(available), p=chances / chances.sum()))]
        return REPLACEMENT + who.name, self._draw(who, item)

    # ------------------------------------------------------------------ helpers
    def _clock(self) -> int:
        """The stream's time: gold answers and real tasks given so far."""
        return self.gold_answers + self.task_labels

    def _arm_adversaries(self) -> Adversaries | None:
        """The adversary's group (``adversaries``) armed: its members' task answers
        rewritten, their accuracy on tasks the truth; None on the real order."""
        adversary = self.settings.adversary
        if adversary is None or adversary not in GROUPS:
            return None
        if self.graded:
            raise ValueError(f"{adversary}: colluders and gold recognisers need categories")
        rng = self.rng.spawn(1)[0]  # a child: the stream's own draws stay as they are
        armed = Adversaries(adversary, list(self.workers), self.answer_set, self.truth, rng)
        for name, role in armed.roles.items():
            state = self.workers[name]
            state.role = role
            state.tasks = deque((item, armed.label(role, item)) for item, _ in state.tasks)
            state.task_accuracy = armed.task_accuracy(role, [item for item, _ in state.tasks])
        return armed

    def _take(self, state: _Worker, item: str) -> str | None:
        """The worker's recorded answer to ``item``, taken from its tasks; None when the item
        is not among them or needs no label any more."""
        for index, (task, answer) in enumerate(state.tasks):
            if task == item and self._needs_label(item):
                del state.tasks[index]
                return answer
        return None

    def _needs_label(self, item: str) -> bool:
        labels = self.kept[item]
        cap = self.recorded[item]
        if len(labels) >= cap or item in self.settled:
            return False
        if self.book is not None:  # gate overlap: open in the gate and by its weighing
            return self.book.is_open(item) and self._judged(labels)[1] < self.book.confidence
        if self.settings.overlap == "recorded" or self.graded or len(labels) < 2:
            return True
        return _lead(labels) < self.settings.lead

    def _draw(self, worker: _Worker, item: str) -> str:
        if self.adversaries is not None and worker.role != "honest":
            return self.adversaries.label(worker.role, item)
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

    def _label(self, record: Record) -> str:
        """The label a recorded answer gives: as the worker gave it, but a categorical answer
        the dataset scores right is its item's truth. Some files score answers by their own
        column, not by equality with the gold string (Maglione_SLR: "1|1" right for gold
        "-1"; Maglione_crisis_CF_testq: one label right for a gold "A|B"); read as given, no
        right label of theirs would match the truth that scores the final labels."""
        given = _given(record)
        if not self.graded and record.reward == 1.0:
            return self.truth.get(record.item, given)
        return given

    def _worker(self, name: str, records: tuple[Record, ...], rewards: np.ndarray) -> _Worker:
        order = self.rng.permutation(len(records))
        gold: deque[tuple[str, float, str | None]] = deque()
        tasks: deque[tuple[str, str]] = deque()
        for index in order.tolist():
            record = records[index]
            if record.item in self.gold_items:
                gold.append((record.item, float(record.reward), self._label(record)))
            else:
                tasks.append((record.item, self._label(record)))
        accuracy = float(rewards.mean())
        return _Worker(name, accuracy, np.asarray(rewards), gold, tasks, task_accuracy=accuracy)

    def _schedule(self, answers: RecordedAnswers) -> list[str]:
        """Each worker's requests (twice its recorded answers: it leaves when it has no task
        left) at a seeded arrival time and pace, interleaved by time (``spammers-first``: the
        workers under the bar take the earliest first requests, each keeping its pace)."""
        span = self.settings.session
        starts: list[float] = []
        paces: list[np.ndarray] = []
        names: list[np.ndarray] = []
        for index, rewards in enumerate(answers.rewards):
            starts.append(self.rng.random() * (1.0 - span))
            paces.append(np.sort(self.rng.random(2 * rewards.size)) * span)
            names.append(np.full(2 * rewards.size, index))
        if self.settings.adversary == "spammers-first":
            bar = self.settings.bar
            sizes = np.array([r.size for r in answers.rewards])
            under = np.array([self.workers[w].accuracy < bar for w in answers.workers])
            firsts = np.array([start + pace[0] for start, pace in zip(starts, paces, strict=True)])
            moved = arrivals_spammers_first(firsts, sizes, under)
            starts = [first - pace[0] for first, pace in zip(moved.tolist(), paces, strict=True)]
        times = [start + pace for start, pace in zip(starts, paces, strict=True)]
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


def _lead(labels: list[tuple[str, str]]) -> int:
    """How many more votes the top answer has than the next (a hand loop: ``Counter`` and
    ``most_common`` cost ten times as much, and this runs on every request of the stream)."""
    counts: dict[str, int] = {}
    for _, answer in labels:
        counts[answer] = counts.get(answer, 0) + 1
    top = second = 0
    for count in counts.values():
        if count > top:
            top, second = count, top
        elif count > second:
            second = count
    return top - second


def _given(record: Record) -> str:
    """A label as the worker gave it (a graded answer too)."""
    return str(record.given if record.given is not None else record.answer)


def _is_graded(answers: RecordedAnswers) -> bool:
    """Graded answers: rewards strictly between 0 and 1 occur."""
    return any(bool(((r > 0.0) & (r < 1.0)).any()) for r in answers.rewards)


def run_stream(stream: TaskStream, gate: Gate | None) -> tuple[StreamOutcome, int]:
    """Drive ``stream`` through ``gate`` (None: no screening, every request a task), telling
    it every task label as it is given and acting on each ban at once (under gate overlap,
    the gate's items first, ``TaskStream.settle_with``). Returns what was
    bought and the most real tasks a worker did before its first gold question (the gate's
    limit, as the platform saw it)."""
    acted = 0
    before_gold: Counter[str] = Counter()
    screened: set[str] = set()
    settling = stream.settings.overlap == "gate"
    if settling:
        assert gate is not None, "gate overlap needs a gate"
        stream.settle_with(gate.items)
    for worker in stream.requests():
        pages = stream.candidates(worker) if settling else None
        reply = None if gate is None else gate.next(worker, candidates=pages)
        if reply is None or reply.kind in (ReplyKind.TASK, ReplyKind.QUALIFIED):
            item = stream.task(worker, None if reply is None else reply.item)
            if item is not None and gate is not None:
                gate.tell_label(worker, item, stream.kept[item][-1][1])
            if item is not None and worker not in screened:
                before_gold[worker] += 1
        elif reply.kind is ReplyKind.BLOCKED:
            stream.block(worker)
        else:
            assert gate is not None and reply.gold is not None
            screened.add(worker)
            given = stream.gold(worker)
            item = None if given.label is None else given.item
            gate.answer(
                reply.gold, worker=worker, reward=given.reward, answer=given.label, item=item
            )
        if gate is not None and len(gate.decisions) > acted:
            for decision in gate.decisions[acted:]:
                if decision.decision is Verdict.BANNED:
                    stream.ban(decision.worker)
            acted = len(gate.decisions)
    return stream.finish(), max(before_gold.values(), default=0)
