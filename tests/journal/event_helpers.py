"""Events about one pull of worker ``w0``'s, for journal tests that need a few by hand."""

from __future__ import annotations

from typing import Any

from screener.journal import Event, EventKind

__all__ = ["pull_event"]


def pull_event(kind: EventKind, pull_id: int, *, at: float = 1.0, **fields: Any) -> Event:
    """Pull ``pull_id`` (worker w0, arm 0, question number ``pull_id``) and ``fields``."""
    base: dict[str, Any] = {"arm": 0, "worker": "w0", "seq": pull_id}
    return Event(kind=kind, at=at, pull_id=pull_id, **(base | fields))
