"""The gate's HTTP API (version 1): paths, request parsing, limits (docs/gate-api.md).

Shared by the server (``screener.gate_service.app``) and the client
(``screener.gate_service.client``) so that both read and write the same JSON. Parsing is
strict: a request that does not follow the API is refused whole (``GateApiError``, 400), and
nothing of it is used.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from screener.errors import ScreenerError
from screener.gate.replies import MAX_ID

__all__ = [
    "ANSWERS_PATH",
    "DECISIONS_PATH",
    "DEFAULT_LIMIT",
    "FINAL_LABELS_PATH",
    "ITEMS_PATH",
    "LABELS_PATH",
    "LEAVE_PATH",
    "MAX_BATCH",
    "MAX_LIMIT",
    "MAX_WAIT",
    "NEXT_PATH",
    "POOL_PATH",
    "STATUS_PATH",
    "TOKEN_ENV",
    "AnswerItem",
    "GateApiError",
    "ItemEntry",
    "LabelItem",
    "NextRequest",
    "StreamQuery",
    "parse_answers",
    "parse_items",
    "parse_labels",
    "parse_leave",
    "parse_next",
    "parse_stream_query",
]

NEXT_PATH = "/v1/next"
ANSWERS_PATH = "/v1/answers"
LEAVE_PATH = "/v1/leave"
LABELS_PATH = "/v1/labels"
DECISIONS_PATH = "/v1/decisions"
ITEMS_PATH = "/v1/items"
FINAL_LABELS_PATH = "/v1/labels/final"
STATUS_PATH = "/v1/status"
POOL_PATH = "/v1/pool"
#: The environment variable holding the bearer token (server and clients).
TOKEN_ENV = "SCREENER_GATE_TOKEN"
#: The longest long poll of a stream (GET /v1/decisions, /v1/labels/final), in seconds.
MAX_WAIT = 60.0
#: Entries one read of a stream returns by default, and at most.
DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
#: Answers one POST /v1/answers, labels one POST /v1/labels, items one POST /v1/items, or
#: candidate items one POST /v1/next may carry.
MAX_BATCH = 1000
_Item = TypeVar("_Item")


class GateApiError(ScreenerError):
    """A request the API refuses: its HTTP ``status`` and one line saying why."""

    def __init__(
        self, message: str, status: int = 400, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.headers = status, headers


@dataclass(frozen=True, slots=True)
class NextRequest:
    """POST /v1/next: ``worker`` asks for work; ``request_id``, when given, makes a retry
    return the first reply; ``items``, when given, the registered items the platform can show
    this worker (the gate names one of them in a task reply)."""

    worker: str
    request_id: str | None = None
    items: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class ItemEntry:
    """One task item to register: its id, its ``cap`` on labels (None: no cap) and its
    ``priority`` (higher first)."""

    item: str
    cap: int | None = None
    priority: float = 0.0

    def to_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {"item": self.item, "priority": self.priority}
        return found if self.cap is None else {**found, "cap": self.cap}

    def as_tuple(self) -> tuple[str, int | None, float]:
        """As ``Gate.add_items`` takes it."""
        return self.item, self.cap, self.priority


@dataclass(frozen=True, slots=True)
class AnswerItem:
    """One gold answer: the ``gold`` id of a reply, the ``worker`` who answered (the one the
    reply was for), and its ``reward`` or raw ``answer``, or both with the gold ``item`` the
    platform showed (``Gate.answer``: the gate checks its final labels against them)."""

    gold: str
    worker: str
    reward: float | None = None
    answer: str | float | None = None
    item: str | None = None

    def to_json(self) -> dict[str, Any]:
        given = {"reward": self.reward, "answer": self.answer, "item": self.item}
        return {"gold": self.gold, "worker": self.worker} | {
            key: value for key, value in given.items() if value is not None
        }


@dataclass(frozen=True, slots=True)
class LabelItem:
    """One task label: ``worker``'s ``label`` of real task ``item``; ``request_id``, when
    given, makes a retry return the first outcome."""

    worker: str
    item: str
    label: str | float
    request_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        found = {"worker": self.worker, "item": self.item, "label": self.label}
        return found if self.request_id is None else {**found, "request_id": self.request_id}


@dataclass(frozen=True, slots=True)
class StreamQuery:
    """A read of a stream (GET /v1/decisions, GET /v1/labels/final): the entries after seq
    ``cursor`` (-1: from the first), at most ``limit``, waiting up to ``wait`` seconds when
    there is none yet."""

    cursor: int = -1
    limit: int = DEFAULT_LIMIT
    wait: float = 0.0


def parse_next(body: object) -> NextRequest:
    fields = _object(body, "POST /v1/next", {"worker", "request_id", "items"})
    request_id, items = fields.get("request_id"), fields.get("items")
    return NextRequest(
        _identifier(fields.get("worker"), "worker"),
        None if request_id is None else _identifier(request_id, "request_id"),
        None if items is None else _candidates(items),
    )


def parse_items(body: object) -> list[ItemEntry]:
    """POST /v1/items: one item (``{"item", "cap"?, "priority"?}``) or a batch
    (``{"items": [...]}``), as a list."""
    return _one_or_batch(body, "items", _item_entry, "the item")


def parse_leave(body: object) -> str:
    """POST /v1/leave: the worker who left."""
    return _identifier(_object(body, "POST /v1/leave", {"worker"}).get("worker"), "worker")


def parse_answers(body: object) -> list[AnswerItem]:
    """POST /v1/answers: one answer (``{"gold", "worker", "reward"|"answer"}``) or a batch
    (``{"answers": [...]}``), as a list."""
    return _one_or_batch(body, "answers", _answer, "the answer")


def parse_labels(body: object) -> list[LabelItem]:
    """POST /v1/labels: one label (``{"worker", "item", "label", "request_id"?}``) or a batch
    (``{"labels": [...]}``), as a list."""
    return _one_or_batch(body, "labels", _label, "the label")


def parse_stream_query(query: Mapping[str, str]) -> StreamQuery:
    """The query of a stream's read: ``cursor``, ``limit``, ``wait``, each checked."""
    unknown = sorted(set(query) - {"cursor", "limit", "wait"})
    if unknown:
        raise GateApiError(f"malformed query: unknown parameter {unknown[0]!r}")
    cursor = _number(query.get("cursor", "-1"), "cursor", int)
    limit = _number(query.get("limit", str(DEFAULT_LIMIT)), "limit", int)
    wait = _number(query.get("wait", "0"), "wait", float)
    if cursor < -1:
        raise GateApiError("malformed query: cursor is the last seq you have, -1 or more")
    if not 1 <= limit <= MAX_LIMIT:
        raise GateApiError(f"malformed query: limit must lie in [1, {MAX_LIMIT}]")
    if not 0.0 <= wait <= MAX_WAIT:
        raise GateApiError(f"malformed query: wait must lie in [0, {MAX_WAIT:g}] seconds")
    return StreamQuery(cursor, limit, wait)


# ------------------------------------------------------------------------ helpers
def _one_or_batch(
    body: object, key: str, parse: Callable[[object, str], _Item], single: str
) -> list[_Item]:
    """One item, or ``{key: [...]}`` of 1 to MAX_BATCH, each parsed (and named by its
    position in errors)."""
    if isinstance(body, dict) and key in body:
        items = _object(body, f"POST /v1/{key}", {key})[key]
        if not isinstance(items, list) or not items:
            raise GateApiError(f"malformed request: {key} must be a non-empty list")
        if len(items) > MAX_BATCH:
            raise GateApiError(f"too many {key} in one request: {len(items)} > {MAX_BATCH}")
        return [parse(item, f"{key}[{index}]") for index, item in enumerate(items)]
    return [parse(body, single)]


def _object(body: object, what: str, allowed: set[str]) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise GateApiError(f"malformed request: {what} takes a JSON object")
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise GateApiError(f"malformed request: unknown field {unknown[0]!r} in {what}")
    return body


def _identifier(value: object, name: str) -> str:
    if not isinstance(value, str) or not value or not value.isprintable() or len(value) > MAX_ID:
        raise GateApiError(
            f"malformed request: {name} must be a printable string of 1 to {MAX_ID} "
            f"characters, got {_shown(value)}"
        )
    return value


def _answer(body: object, where: str) -> AnswerItem:
    fields = _object(body, where, {"gold", "worker", "reward", "answer", "item"})
    gold = _identifier(fields.get("gold"), f"{where}: gold")
    if "worker" not in fields:
        raise GateApiError(
            f"malformed request: {where} needs worker: send the id of the worker who answered "
            "(the one the gold question was given to)"
        )
    worker = _identifier(fields["worker"], f"{where}: worker")
    reward, answer = fields.get("reward"), fields.get("answer")
    if reward is None and answer is None:
        raise GateApiError(f"malformed request: {where} needs a reward or an answer")
    if reward is not None and not _finite(reward):
        raise GateApiError(f"malformed request: {where}: reward must be a number")
    if answer is not None and not (
        isinstance(answer, str) or (isinstance(answer, int | float) and _finite(answer))
    ):
        raise GateApiError(f"malformed request: {where}: answer must be a string or a number")
    item = fields.get("item")
    return AnswerItem(
        gold, worker, None if reward is None else float(reward), answer,
        None if item is None else _identifier(item, f"{where}: item"),
    )  # fmt: skip


def _label(body: object, where: str) -> LabelItem:
    fields = _object(body, where, {"worker", "item", "label", "request_id"})
    worker = _identifier(fields.get("worker"), f"{where}: worker")
    item = _identifier(fields.get("item"), f"{where}: item")
    label, request_id = fields.get("label"), fields.get("request_id")
    if not (isinstance(label, str) or _finite(label)):
        raise GateApiError(f"malformed request: {where}: label must be a string or a number")
    assert isinstance(label, str | int | float)
    rid = None if request_id is None else _identifier(request_id, f"{where}: request_id")
    return LabelItem(worker, item, label, rid)


def _item_entry(body: object, where: str) -> ItemEntry:
    fields = _object(body, where, {"item", "cap", "priority"})
    item = _identifier(fields.get("item"), f"{where}: item")
    cap, priority = fields.get("cap"), fields.get("priority", 0.0)
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
        raise GateApiError(
            f"malformed request: {where}: cap must be a whole number of labels >= 1, or left "
            f"out (no cap), got {_shown(cap)}"
        )
    if not _finite(priority):
        raise GateApiError(
            f"malformed request: {where}: priority must be a finite number (higher first), "
            f"got {_shown(priority)}"
        )
    return ItemEntry(item, cap, float(priority))


def _candidates(items: object) -> tuple[str, ...]:
    """POST /v1/next's ``items``: a list of item ids (empty: nothing to show this worker)."""
    if not isinstance(items, list):
        raise GateApiError("malformed request: items must be a list of item ids")
    if len(items) > MAX_BATCH:
        raise GateApiError(f"too many items in one request: {len(items)} > {MAX_BATCH}")
    return tuple(_identifier(item, f"items[{index}]") for index, item in enumerate(items))


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _number(text: str, name: str, kind: type[int] | type[float]) -> Any:
    try:
        value = kind(text)
    except ValueError:
        raise GateApiError(f"malformed query: {name} must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise GateApiError(f"malformed query: {name} must be finite")
    return value


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"
