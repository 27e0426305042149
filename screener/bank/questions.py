"""The gold question bank: questions with known answers, and which worker gets which.

A worker never gets the same gold question twice: worker w's j-th question (``seq`` j in the
ask/tell contract) is the j-th entry of a permutation of the bank keyed by (run seed, w). A
retried pull keeps its question number, so it asks the same question again; a worker whose
question numbers run past the bank is exhausted.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from screener.bank.scoring import Scoring, parse_number, score_answer
from screener.errors import PoolError
from screener.files import is_stdio, read_text, source_name
from screener.simulation.hashing import worker_rng

__all__ = ["GoldBank", "GoldQuestion", "load_bank"]

_ORDER_STREAM = 11
#: The most question numbers the orders of recent workers keep (8 MB): a bank of n
#: questions keeps the orders of the last 2^20 / n workers it served (at least one). Each
#: worker's order is its own seeded permutation, drawn again when it was forgotten.
ORDERS_KEPT = 1 << 20
_KEY_COLUMNS = ("key", "answer", "gold")
_DEFAULT_TOLERANCE = {Scoring.NUMERIC: 0.0, Scoring.GRADED: 1.0}


@dataclass(frozen=True, slots=True)
class GoldQuestion:
    """One gold question: what the worker sees (``payload``), the key, and how to score.

    Examples
    --------
    >>> question = GoldQuestion("q1", "How many legs has a spider?", "8")
    >>> question.score("8"), question.score(" 8 "), question.score("six")
    (1.0, 1.0, 0.0)
    >>> GoldQuestion("q2", "pi to 2 places", "3.14", Scoring.NUMERIC, 0.01).score("3.141")
    1.0
    """

    id: str
    payload: Any
    key: str
    scoring: Scoring = Scoring.EXACT
    tolerance: float = 0.0

    def score(self, answer: object) -> float:
        return score_answer(self.scoring, self.key, self.tolerance, answer)

    def with_key(self, key: str) -> GoldQuestion:
        """This question with a corrected key, which its scoring must be able to use."""
        question = dataclasses.replace(self, key=key)
        _check_question(question, "the corrected key")
        return question

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "payload": self.payload,
            "key": self.key,
            "scoring": self.scoring.value,
            "tolerance": self.tolerance,
        }


@dataclass(frozen=True)
class GoldBank:
    """Gold questions in a fixed order; ``question_for`` hands them out per worker.

    Examples
    --------
    Each worker gets the questions in an order of its own (seeded), each question once:

    >>> bank = GoldBank((GoldQuestion("q1", "2+2", "4"), GoldQuestion("q2", "3+3", "6"),
    ...                  GoldQuestion("q3", "1+1", "2")))
    >>> len(bank), "q2" in bank, bank.get("q2").key
    (3, True, '6')
    >>> [question.id if question else None for question in
    ...  (bank.question_for("ann", seq, 0) for seq in range(4))]  # then exhausted
    ['q3', 'q2', 'q1', None]
    """

    questions: tuple[GoldQuestion, ...]
    source: str = "inline"
    _by_id: dict[str, GoldQuestion] = field(init=False, repr=False, compare=False)
    _orders: OrderedDict[tuple[int, str], NDArray[np.int64]] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if not self.questions:
            raise PoolError(f"{self.source}: the gold question bank is empty", "add questions")
        by_id: dict[str, GoldQuestion] = {}
        for question in self.questions:
            _check_question(question, self.source)
            if question.id in by_id:
                raise PoolError(f"{self.source}: gold question {question.id!r} appears twice")
            by_id[question.id] = question
        object.__setattr__(self, "_by_id", by_id)
        object.__setattr__(self, "_orders", OrderedDict())

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the orders kept (``ORDERS_KEPT``): they are drawn again."""
        return {k: v for k, v in self.__dict__.items() if k != "_orders"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        object.__setattr__(self, "_orders", OrderedDict())

    def __len__(self) -> int:
        return len(self.questions)

    def __contains__(self, question_id: object) -> bool:
        return question_id in self._by_id

    def get(self, question_id: str) -> GoldQuestion:
        try:
            return self._by_id[question_id]
        except KeyError:
            raise PoolError(
                f"no gold question {question_id!r} in {self.source}",
                "use an id from the question bank",
            ) from None

    def question_for(self, worker: str, seq: int, seed: int) -> GoldQuestion | None:
        """Worker ``worker``'s ``seq``-th question in run ``seed``; None once exhausted."""
        if seq >= len(self.questions):
            return None
        return self.questions[int(self._order(seed, worker)[seq])]

    def _order(self, seed: int, worker: str) -> NDArray[np.int64]:
        """Worker ``worker``'s order of the questions in run ``seed``, kept while it is among
        the recent (``ORDERS_KEPT``: a pool of 100,000 workers would otherwise keep one
        each)."""
        orders, key = self._orders, (seed, worker)
        order = orders.get(key)
        if order is not None:
            orders.move_to_end(key)
            return order
        order = worker_rng(seed, _ORDER_STREAM, worker).permutation(len(self.questions))
        orders[key] = order
        while len(orders) > max(1, ORDERS_KEPT // len(self.questions)):
            orders.popitem(last=False)
        return order

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "questions": [q.to_dict() for q in self.questions]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GoldBank:
        source = str(data.get("source", "inline"))
        rows = data.get("questions")
        if not isinstance(rows, list):
            raise PoolError(f"{source}: 'questions' must be a list of objects")
        return cls(tuple(_question(row, source, i) for i, row in enumerate(rows, 1)), source)


def load_bank(path: str | Path) -> GoldBank:
    """Read a bank from CSV (``id,payload,key[,scoring,tolerance]``) or JSON (a list of objects
    with those fields, or ``{"questions": [...]}``). ``answer`` or ``gold`` may name the key.
    ``-`` reads standard input, JSON when it starts with ``[`` or ``{``, else CSV.

    Examples
    --------
    >>> file = folder / "bank.csv"
    >>> _ = file.write_text("id,payload,key,scoring,tolerance\\nq1,2+2,4,numeric,0\\n")
    >>> bank = load_bank(file)
    >>> bank.get("q1").score("4.0"), bank.get("q1").scoring.value
    (1.0, 'numeric')
    """
    file = source_name(path)
    try:
        text = read_text(path, "utf-8-sig")
    except FileNotFoundError:
        raise PoolError(f"no question bank at {file}", "check the path") from None
    except (OSError, UnicodeDecodeError) as error:
        raise PoolError(f"cannot read question bank {file}: {error}") from None
    if _is_json(path, text):
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as error:  # too deep, or an integer too long
            raise PoolError(f"{file} is not valid JSON: {error}") from None
        rows = (
            data
            if isinstance(data, list)
            else data.get("questions")
            if isinstance(data, dict)
            else None
        )
        if not isinstance(rows, list):
            raise PoolError(f'{file}: expected a list of questions or {{"questions": [...]}}')
        return GoldBank(tuple(_question(row, file, i) for i, row in enumerate(rows, 1)), file)
    try:
        return GoldBank(tuple(_csv_questions(text.splitlines(), file)), file)
    except csv.Error as error:
        raise PoolError(f"cannot read question bank {file}: {error}") from None


def _is_json(path: str | Path, text: str) -> bool:
    if is_stdio(path):
        return text.lstrip()[:1] in ("[", "{")
    return Path(path).suffix.lower() == ".json"


def _csv_questions(lines: Sequence[str], source: str) -> Iterable[GoldQuestion]:
    reader = csv.DictReader(lines)
    header = [(name or "").strip().lower() for name in reader.fieldnames or []]
    if "id" not in header or not any(c in header for c in _KEY_COLUMNS):
        raise PoolError(
            f"{source}: a question bank needs columns 'id' and 'key' "
            f"(found {', '.join(header) or 'nothing'})",
            "start the file with a header line such as 'id,payload,key,scoring,tolerance'",
        )
    for line, row in enumerate(reader, start=2):
        if None in row:  # csv.DictReader's key for the fields beyond the header's
            raise PoolError(
                f"{source}, line {line}: more fields than the {len(header)} columns of the header",
                "quote values that contain a comma, or name every column in the header",
            )
        clean = {(k or "").strip().lower(): (v or "").strip() for k, v in row.items()}
        yield _question(clean, f"{source}, line {line}", None)


def _question(row: object, source: str, index: int | None) -> GoldQuestion:
    where = source if index is None else f"{source}, question {index}"
    if not isinstance(row, Mapping):
        raise PoolError(f"{where}: a question must be an object with 'id' and 'key'")
    key = next((row[c] for c in _KEY_COLUMNS if row.get(c) not in (None, "")), None)
    if row.get("id") in (None, "") or key is None:
        raise PoolError(f"{where}: every question needs an 'id' and a 'key'")
    scoring_text = str(row.get("scoring") or Scoring.EXACT.value).strip().lower()
    try:
        scoring = Scoring(scoring_text)
    except ValueError:
        known = ", ".join(s.value for s in Scoring)
        raise PoolError(
            f"{where}: unknown scoring {scoring_text!r}", f"use one of {known}"
        ) from None
    tolerance_text = row.get("tolerance")
    if tolerance_text in (None, ""):
        tolerance = _DEFAULT_TOLERANCE.get(scoring, 0.0)
    else:
        parsed = parse_number(tolerance_text)
        if parsed is None:
            raise PoolError(f"{where}: tolerance {tolerance_text!r} is not a number")
        tolerance = parsed
    return GoldQuestion(str(row["id"]), row.get("payload", ""), str(key), scoring, tolerance)


def _check_question(question: GoldQuestion, source: str) -> None:
    where = f"{source}: question {question.id!r}"
    numeric = question.scoring in (Scoring.NUMERIC, Scoring.GRADED)
    if numeric and parse_number(question.key) is None:
        raise PoolError(
            f"{where}: {question.scoring} scoring needs a numeric key, got {question.key!r}",
            "give a number as the key",
        )
    if not math.isfinite(question.tolerance) or question.tolerance < 0:
        raise PoolError(f"{where}: tolerance must be a finite number >= 0")
    if question.scoring is Scoring.GRADED and question.tolerance <= 0:
        raise PoolError(f"{where}: graded scoring needs a positive tolerance (the scale)")
