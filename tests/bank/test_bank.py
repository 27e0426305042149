"""The gold question bank: scoring rules, per-worker question orders, files, and errors."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from screener.bank import GoldBank, GoldQuestion, Scoring, load_bank, score_answer
from screener.bank import questions as questions_module
from screener.crowd import WorkerPool
from screener.errors import PoolError


def _bank(n: int = 5) -> GoldBank:
    return GoldBank(tuple(GoldQuestion(f"q{i}", f"payload {i}", str(i)) for i in range(n)))


@pytest.mark.parametrize(
    ("scoring", "key", "tolerance", "answer", "expected"),
    [
        (Scoring.EXACT, "Paris", 0.0, " Paris ", 1.0),
        (Scoring.EXACT, "Paris", 0.0, "paris", 0.0),
        (Scoring.CASE_INSENSITIVE, "New York", 0.0, "new   YORK", 1.0),
        (Scoring.CASE_INSENSITIVE, "New York", 0.0, "Newark", 0.0),
        (Scoring.NUMERIC, "3.5", 0.1, "3.45", 1.0),
        (Scoring.NUMERIC, "3.5", 0.1, 3.7, 0.0),
        (Scoring.NUMERIC, "3.5", 0.1, "three", 0.0),
        (Scoring.NUMERIC, "3.5", 0.0, float("nan"), 0.0),
        (Scoring.GRADED, "0.6", 1.0, "0.5", 0.9),
        (Scoring.GRADED, "0.6", 0.5, 0.35, 0.5),
        (Scoring.GRADED, "0.6", 0.1, 0.0, 0.0),
        (Scoring.GRADED, "0.6", 1.0, "n/a", 0.0),
    ],
)
def test_scoring_rules(
    scoring: Scoring, key: str, tolerance: float, answer: object, expected: float
) -> None:
    assert score_answer(scoring, key, tolerance, answer) == pytest.approx(expected)


def test_graded_scores_match_the_shared_datasets_definition() -> None:
    """graded/*.csv in the shared data: score = 1 - |answer - gold| clipped to [0, 1]."""
    for answer, gold in [(0.5, 0.6), (0.0, 1.0), (0.9, 0.2), (0.3, 0.3)]:
        expected = min(1.0, max(0.0, 1.0 - abs(answer - gold)))
        assert score_answer(Scoring.GRADED, str(gold), 1.0, answer) == pytest.approx(expected)


def test_a_worker_never_gets_a_question_twice_and_then_is_exhausted() -> None:
    bank = _bank(7)
    for worker in ("alice", "bob"):
        seen = [bank.question_for(worker, seq, seed=3) for seq in range(7)]
        assert sorted(q.id for q in seen if q is not None) == sorted(f"q{i}" for i in range(7))
        assert bank.question_for(worker, 7, seed=3) is None


def test_question_orders_depend_on_seed_and_worker_only() -> None:
    bank = _bank(30)

    def order(worker: str, seed: int) -> list[str]:
        return [q.id for seq in range(30) if (q := bank.question_for(worker, seq, seed))]

    assert order("alice", 1) == order("alice", 1) == order("alice", 1)
    assert order("alice", 1) != order("bob", 1)
    assert order("alice", 1) != order("alice", 2)
    fresh = _bank(30)  # another process: the same order
    again = [q.id for s in range(30) if (q := fresh.question_for("alice", s, 1))]
    assert again == order("alice", 1)


def test_a_bank_keeps_the_orders_of_recent_workers_only_and_draws_them_again_alike(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A pool of 100,000 workers asked from a bank of 1,000 questions kept 800 MB of orders
    (and pickled them into every snapshot of the gate): now at most ``ORDERS_KEPT``
    question numbers, the same questions in the same order."""
    monkeypatch.setattr(questions_module, "ORDERS_KEPT", 200)  # 10 workers of 20 questions
    bank, reference = _bank(20), _bank(20)
    workers = [f"w{i}" for i in range(35)]
    expected = {w: [reference.question_for(w, s, 3) for s in range(20)] for w in workers[:1]}
    for seq in range(20):
        for worker in workers:  # each order drawn, forgotten, and drawn again
            found = bank.question_for(worker, seq, 3)
            if worker in expected:
                assert found == expected[worker][seq]
            assert len(bank._orders) <= 10
    assert [bank.question_for(w, 5, 3) for w in workers] == [
        _bank(20).question_for(w, 5, 3) for w in workers
    ]
    copied = pickle.loads(pickle.dumps(bank))
    assert copied == bank and not copied._orders and len(pickle.dumps(bank)) < 4_000


def test_csv_and_json_banks(tmp_path: Path) -> None:
    csv_file = tmp_path / "bank.csv"
    csv_file.write_text(
        "id,payload,answer,scoring,tolerance\n"
        "a,Capital of France?,Paris,case-insensitive,\n"
        "b,2+2?,4,numeric,0.5\n"
        "c,Rate it,0.7,graded,\n",
        encoding="utf-8",
    )
    bank = load_bank(csv_file)
    assert [q.scoring for q in bank.questions] == [
        Scoring.CASE_INSENSITIVE,
        Scoring.NUMERIC,
        Scoring.GRADED,
    ]
    assert bank.get("c").tolerance == 1.0  # graded default scale
    assert bank.get("b").score("4.4") == 1.0
    json_file = tmp_path / "bank.json"
    json_file.write_text(json.dumps({"questions": [q.to_dict() for q in bank.questions]}))
    assert load_bank(json_file).questions == bank.questions
    assert GoldBank.from_dict(bank.to_dict()).questions == bank.questions


def test_a_pool_keeps_its_bank_through_the_journal_format() -> None:
    pool = WorkerPool(("a", "b"), (0.9, 0.5), "test", _bank(3))
    again = WorkerPool.from_dict(json.loads(json.dumps(pool.to_dict())))
    assert again.bank is not None and again.bank.questions == _bank(3).questions
    assert again.question_for(1, 0, 5) == pool.question_for(1, 0, 5)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("payload,key\nx,1\n", "needs columns 'id' and 'key'"),
        ("id,key\n,1\n", "needs an 'id' and a 'key'"),
        ("id,key,scoring\na,1,fuzzy\n", "unknown scoring 'fuzzy'"),
        ("id,key,scoring\na,one,numeric\n", "needs a numeric key"),
        ("id,key,scoring,tolerance\na,1,graded,0\n", "positive tolerance"),
        ("id,key,tolerance\na,1,wide\n", "tolerance 'wide' is not a number"),
        ("id,key\na,1\na,2\n", "appears twice"),
        ("id,key\n", "bank is empty"),
    ],
)
def test_bad_banks_say_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    file = tmp_path / "bank.csv"
    file.write_text(text, encoding="utf-8")
    with pytest.raises(PoolError, match=message):
        load_bank(file)


def test_missing_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(PoolError, match="no question bank at"):
        load_bank(tmp_path / "nope.csv")
    broken = tmp_path / "bank.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(PoolError, match="not valid JSON"):
        load_bank(broken)
