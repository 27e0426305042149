"""The gate: screening inside the task stream, one arriving worker at a time.

A platform asks, each time a worker comes for work, "gold question or real task for this
one?" (``Gate.next``) and hands back the gold answers (``Gate.answer``). The gate answers
``gold`` (with the question to ask), ``task`` (a real task: the worker is still being
screened), ``qualified`` (a real task: the worker is accepted) or ``blocked`` (the worker is
banned: no more work). Decisions are streamed out as they are made (``Gate.decisions``).

Rules, in the order a request meets them:

1. A banned worker is blocked. A worker who owes the answer to a gold question gets the same
   question again (one gold question in flight per worker: the platform shows it again).
2. A worker the algorithm has decided (accepted), or will ask no more without a decision
   (undecided: at its bound, or out of gold questions), gets real tasks, and a gold question
   at ``audit_rate`` of its requests (a seeded draw per request); the change detector
   (``screener.stats.ChangeDetector``) watches those answers and, when the worker's accuracy
   has fallen below the bar, bans it or screens it again (``on_change``).
3. Any worker who has done ``max_unscreened`` real tasks without a gold question gets one
   now, whatever the policy says: no one works unscreened for long.
4. A worker being screened gets a gold question when the policy wants one (``GoldPolicy``:
   ``ValueOfGold``, ``FirstGold``, ``GoldShare``) and the gold share and budget have room;
   the question is a pull of the algorithm (``Gate.method``, ``Algorithm.ask_for``), whose
   answer goes to it, which decides. Otherwise a real task.
5. With ``ValueOfGold(tenure=True)`` or ``bans`` (heuristics) the gate also bans on
   its own: after each answer the algorithm used, a worker is judged against the prior of the
   workers who made as many requests (``screener.gate.tenure``), where crowd-prior's single
   prior over workers cannot see the prolific spammers that make most of the bad labels.

The gate is a pure decision object, as the algorithms are: no I/O, no clock, no awaits. The
same calls in the same order give the same replies and decisions, so a service journals the
calls and a restarted one replays them (``request_id`` makes a repeated request return its
first reply, so a retried request is served once). Gold ids are keyed
(``screener.gate.ids``): an answer names its worker, and only that worker's answer to its own
question is taken.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from screener.algorithms import (
    CrowdPrior,
    Result,
    ThresholdingAlgorithm,
    Verdict,
    create_algorithm,
)
from screener.arrays import grown
from screener.bank import GoldBank
from screener.errors import ConfigError, UnknownPullError, UnknownWorkerError
from screener.gate.agreement import AgreementJudge, reference_floor
from screener.gate.golds import GoldRecords
from screener.gate.items import NO_ITEM, FinalLabel, ItemBook, check_new_item
from screener.gate.judge import value_judge
from screener.gate.labels import LabelOutcome, TaskLabels, check_item, label_text, one_copy
from screener.gate.policies import FirstGold, GoldShare
from screener.gate.replies import (
    AnswerOutcome,
    Decided,
    Reply,
    ReplyKind,
    RequestMemory,
    check_worker,
)
from screener.gate.roster import (
    Gold,
    Status,
    WorkerState,
    check_gold_item,
    pack_roster,
    reward_of,
    unpack_roster,
)
from screener.gate.settings import GateSettings
from screener.stats.change import ChangeDetector
from screener.stats.prior import GridPrior

__all__ = ["Gate"]


class Gate:
    """Gold or task for each arriving worker (see the module docstring).

    Examples
    --------
    >>> from screener.gate import FirstGold, Gate, GateSettings
    >>> gate = Gate(GateSettings(policy=FirstGold(), max_unscreened=0))
    >>> reply = gate.next("ann")
    >>> reply.kind.value, reply.gold == gate.next("ann").gold  # the same one until answered
    ('gold', True)
    >>> gate.answer(reply.gold, worker="ann", reward=1.0).value
    'accepted'
    >>> gate.next("ann").kind.value  # ann is still being screened
    'gold'
    """

    def __init__(self, settings: GateSettings | None = None, bank: GoldBank | None = None):
        self.settings = settings or GateSettings()
        params = {**self.settings.params, "seed": self.settings.seed}
        method = create_algorithm(self.settings.algorithm, 0, params)
        assert isinstance(method, ThresholdingAlgorithm)  # an open roster (settings checked)
        self.method: ThresholdingAlgorithm = method
        self.bank = bank
        self.detector = ChangeDetector(self._bar(), alpha=self.settings.alpha)
        self.judge = value_judge(self.settings, method)
        self.workers: dict[str, WorkerState] = {}
        self.golds = GoldRecords(self.settings.gold_key, sealed=self.settings.gold_ids == "sealed")
        self.decisions: list[Decided] = []
        self.labels = TaskLabels()
        self.agreement = self._agreement_judge()
        self.items = ItemBook(
            self.labels, self._accuracy, confidence=self.settings.confidence,
            task_price=self.settings.prices.task, binary=self.settings.binary_labels,
        )  # fmt: skip
        self._accuracies: dict[str, tuple[int, float, object, float]] = {}
        self.requests = 0
        self.tasks = 0
        self.gold_asked = 0
        self._arm_worker: list[str] = []
        self._shown = np.zeros(0, dtype=np.int8)  # the verdict last streamed, per arm
        self._replies: RequestMemory[Reply] = RequestMemory()

    def __getstate__(self) -> dict[str, Any]:
        """What pickling keeps (a snapshot): every attribute, the workers, gold records (those
        kept, and those owed) and decisions as columns (``pack_roster``: a live gate pauses
        while it is pickled)."""
        packed = ("workers", "decisions", "_accuracies")
        state = {k: v for k, v in self.__dict__.items() if k not in packed}
        owed = {w.owed.id: w.owed for w in self.workers.values() if w.owed is not None}
        records = list({**owed, **self.golds.kept}.values())
        return {**state, "roster": pack_roster(self.workers, records, self.decisions)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        self.workers, records, self.decisions = unpack_roster(state.pop("roster"))
        self.__dict__.update(state)
        self.golds.restore(records)
        self._accuracies = {}
        self.items.accuracy = self._accuracy  # not pickled: a bound method

    # ------------------------------------------------------------------ the platform's calls
    def next(
        self,
        worker: str,
        request_id: str | None = None,
        candidates: Sequence[str] | None = None,
    ) -> Reply:
        """Gold or task for ``worker``, who asks for work (joining if new, back if it left).
        A ``request_id`` seen before returns that request's reply, changing nothing. With
        registered items (``add_items``) a task reply names the item to label, among
        ``candidates`` when the platform names the items it can show this worker
        (``screener.gate.items``)."""
        if self.repeats(request_id):
            assert request_id is not None
            return self._replies.repeated(request_id, worker)
        check_worker(worker)
        if candidates is not None:
            for item in candidates:
                check_item(item)
        self.requests += 1
        state = self.workers.get(worker) or self._join(worker)
        if state.left:
            self._come_back(state)
        state.requests += 1
        if self.judge is not None:
            self.judge.grew(state)
        reply = self._reply(state)
        if reply.kind in (ReplyKind.TASK, ReplyKind.QUALIFIED) and self._owns_items(candidates):
            reply = self._with_item(reply, candidates)
        if reply.kind in (ReplyKind.TASK, ReplyKind.QUALIFIED) and reply.reason != NO_ITEM:
            state.tasks += 1
            state.since_gold += 1
            self.tasks += 1
        if request_id is not None:
            self._replies.remember(request_id, worker, reply)
        return reply

    def repeats(self, request_id: str | None) -> bool:
        """Whether ``next`` served a request with this id (then it returns that reply and
        changes nothing)."""
        return request_id is not None and request_id in self._replies

    def gold(self, ident: str) -> Gold | None:
        """The record of gold question ``ident``, None if this gate never handed it out
        (``screener.gate.golds``: an answered question's is made again from its worker)."""
        return self.golds.find(ident, self._owner, self._question)

    def answer(
        self,
        gold: str,
        *,
        worker: str,
        reward: float | None = None,
        answer: object = None,
        item: str | None = None,
    ) -> AnswerOutcome:
        """``worker``'s answer to gold question ``gold``: its ``reward`` (1 right, 0 wrong, or
        a grade), or the raw ``answer`` scored against the bank's key. Only the worker the
        question was given to may answer it. With both, the reward counts and the raw answer
        is the worker's label of gold ``item`` (the bank's question, or the platform's item
        when it chose the question): the gate checks its final labels' confidence against
        such answers (``screener.gate.calibration``)."""
        value, record = self._checked(gold, worker, reward, answer, item)
        if record.answered:
            return AnswerOutcome.DUPLICATE
        if record.released:
            return AnswerOutcome.LATE
        record.answered = True
        state = self.workers[record.worker]
        self._check_final_labels(state, record, item, answer, value)
        state.owed = None
        state.answered += 1
        state.gold_sum += (value - self.method.lower) / (self.method.upper - self.method.lower)
        if self.agreement is not None and not state.banned:
            floor = reference_floor(state.gold_sum, state.answered)
            self._agreement_bans(self.agreement.gold_changed(state.worker, floor))
        if record.pull is not None:
            self.method.tell(record.pull, value)
            self._check_decisions()
            self._value_ban(state)
        if record.audit and not state.banned:
            self._audit_answer(state, value)
        return AnswerOutcome.ACCEPTED

    def check_answer(
        self,
        gold: str,
        *,
        worker: str,
        reward: float | None = None,
        answer: object = None,
        item: str | None = None,
    ) -> float:
        """The reward ``answer`` would take for this answer, or the error it would raise;
        changes nothing (so a batch of answers can be checked whole before any is used)."""
        return self._checked(gold, worker, reward, answer, item)[0]

    def _checked(
        self, gold: str, worker: str, reward: float | None, answer: object, item: str | None
    ) -> tuple[float, Gold]:
        """``check_answer``'s reward, and the question's record."""
        check_worker(worker)
        record = self.gold(gold)
        if record is None:
            raise UnknownPullError(
                f"no gold question {gold!r} was handed out by this gate",
                "answer with the gold id of a reply",
            )
        if record.worker != worker:  # an id passed on to, or guessed by, another worker
            raise UnknownPullError(
                f"gold question {gold!r} was not given to worker {worker!r}",
                "send the answer with the worker whose reply carried that gold id",
            )
        value = reward_of(record, reward, answer, self.bank, self.method)
        check_gold_item(record, item, answer)
        return value, record

    def tell_label(
        self, worker: str, item: str, label: object, request_id: str | None = None
    ) -> LabelOutcome:
        """``worker``'s label of real task ``item`` (``screener.gate.labels``): kept as
        evidence, or a ``duplicate`` (a second label of the item, a repeated request)."""
        text = self.check_label(worker, item, label)
        outcome = self.labels.add(worker, item, text, request_id)
        if outcome is LabelOutcome.ACCEPTED:
            self.workers[worker].labels += 1
            if self.agreement is not None:
                self._agreement_bans(self.agreement.labelled(worker, item))
            self.items.labelled(worker, item)
        return outcome

    def add_items(
        self, items: Iterable[tuple[str, int | None, float]]
    ) -> list[tuple[str, int | None, float]]:
        """Register task items, each ``(item, cap, priority)`` (cap None: no cap; higher
        priority first): from now on task replies name the item to label. Every item is
        checked before any is registered; an item registered already (or earlier in the
        batch) is left as it is. The items newly registered, in order."""
        batch = list(items)
        for item, cap, priority in batch:
            check_new_item(item, cap, priority)
        return [entry for entry in batch if self.items.add(*entry)]

    def final_labels(self, cursor: int = -1) -> list[FinalLabel]:
        """The final-label entries after position ``cursor`` (-1: all), in order
        (``screener.gate.items``: a consumer keeps the last entry per item)."""
        return self.items.since(cursor)

    def check_label(self, worker: str, item: str, label: object) -> str:
        """The label as the gate keeps it, or the error ``tell_label`` would raise; changes
        nothing (a batch is checked whole before any label is used)."""
        check_worker(worker)
        if worker not in self.workers:
            raise UnknownWorkerError(
                f"worker {worker!r} never asked this gate for work",
                "report a worker's labels after the requests that gave it the tasks",
            )
        check_item(item)
        return label_text(label)

    def leave(self, worker: str, reason: str = "left") -> None:
        """``worker`` left: the gold question it owes is released, and it is asked nothing
        more until it comes back (its next request)."""
        state = self.workers.get(worker)
        if state is None or state.left:
            return
        state.left = True
        self.items.withdraw(worker)
        if self.agreement is not None:
            self.agreement.left(worker)
        if state.owed is not None:
            self.golds.release(state.owed)
            if state.owed.pull is not None:
                self.method.release(state.owed.pull)
            state.owed = None
        self.method.set_unavailable(state.arm, reason)

    @property
    def shares_prior(self) -> bool:
        """Whether this gate's decisions depend on other workers' answers (crowd-prior's fit),
        so that evidence from outside it changes them (``tell_outside``)."""
        return isinstance(self.method, CrowdPrior)

    def tell_outside(self, successes: object, counts: object) -> None:
        """The (successes on [0, 1], answers) of workers outside this gate (the other shards
        of a pool), replacing those told before, for the crowd prior's fit; the decisions it
        allows are made now. ConfigError when the gate has no crowd prior (``shares_prior``)."""
        if not isinstance(self.method, CrowdPrior):
            raise ConfigError(f"{self.settings.algorithm} has no crowd prior to share")
        self.method.tell_outside(successes, counts)
        self._check_decisions()

    def since(self, cursor: int = -1) -> list[Decided]:
        """The decisions after position ``cursor`` (-1: all), in the order they were made."""
        return self.decisions[max(cursor + 1, 0) :]

    def result(self) -> Result:
        """The algorithm's result, its workers named (a reopened worker's earlier arm is named
        with its screening number)."""
        names = []
        seen: dict[str, int] = {}
        for worker in self._arm_worker:
            seen[worker] = seen.get(worker, 0) + 1
            names.append(worker if seen[worker] == 1 else f"{worker}#{seen[worker]}")
        return self.method.result().named(tuple(names))

    def summary(self) -> dict[str, Any]:
        """Counts and money so far: requests, gold questions and tasks handed out, what they
        cost, the workers per status, the items, and the gold check of final labels (its
        settlements, the wrong ones, the share of misleading items taken from them)."""
        prices = self.settings.prices
        statuses = {status.value: 0 for status in Status}
        for state in self.workers.values():
            statuses[state.status.value] += 1
        gold_money, task_money = self.gold_asked * prices.gold, self.tasks * prices.task
        check = self.items.check
        return {
            "requests": self.requests,
            "gold": self.gold_asked,
            "tasks": self.tasks,
            "labels": self.labels.count,
            "money": {"gold": gold_money, "tasks": task_money, "total": gold_money + task_money},
            "workers": statuses,
            "decisions": len(self.decisions),
            "items": {"registered": len(self.items.items), "done": self.items.done_count},
            "gold_check": {
                "checks": check.checks,
                "wrong": check.wrong,
                "misleading": check.misleading,
                "unsettled_checks": check.unsettled.checks,
                "unsettled_wrong": check.unsettled.wrong,
                "misleading_unsettled": check.misleading_unsettled,
            },
        }

    # ------------------------------------------------------------------ replies
    def _reply(self, state: WorkerState) -> Reply:
        if state.banned:
            return Reply(ReplyKind.BLOCKED, state.worker, reason="banned")
        if state.owed is not None:
            return self._gold_reply(state.owed, "answer owed")
        due = state.tasks >= self.settings.max_unscreened and not state.screened
        screening = state.status is Status.SCREENING
        if screening and (due or (self._policy_wants(state) and self._gold_room())):
            reply = self._screening_gold(state)
            if reply is not None:
                return reply
        if state.banned:  # the ask settled a decision (e-BH lists)
            return Reply(ReplyKind.BLOCKED, state.worker, reason="banned")
        if due or (state.status is not Status.SCREENING and self._audit_due(state)):
            audit = self._audit_gold(state, "first gold question" if due else "audit")
            if audit is not None:
                return audit
        if self._panel_wants(state):
            panel = self._audit_gold(state, "reference panel")
            if panel is not None:
                return panel
        if state.status is Status.QUALIFIED:
            return Reply(ReplyKind.QUALIFIED, state.worker, reason="qualified")
        return Reply(ReplyKind.TASK, state.worker, reason=state.status.value)

    def _owns_items(self, candidates: Sequence[str] | None) -> bool:
        return candidates is not None or bool(self.items.items)

    def _with_item(self, reply: Reply, candidates: Sequence[str] | None) -> Reply:
        """The task reply naming the item to label, or saying there is none for this worker
        (then no task is counted: the platform has nothing of the requester's to give)."""
        item = self.items.choose(reply.worker, candidates)
        if item is None:
            return Reply(reply.kind, reply.worker, reason=NO_ITEM)
        return Reply(reply.kind, reply.worker, reason=reply.reason, item=item)

    def _check_final_labels(
        self, state: WorkerState, record: Gold, item: str | None, answer: object, value: float
    ) -> None:
        """A right or wrong answer naming its gold item (the bank's question, else ``item``)
        and label, from a worker not banned, checks the final labels' confidence, weighed as
        the worker stood before it (a right answer to a bank question is its key: the bank's
        scoring may forgive case or space)."""
        right = value >= self.method.upper
        graded = not right and value > self.method.lower
        gold_item = record.question or item
        if gold_item is None or answer is None or state.banned or graded:
            return
        weight = self._accuracy(state.worker)
        assert weight is not None  # not banned
        if right and record.question is not None and self.bank is not None:
            label = self.bank.get(record.question).key
        else:
            label = label_text(answer)
        self.items.gold_answered(gold_item, state.worker, label, weight, right)

    def _accuracy(self, worker: str) -> float | None:
        """The weight of a worker's label (``screener.gate.items``): the posterior mean of
        its accuracy from its gold answers, None when banned; the crowd's mean for a worker
        the gate has not seen (a platform's own labels)."""
        state = self.workers.get(worker)
        if state is not None and state.banned:
            return None
        answered, total = (state.answered, state.gold_sum) if state is not None else (0, 0.0)
        prior = getattr(self.method, "prior", None)
        cached = self._accuracies.get(worker)
        if cached is not None and cached[:2] == (answered, total) and cached[2] is prior:
            return cached[3]
        if isinstance(prior, GridPrior):
            post = prior.posterior([total], [answered])[0]
            mean = float(post @ prior.grid)
        else:
            mean = (total + 1.0) / (answered + 2.0)  # a uniform prior
        if state is not None:
            self._accuracies[worker] = (answered, total, prior, mean)
        return mean

    def _panel_wants(self, state: WorkerState) -> bool:
        """Gold to make a reference for agreement (``AgreementJudge.wants_panel_gold``)."""
        judge = self.agreement
        return (
            judge is not None
            and judge.wants_panel_gold(state.worker, state.gold_sum, state.answered)
            and self._gold_room()
        )

    def _policy_wants(self, state: WorkerState) -> bool:
        match self.settings.policy:
            case FirstGold():
                return True
            case GoldShare(every=every):
                return state.since_gold + 1 >= every
        assert self.judge is not None  # the value policy's (value_judge)
        return self.judge.wants(state)

    def _gold_room(self) -> bool:
        """Whether the gold share and budget allow a question the policy chose."""
        settings = self.settings
        if settings.gold_budget is not None and self.gold_asked >= settings.gold_budget:
            return False
        share = settings.gold_share
        return share is None or self.gold_asked + 1 <= share * self.requests

    def _screening_gold(self, state: WorkerState) -> Reply | None:
        """A pull of the algorithm for this worker, or None (then the worker's status says
        why: decided, or one the algorithm will ask no more)."""
        ask = self.method.ask_for(state.arm)
        self._check_decisions()
        if len(ask) == 0:
            if state.status is Status.SCREENING:
                state.status = Status.UNDECIDED  # at its bound, or the algorithm has stopped
            return None
        question = self._question(state)
        if question is None and self.bank is not None:
            self.method.release(int(ask.first_id))
            self.method.set_unavailable(state.arm, "out of gold questions")
            state.status = Status.UNDECIDED
            return None
        return self._new_gold(state, int(ask.first_id), question, "screening")

    def _audit_gold(self, state: WorkerState, why: str) -> Reply | None:
        """A gold question to a decided worker (or one the algorithm asks no more): the change
        detector watches its answer, and so does the algorithm where it reconsiders."""
        question = self._question(state)
        if question is None and self.bank is not None:
            return None
        ask = self.method.ask_for(state.arm, audit=True)
        pull = int(ask.first_id) if len(ask) else None
        return self._new_gold(state, pull, question, why, audit=True)

    def _audit_due(self, state: WorkerState) -> bool:
        """Audit at ``audit_rate`` (a seeded draw), and under the value policy whenever the
        algorithm would still use the answer and it is worth its price."""
        if self._audit_draw(state):
            return True
        if self.judge is None or not self.judge.method.reconsider:
            return False
        return state.status is not Status.SCREENING and self.judge.wants(state)

    def _value_ban(self, state: WorkerState) -> None:
        """The gate's own ban (``ValueJudge.ban``), after an answer the algorithm used."""
        found = None if self.judge is None or state.banned else self.judge.ban(state)
        if found is None:
            return
        p_bad, why = found
        state.ban_posterior = p_bad
        self._ban_by_gate(state, why)

    def _agreement_bans(self, workers: list[str]) -> None:
        """Ban the workers whose agreement test rejects (``screener.gate.agreement``)."""
        assert self.agreement is not None
        for worker in workers:
            state = self.workers[worker]
            if not state.banned:
                self._ban_by_gate(state, self.agreement.ban_reason(worker))

    def _ban_by_gate(self, state: WorkerState, why: str) -> None:
        """A ban the gate makes itself, beside its algorithm's."""
        self.method.set_unavailable(state.arm, "banned by the gate")
        state.status = Status.BANNED
        self._decide(state, Verdict.BANNED, why)

    def _new_gold(
        self,
        state: WorkerState,
        pull: int | None,
        question: str | None,
        why: str,
        *,
        audit: bool = False,
    ) -> Reply:
        record = self.golds.issue(state, pull, question, audit)
        state.owed = record
        state.golds += 1
        state.since_gold = 0
        self.gold_asked += 1
        return self._gold_reply(record, why)

    def _gold_reply(self, record: Gold, why: str) -> Reply:
        return Reply(ReplyKind.GOLD, record.worker, record.id, record.question, why)

    def _question(self, state: WorkerState, number: int | None = None) -> str | None:
        """The bank's question for this worker's ``number``-th gold question (default: its
        next, never one it has had), if a bank."""
        if self.bank is None:
            return None
        at = state.golds if number is None else number
        found = self.bank.question_for(state.worker, at, self.settings.seed)
        return None if found is None else found.id

    def _owner(self, arm: int) -> WorkerState | None:
        """The worker on ``arm`` (a reopened worker's earlier arms too), if any."""
        worker = self._arm_worker[arm] if arm < len(self._arm_worker) else None
        return None if worker is None else self.workers.get(worker)

    def _audit_draw(self, state: WorkerState) -> bool:
        """A seeded draw per (worker, request): the same at every replay."""
        rate = self.settings.audit_rate
        if rate <= 0.0:
            return False
        key = f"{self.settings.seed}:{state.worker}:{state.requests}".encode()
        digest = hashlib.blake2b(key, digest_size=8).digest()
        return int.from_bytes(digest, "little") / 2.0**64 < rate

    # ------------------------------------------------------------------ workers and decisions
    def _join(self, worker: str) -> WorkerState:
        arm = int(self.method.add_workers(1)[0])
        state = WorkerState(worker, arm, self.detector.add())
        self.workers[worker] = state
        self._arm_worker.append(worker)
        self._shown = grown(self._shown, 1, 0)
        if self.judge is not None:
            self.judge.add_arm(0)
        self._check_decisions()  # crowd-prior may decide a newcomer on the prior alone
        return state

    def _come_back(self, state: WorkerState) -> None:
        state.left = False
        self.method.set_available(state.arm)

    def _check_decisions(self) -> None:
        """Stream the algorithm's new decisions out: a first decision, or a ban of a worker it
        had accepted (an algorithm that reconsiders on audits). A ban is final; a decision the
        algorithm takes back otherwise (a provisional one) stays as streamed. Only the workers the
        algorithm says moved are read, where it can say (``verdict_changes``): then a request
        costs the same at any number of workers."""
        arms = self.method.verdict_changes()
        verdicts = self.method.verdicts() if arms is None else self.method.verdicts_of(arms)
        shown = self._shown if arms is None else self._shown[arms]
        changed = (verdicts != 0) & (verdicts != shown) & ((shown == 0) | (verdicts < 0))
        rows = np.flatnonzero(changed)
        moved = rows if arms is None else arms[rows]
        for arm, verdict in zip(moved.tolist(), verdicts[rows].tolist(), strict=True):
            self._shown[arm] = verdict
            state = self.workers[self._arm_worker[arm]]
            if state.arm != arm or state.banned:
                continue  # an arm a reopened screening left behind
            banned = verdict < 0
            state.status = Status.BANNED if banned else Status.QUALIFIED
            self._decide(state, Verdict.of_sign(-1 if banned else 1), self.method.explain(arm))

    def _audit_answer(self, state: WorkerState, reward: float) -> None:
        scaled = (reward - self.method.lower) / (self.method.upper - self.method.lower)
        if not self.detector.update(state.row, scaled):
            return
        why = (
            f"change detected: its audit answers fell below the bar (e-detector at false-alarm "
            f"level {self.settings.alpha:g} per answer)"
        )
        if self.settings.on_change == "ban":
            state.status = Status.BANNED
            self._decide(state, Verdict.BANNED, why)
            return
        self.method.set_unavailable(state.arm, "screening reopened")
        state.arm = int(self.method.add_workers(1)[0])
        self._arm_worker.append(state.worker)
        self._shown = grown(self._shown, 1, 0)
        if self.judge is not None:
            self.judge.add_arm(state.requests)
        self.detector.restart(state.row)
        state.status = Status.SCREENING
        self._decide(state, Verdict.REOPENED, why)

    def _decide(self, state: WorkerState, decision: Verdict, reason: str) -> None:
        banned = decision is Verdict.BANNED
        if banned and self.agreement is not None:
            self.agreement.retire(state.worker)
        if banned:
            self.items.withdraw(state.worker)
        if banned or decision is Verdict.REOPENED:
            self.items.reweigh_worker(state.worker)
        if state.owed is not None and banned:
            self.golds.release(state.owed)  # a banned worker's question is no longer wanted
            if state.owed.pull is not None:
                self.method.release(state.owed.pull)
            state.owed = None
        # Reasons repeat (an algorithm's few rounded phrasings): one copy of each is kept.
        seq = len(self.decisions)
        self.decisions.append(Decided(seq, state.worker, decision, one_copy(reason), self.requests))

    # ------------------------------------------------------------------ small helpers
    def _agreement_judge(self) -> AgreementJudge | None:
        settings = self.settings
        if settings.agreement is None:
            return None
        return AgreementJudge(
            self.labels, self._bar(), settings.agreement,
            binary=settings.binary_labels, panel=settings.panel,
        )  # fmt: skip

    def _bar(self) -> float:
        method = self.method
        return (method.threshold - method.lower) / (method.upper - method.lower)
