"""How a worker's raw answer to a gold question becomes a reward in [0, 1]."""

from __future__ import annotations

import enum
import math

__all__ = ["Scoring", "parse_number", "score_answer"]


class Scoring(enum.StrEnum):
    """Scoring rules of a gold question.

    Examples
    --------
    >>> [rule.value for rule in Scoring]
    ['exact', 'case-insensitive', 'numeric', 'graded']
    """

    #: 1 when the answer equals the key after trimming surrounding whitespace, else 0.
    EXACT = "exact"
    #: As EXACT, ignoring case and runs of inner whitespace ("New  York" == "new york").
    CASE_INSENSITIVE = "case-insensitive"
    #: 1 when the answer is a number within ``tolerance`` of the key, else 0.
    NUMERIC = "numeric"
    #: ``1 - |answer - key| / scale`` clipped to [0, 1] (``tolerance`` is the scale).
    GRADED = "graded"


def parse_number(text: object) -> float | None:
    """``text`` as a finite float, or None when it is not one.

    Examples
    --------
    >>> parse_number(" 3.5 "), parse_number("x"), parse_number("inf")
    (3.5, None, None)
    """
    if isinstance(text, bool):
        return None
    try:
        value = float(text)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _normalise(text: object) -> str:
    return " ".join(str(text).split()).casefold()


def score_answer(scoring: Scoring, key: str, tolerance: float, answer: object) -> float:
    """The reward for ``answer`` to a question with this key and rule.

    An answer that cannot be read under the rule (text where a number is due) is a wrong
    answer, scored 0: the worker gave it, and the platform paid for it.

    Examples
    --------
    >>> score_answer(Scoring.CASE_INSENSITIVE, "Cat", 0.0, " cat ")
    1.0
    >>> score_answer(Scoring.GRADED, "1", 0.5, "0.75")  # a quarter off on a scale of a half
    0.5
    >>> score_answer(Scoring.NUMERIC, "10", 0.5, "ten")  # unreadable: wrong, and paid for
    0.0
    """
    if scoring is Scoring.EXACT:
        return float(str(answer).strip() == key.strip())
    if scoring is Scoring.CASE_INSENSITIVE:
        return float(_normalise(answer) == _normalise(key))
    value, target = parse_number(answer), parse_number(key)
    if value is None or target is None:
        return 0.0
    if scoring is Scoring.NUMERIC:
        return float(abs(value - target) <= tolerance)
    return min(1.0, max(0.0, 1.0 - abs(value - target) / tolerance))
