"""A gold question bank to serve without any file: sums of two numbers."""

from __future__ import annotations

from screener.bank import GoldBank, GoldQuestion, Scoring
from screener.errors import ConfigError
from screener.simulation.hashing import worker_rng

__all__ = ["arithmetic_bank"]

_BANK_STREAM = 22


def arithmetic_bank(n_questions: int = 200, *, seed: int = 0) -> GoldBank:
    """``n_questions`` questions "What is a + b?" (a, b in 1..99) with numeric keys, seeded."""
    if n_questions < 1:
        raise ConfigError(f"a bank needs at least 1 question, got {n_questions}")
    rng = worker_rng(seed, _BANK_STREAM, "arithmetic")
    pairs = rng.integers(1, 100, size=(n_questions, 2))
    width = len(str(n_questions))
    questions = tuple(
        GoldQuestion(f"q{i + 1:0{width}d}", f"What is {a} + {b}?", str(a + b), Scoring.NUMERIC)
        for i, (a, b) in enumerate(pairs.tolist())
    )
    return GoldBank(questions, f"arithmetic({n_questions}, seed={seed})")
