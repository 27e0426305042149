"""A live one-line progress display for terminals."""

from __future__ import annotations

import math
import shutil
import time
from dataclasses import dataclass
from typing import TextIO

__all__ = ["Progress", "ProgressLine"]


@dataclass(frozen=True, slots=True)
class ProgressLine:
    """What a run has done so far, for one refresh of the display."""

    asked: int
    answered: int
    in_flight: int
    #: Workers whose decision is final (undecided ones, leaning or not, are not counted).
    decided: int
    workers: int
    #: The run's budget of answers, when it has one.
    budget: int | None = None
    #: Workers that left or ran out of gold questions.
    unavailable: int = 0
    #: The k-sigma threshold's estimate and interval, for the algorithms that estimate one.
    threshold: tuple[float, float, float] | None = None
    #: The most answers the run can still need (its budget, or the per-worker bound).
    most_answers: int | None = None

    def text(self, elapsed: float) -> str:
        rate = self.answered / elapsed if elapsed > 0 else 0.0
        answers = f"answers {self.answered:,}"
        if self.budget is not None:
            answers += f" / {self.budget:,}"
        parts = [answers, f"in flight {self.in_flight:,}", f"decided {self.decided}/{self.workers}"]
        if self.unavailable:
            parts.append(f"out {self.unavailable}")
        if self.threshold is not None and all(map(math.isfinite, self.threshold)):
            estimate, lower, upper = self.threshold
            parts.append(f"threshold {estimate:.3f} [{lower:.3f}, {upper:.3f}]")
        parts += [f"{rate:,.0f}/s", _clock(elapsed)]
        eta = self._seconds_left(rate)
        if eta is not None:
            parts.append(f"at most {_clock(eta)} left")
        return "  ".join(parts)

    def _seconds_left(self, rate: float) -> float | None:
        """The time the remaining answers take at the rate so far: an upper bound, since the
        run may stop early; None without a bound on the answers or a rate yet."""
        if self.most_answers is None or rate <= 0:
            return None
        return max(self.most_answers - self.answered, 0) / rate


class Progress:
    """Rewrites one line on ``stream`` (carriage return, clear to end of line), cut to the
    terminal's width so that it never wraps."""

    def __init__(self, stream: TextIO, interval: float = 0.1) -> None:
        self.stream = stream
        self.interval = interval
        self._started = time.monotonic()
        self._shown = False

    def show(self, line: ProgressLine) -> None:
        width = shutil.get_terminal_size().columns - 1
        text = line.text(time.monotonic() - self._started)[: max(width, 20)]
        self.stream.write(f"\r{text}\x1b[K")
        self.stream.flush()
        self._shown = True

    def close(self) -> None:
        if self._shown:
            self.stream.write("\n")
            self.stream.flush()


def _clock(seconds: float) -> str:
    """1.5s, 2m05s, 1h02m."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
