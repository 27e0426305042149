"""The gold-question service API (version 1): paths, payload types, parsing, webhook signatures.

Shared by the reference service (``screener.service``) and the client
(``screener.oracles.http``) so both sides read and write the same JSON; the API itself is
documented in docs/live-api.md. Not from the papers: plumbing for running them on live workers.

Parsing is strict for requests (a bad request is refused whole) and tolerant for answer
items (one bad item must not hide the good ones): ``parse_answer_items`` returns the items it
could read and a ``Malformed`` note, with the assignment id when it could find one, for the
rest.
"""

from __future__ import annotations

import hashlib
import hmac
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from screener.errors import OracleError

__all__ = [
    "ANSWERS_PATH",
    "API_PREFIX",
    "ASSIGNMENTS_PATH",
    "MAX_LIMIT",
    "SIGNATURE_HEADER",
    "WEBHOOK_PATH",
    "AnswerItem",
    "AnswerPage",
    "ApiFormatError",
    "Assignment",
    "Malformed",
    "Question",
    "Rejection",
    "SubmitResult",
    "WebhookConfig",
    "answers_body",
    "assignment_path",
    "is_raw_answer",
    "parse_answer_items",
    "parse_answer_page",
    "parse_assignments",
    "parse_submit_result",
    "parse_webhook_config",
    "sign",
    "verify",
]

API_PREFIX = "/v1"
ASSIGNMENTS_PATH = f"{API_PREFIX}/assignments"
ANSWERS_PATH = f"{API_PREFIX}/answers"
WEBHOOK_PATH = f"{API_PREFIX}/webhook"
SIGNATURE_HEADER = "X-Screener-Signature"
#: The most answers one GET /v1/answers returns.
MAX_LIMIT = 1000
_SIGNATURE_PREFIX = "sha256="
_MAX_ID_LENGTH = 256


class ApiFormatError(OracleError):
    """A request or response body does not follow the gold-question service API."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "see docs/live-api.md for the expected JSON")


@dataclass(frozen=True, slots=True)
class Question:
    """What a worker is shown: the gold question's id and payload (never its key)."""

    id: str
    payload: Any


@dataclass(frozen=True, slots=True)
class Assignment:
    """Ask ``worker`` ``question``; ``id`` is chosen by the client and is the idempotency key."""

    id: str
    worker: str
    question: Question

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "worker": self.worker,
            "question": {"id": self.question.id, "payload": self.question.payload},
        }


@dataclass(frozen=True, slots=True)
class Rejection:
    """An assignment the service refused; a reason starting "unavailable" means the worker is
    gone for good."""

    id: str
    reason: str


@dataclass(frozen=True, slots=True)
class SubmitResult:
    """The reply to POST /v1/assignments."""

    accepted: tuple[str, ...]
    rejected: tuple[Rejection, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "accepted": list(self.accepted),
            "rejected": [{"id": r.id, "reason": r.reason} for r in self.rejected],
        }


@dataclass(frozen=True, slots=True)
class AnswerItem:
    """One answer: the worker's raw ``answer`` or, instead, why the worker is ``unavailable``."""

    id: str
    answer: str | float | None = None
    unavailable: str | None = None

    def __post_init__(self) -> None:
        if (self.answer is None) == (self.unavailable is None):
            raise ValueError("an AnswerItem carries exactly one of answer and unavailable")

    def to_json(self) -> dict[str, Any]:
        if self.unavailable is not None:
            return {"id": self.id, "unavailable": self.unavailable}
        return {"id": self.id, "answer": self.answer}


@dataclass(frozen=True, slots=True)
class Malformed:
    """An answer item that could not be read; ``id`` is its assignment id when it had one."""

    id: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class AnswerPage:
    """The reply to GET /v1/answers: readable items, unreadable ones, and the next cursor."""

    items: tuple[AnswerItem, ...]
    malformed: tuple[Malformed, ...]
    cursor: str


@dataclass(frozen=True, slots=True)
class WebhookConfig:
    """PUT /v1/webhook: where to POST answer batches (None: stop) and the signing secret."""

    url: str | None
    secret: str | None


# --------------------------------------------------------------------------- helpers
def assignment_path(assignment_id: str) -> str:
    """The path of one assignment (DELETE cancels it)."""
    return f"{ASSIGNMENTS_PATH}/{quote(assignment_id, safe='')}"


def sign(secret: str, body: bytes) -> str:
    """The ``X-Screener-Signature`` value of ``body``: ``sha256=<hex HMAC-SHA256>``."""
    digest = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    return _SIGNATURE_PREFIX + digest


def verify(secret: str, body: bytes, signature: str | None) -> bool:
    """Whether ``signature`` signs ``body`` with ``secret`` (constant-time comparison)."""
    if signature is None:
        return False
    return hmac.compare_digest(sign(secret, body).encode(), signature.strip().encode())


def is_raw_answer(value: object) -> bool:
    """Raw answers are strings or finite numbers (JSON booleans and null are not answers)."""
    if isinstance(value, str):
        return True
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value)


def answers_body(items: Iterable[AnswerItem], cursor: str | None = None) -> dict[str, Any]:
    """The JSON of an answer page (with ``cursor``) or of a webhook batch (without)."""
    body: dict[str, Any] = {"answers": [item.to_json() for item in items]}
    if cursor is not None:
        body["cursor"] = cursor
    return body


# --------------------------------------------------------------------------- parsing
def parse_assignments(data: object) -> list[Assignment]:
    """The body of POST /v1/assignments (strict: any defect refuses the whole request)."""
    rows = _field(data, "assignments", list, "the request")
    assignments = []
    for index, row in enumerate(rows):
        where = f"assignment {index}"
        ident = _identifier(_field(row, "id", str, where), f"{where}: id")
        worker = _identifier(_field(row, "worker", str, where), f"{where}: worker")
        question = _field(row, "question", dict, where)
        question_id = _identifier(_field(question, "id", str, where), f"{where}: question id")
        assignments.append(
            Assignment(ident, worker, Question(question_id, question.get("payload")))
        )
    return assignments


def parse_submit_result(data: object, sent: Sequence[str]) -> SubmitResult:
    """The reply to POST /v1/assignments; every id sent must be accepted or rejected."""
    accepted = _field(data, "accepted", list, "the reply")
    rejected_rows = _field(data, "rejected", list, "the reply")
    if not all(isinstance(ident, str) for ident in accepted):
        raise ApiFormatError("malformed reply: 'accepted' must list assignment ids")
    rejected = tuple(
        Rejection(
            _field(row, "id", str, "a rejection"), str(_field(row, "reason", str, "a rejection"))
        )
        for row in rejected_rows
    )
    answered = set(accepted) | {r.id for r in rejected}
    missing = [ident for ident in sent if ident not in answered]
    if missing:
        raise ApiFormatError(
            f"malformed reply: {len(missing)} assignment(s) neither accepted nor rejected"
        )
    return SubmitResult(tuple(accepted), rejected)


def parse_answer_items(data: object) -> tuple[list[AnswerItem], list[Malformed]]:
    """The ``answers`` of a page or webhook batch: readable items and notes on the others."""
    rows = _field(data, "answers", list, "the answer batch")
    items: list[AnswerItem] = []
    malformed: list[Malformed] = []
    for row in rows:
        ident = row.get("id") if isinstance(row, dict) else None
        if not isinstance(ident, str) or not ident:
            malformed.append(Malformed(None, "malformed answer item without an id"))
            continue
        if "unavailable" in row and isinstance(row["unavailable"], str):
            items.append(AnswerItem(ident, unavailable=row["unavailable"]))
        elif "answer" in row and is_raw_answer(row["answer"]):
            items.append(AnswerItem(ident, answer=row["answer"]))
        else:
            malformed.append(
                Malformed(ident, "malformed answer item: needs a string or number 'answer'")
            )
    return items, malformed


def parse_answer_page(data: object) -> AnswerPage:
    """The reply to GET /v1/answers (a missing cursor makes the whole page unreadable)."""
    cursor = _field(data, "cursor", str, "the answer page")
    items, malformed = parse_answer_items(data)
    return AnswerPage(tuple(items), tuple(malformed), cursor)


def parse_webhook_config(data: object) -> WebhookConfig:
    """The body of PUT /v1/webhook: ``{"url": ..., "secret": ...}`` or ``{"url": null}``."""
    if not isinstance(data, dict):
        raise ApiFormatError("malformed request: expected a JSON object")
    url = data.get("url")
    if url is None:
        return WebhookConfig(None, None)
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ApiFormatError("malformed request: 'url' must be an http(s) URL or null")
    secret = data.get("secret")
    if not isinstance(secret, str) or len(secret) < 16:
        raise ApiFormatError("malformed request: 'secret' must be a string of 16+ characters")
    return WebhookConfig(url, secret)


def _field(data: object, name: str, kind: type[Any], where: str) -> Any:
    if not isinstance(data, dict):
        raise ApiFormatError(f"malformed {where}: expected a JSON object")
    value = data.get(name)
    if not isinstance(value, kind):
        raise ApiFormatError(f"malformed {where}: '{name}' must be a {_KIND_NAMES[kind]}")
    return value


def _identifier(text: str, where: str) -> str:
    if not text or len(text) > _MAX_ID_LENGTH:
        raise ApiFormatError(f"malformed {where}: must hold 1 to {_MAX_ID_LENGTH} characters")
    return text


_KIND_NAMES: dict[type[Any], str] = {list: "list", dict: "object", str: "string"}
