"""The reference service's simulated workers: what each answers to each question, and when.

Workers answer from a ``WorkerPool`` with accuracies and a ``GoldBank``: worker w answers
question q with its key with probability = w's accuracy, else wrongly; the draw is keyed by
(seed, w, q), so a question asked again (a retry, a resumed run) gets the same answer. Answers
arrive after a ``Latency`` delay keyed the same way.
"""

from __future__ import annotations

import numpy as np

from screener.bank import GoldBank, GoldQuestion, Scoring, parse_number
from screener.crowd import WorkerPool
from screener.oracles.latency import Latency
from screener.simulation.hashing import worker_rng

__all__ = ["SimulatedWorkers"]

_ANSWER_STREAM = 21


class SimulatedWorkers:
    """The pool's workers answering the bank's questions, each answer a pure function of
    (seed, worker, question)."""

    def __init__(self, pool: WorkerPool, bank: GoldBank, latency: Latency, seed: int) -> None:
        self.accuracies = dict(zip(pool.workers, pool.require_accuracies(), strict=True))
        self.latency = latency
        self.seed = seed
        self._arms = {worker: arm for arm, worker in enumerate(pool.workers)}
        self._positions = {q.id: index for index, q in enumerate(bank.questions)}
        self._keys = tuple(dict.fromkeys(q.key for q in bank.questions))

    def answer_for(self, worker: str, question: GoldQuestion) -> str | float:
        """What ``worker`` answers to ``question`` (a pure function of seed, worker, question)."""
        rng = worker_rng(self.seed, _ANSWER_STREAM, f"{worker}\x1f{question.id}")
        if rng.random() < self.accuracies[worker]:
            return _as_number(question.key) if _numeric(question) else question.key
        return self._wrong_answer(question, rng)

    def delay_for(self, worker: str, question: GoldQuestion) -> float:
        arm, position = self._arms[worker], self._positions[question.id]
        return float(self.latency.delays(self.seed, [arm], [position])[0])

    def _wrong_answer(self, question: GoldQuestion, rng: np.random.Generator) -> str | float:
        """A wrong answer of the kind the question expects (scored 0, or low when graded)."""
        key = parse_number(question.key)
        if question.scoring is Scoring.NUMERIC and key is not None:
            return _tidy(key + 10.0 * question.tolerance + 1.0)
        if question.scoring is Scoring.GRADED and key is not None:
            sign_ = 1.0 if rng.random() < 0.5 else -1.0
            return _tidy(key + sign_ * question.tolerance * (0.5 + rng.random()))
        others = [k for k in self._keys if question.score(k) == 0.0]
        if others:
            return others[int(rng.integers(len(others)))]
        return "wrong" if question.score("wrong") == 0.0 else "not " + question.key


def _numeric(question: GoldQuestion) -> bool:
    return question.scoring in (Scoring.NUMERIC, Scoring.GRADED)


def _as_number(text: str) -> float:
    value = parse_number(text)
    assert value is not None  # the bank checks numeric keys
    return _tidy(value)


def _tidy(value: float) -> float:
    """Whole numbers as ints, so JSON says 42 rather than 42.0."""
    return int(value) if float(value).is_integer() else value
