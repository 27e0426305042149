"""A live one-line progress display for terminals."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TextIO

__all__ = ["Progress", "ProgressLine"]


@dataclass(frozen=True, slots=True)
class ProgressLine:
    asked: int
    answered: int
    in_flight: int
    decided: int
    workers: int


class Progress:
    """Rewrites one line on ``stream`` (carriage return, clear to end of line)."""

    def __init__(self, stream: TextIO, interval: float = 0.1) -> None:
        self.stream = stream
        self.interval = interval
        self._started = time.monotonic()
        self._shown = False

    def show(self, line: ProgressLine) -> None:
        elapsed = time.monotonic() - self._started
        rate = line.answered / elapsed if elapsed > 0 else 0.0
        text = (
            f"pulls {line.asked:,}  answers {line.answered:,}  in flight {line.in_flight}  "
            f"decided {line.decided}/{line.workers}  {rate:,.0f}/s  {elapsed:.1f}s"
        )
        self.stream.write(f"\r{text}\x1b[K")
        self.stream.flush()
        self._shown = True

    def close(self) -> None:
        if self._shown:
            self.stream.write("\n")
            self.stream.flush()
