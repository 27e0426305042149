"""A platform's side of screener's gate (docs/gate-api.md), to copy into a platform's code.

Python's standard library only. Three things a platform does:

* when a worker comes for work, ``client.next(worker, request_id)`` says what to give it
  (a gold question, a real task, or nothing: blocked);
* when the worker answers a gold question, ``client.answer(reply.gold, worker=..., reward=...)``
  (or ``answer=`` the raw answer, which the gate scores against its bank): the worker is the
  one the reply was for, taken from the platform's own session, never from the worker's
  browser (the gate refuses an answer by another worker);
* meanwhile, ``client.follow(cursor)`` yields each decision (ban, accept, reopen) as the gate
  makes it, to act on at once.

Every call is safe to repeat, so the client retries on lost connections, timeouts, 429 and
5xx (a gate restarting after a crash answers a repeated request id with the first reply).

Run as a script, it follows a gate's decisions and prints them as JSON lines, keeping its
cursor in a file so that a restart misses none (one acted on just before a crash may come
again: act idempotently, e.g. "ban w07" twice is one ban):

    SCREENER_GATE_TOKEN=... python examples/gate_client.py URL --cursor-file cursor.txt
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

TOKEN_ENV = "SCREENER_GATE_TOKEN"
RETRIED = frozenset({429, 500, 502, 503, 504})


class GateError(Exception):
    """The gate refused a request (``status`` 4xx, ``message`` its reason), or did not answer
    within the retries (``status`` 503)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Reply:
    """What to give an arriving worker: ``kind`` is "gold" (ask ``question``/``payload`` and
    send the answer with ``gold``), "task" or "qualified" (a real task) or "blocked"."""

    kind: str
    worker: str
    gold: str | None
    question: str | None
    payload: Any
    reason: str


@dataclass(frozen=True)
class Decision:
    """One decision: ``decision`` is "banned", "accepted" or "reopened"; ``at`` unix seconds."""

    seq: int
    worker: str
    decision: str
    reason: str
    request: int
    at: float


class GateClient:
    """Calls of the gate at ``url`` with the bearer ``token`` (None: no header)."""

    def __init__(
        self, url: str, token: str | None = None, *, timeout: float = 70.0, retries: int = 8
    ) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.retries = retries

    def next(self, worker: str, request_id: str) -> Reply:
        """Gold or task for ``worker``; give each request its own ``request_id`` (a retry
        with the same id gets the same reply)."""
        reply = self._call("POST", "/v1/next", {"worker": worker, "request_id": request_id})
        return _read(Reply, reply)

    def answer(
        self,
        gold: str,
        *,
        worker: str,
        reward: float | None = None,
        answer: str | float | None = None,
    ) -> str:
        """Hand back ``worker``'s answer to its gold question ``gold``: "accepted",
        "duplicate" or "late"."""
        item: dict[str, Any] = {"gold": gold, "worker": worker}
        item.update({"reward": reward} if answer is None else {"answer": answer})
        return self.answers([item])[0]

    def answers(self, items: list[dict[str, Any]]) -> list[str]:
        """Several answers at once (``{"gold", "worker", "reward"|"answer"}`` each), checked
        whole."""
        reply = self._call("POST", "/v1/answers", {"answers": items})
        return [str(result["outcome"]) for result in reply["results"]]

    def leave(self, worker: str) -> bool:
        """``worker`` left (its open gold question is released)."""
        return bool(self._call("POST", "/v1/leave", {"worker": worker})["left"])

    def decisions(self, cursor: int = -1, wait: float = 0.0) -> tuple[list[Decision], int]:
        """The decisions after seq ``cursor``, waiting up to ``wait`` seconds for one; and the
        cursor to pass next time."""
        query = urllib.parse.urlencode({"cursor": cursor, "wait": wait})
        reply = self._call("GET", f"/v1/decisions?{query}")
        return [_read(Decision, item) for item in reply["decisions"]], int(reply["cursor"])

    def follow(self, cursor: int = -1, wait: float = 30.0) -> Iterator[Decision]:
        """Each decision after ``cursor`` once, as it is made (never ends by itself)."""
        while True:
            page, _ = self.decisions(cursor, wait)
            for decision in page:
                if decision.seq > cursor:  # delivery is at least once: skip a repeat
                    cursor = decision.seq
                    yield decision

    def status(self) -> dict[str, Any]:
        """Counts, money, workers per status and the gate's settings."""
        return self._call("GET", "/v1/status")

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(self.url + path, data, headers, method=method)
        why = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(min(2.0, 0.05 * 2**attempt))
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    reply: dict[str, Any] = json.load(response)
                    return reply
            except urllib.error.HTTPError as error:
                message = _error_message(error)
                if error.code not in RETRIED:
                    raise GateError(error.code, message) from None
                why = f"{error.code}: {message}"
            except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
                why = str(getattr(error, "reason", error))
        raise GateError(503, f"no answer from {self.url} after {self.retries} retries ({why})")


def _read(kind: type[T], item: dict[str, Any]) -> T:
    """The fields of ``kind`` from a JSON object (fields a later gate adds are ignored)."""
    return kind(**{field.name: item[field.name] for field in fields(kind)})  # type: ignore[arg-type]


def _error_message(error: urllib.error.HTTPError) -> str:
    try:
        return str(json.load(error)["error"])
    except (ValueError, KeyError, TypeError):
        return str(error.reason)


def main(argv: list[str] | None = None) -> int:
    """Print the gate's decisions as JSON lines, from the cursor kept in --cursor-file."""
    parser = argparse.ArgumentParser(description="Follow a gate's decisions (JSON lines).")
    parser.add_argument("url", help="the gate's base URL, as `screener gate` printed it")
    parser.add_argument("--cursor-file", type=Path, help="keeps the last seq acted on")
    parser.add_argument("--once", action="store_true", help="print what is there, then stop")
    args = parser.parse_args(argv)
    client = GateClient(args.url, os.environ.get(TOKEN_ENV))
    cursor = -1
    if args.cursor_file is not None and args.cursor_file.exists():
        cursor = int(args.cursor_file.read_text())
    decisions = iter(client.decisions(cursor)[0]) if args.once else client.follow(cursor)
    try:
        for decision in decisions:
            print(json.dumps(decision.__dict__), flush=True)  # act on it: here, print it
            if args.cursor_file is not None:  # then remember it was done
                args.cursor_file.write_text(str(decision.seq))
    except KeyboardInterrupt:
        return 130
    except GateError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
