"""The reference service's answer stream: append-only, read by cursor, awaited for growth.

Clients page through it (``GET /v1/answers``) and webhooks are fed from it, both in order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from screener.oracles.http.protocol import AnswerItem

__all__ = ["AnswerLog"]


class AnswerLog:
    """Every answer the service has delivered, in delivery order (a cursor is a position)."""

    def __init__(self) -> None:
        self.items: list[AnswerItem] = []
        #: Set when the service shuts down: waiting for answers then stops at once.
        self.closing = asyncio.Event()
        self._grown = asyncio.Event()

    def __len__(self) -> int:
        return len(self.items)

    def append(self, item: AnswerItem) -> None:
        self.items.append(item)
        self._grown.set()
        self._grown = asyncio.Event()

    def page(self, cursor: int, limit: int) -> list[AnswerItem]:
        return self.items[cursor : cursor + limit]

    async def grown_or_closing(self) -> None:
        """Wait until an answer is appended or the service shuts down."""
        await _first(self._grown.wait(), self.closing.wait())


async def _first(*waits: Awaitable[Any]) -> None:
    """Wait until the first of ``waits`` finishes; cancel the others."""
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
