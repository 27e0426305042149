"""Live progress: one line rewritten on a terminal, or a tqdm bar (a widget in a notebook
with the ``notebook`` extra, ipywidgets; else a text bar).

What a run has done is read off its algorithm (``ProgressLine.of``). Two rules keep the
numbers honest: "decided" counts only final decisions (an algorithm whose decisions are
provisional until it stops, such as the k-sigma family, shows them as "provisional"), so it
never goes down; the time left is an upper bound, from the budget or the per-worker bound on
questions, and is shown only where one of them exists. A run with a gold question's price
shows the money its answers cost beside them (and its budget in money).
"""

from __future__ import annotations

import importlib
import math
import shutil
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np
from numpy.typing import NDArray

from screener.algorithms import Algorithm, Decision
from screener.money import money

if TYPE_CHECKING:
    from tqdm import tqdm

__all__ = ["Progress", "ProgressBar", "ProgressLine", "auto_progress", "tqdm_class"]


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
    #: The most answers the run can need in all (its budget, or the per-worker bound on the
    #: workers still open), when it has such a bound.
    most_answers: int | None = None
    #: Workers decided for now by an algorithm whose decisions are provisional until it stops.
    provisional: int = 0
    #: What one gold question costs, when the run was given prices.
    gold_price: float | None = None

    @classmethod
    def of(cls, algorithm: Algorithm, *, gold_price: float | None = None) -> ProgressLine:
        """The line for ``algorithm`` as it stands (reading its result changes nothing);
        ``gold_price``: what an answer costs, for the money spent."""
        result = algorithm.result()
        t = result.threshold
        decided = np.zeros(algorithm.n_arms, dtype=bool)  # by arm (the result is ranked)
        decided[[w.arm for w in result.workers if w.decision is not Decision.UNDECIDED]] = True
        final = algorithm.finished or algorithm.decisions_final
        return cls(
            asked=algorithm.n_asked,
            answered=algorithm.n_answered,
            in_flight=algorithm.n_pending,
            decided=int(decided.sum()) if final else 0,
            workers=algorithm.n_arms,
            budget=algorithm.budget,
            unavailable=algorithm.n_arms - int(algorithm.available.sum()),
            threshold=None if t is None or t.given else (t.estimate, t.lower, t.upper),
            most_answers=_most_answers(algorithm, decided & final),
            provisional=0 if final else int(decided.sum()),
            gold_price=gold_price,
        )

    def text(self, elapsed: float) -> str:
        rate = self.answered / elapsed if elapsed > 0 else 0.0
        answers = f"answers {self.answered:,}"
        if self.budget is not None:
            answers += f" / {self.budget:,}"
        return "  ".join([answers, *self.details(), f"{rate:,.0f}/s", _clock(elapsed),
                          *self._time_left(rate)])  # fmt: skip

    def details(self) -> list[str]:
        """The parts between the answers and the rate: money spent, in flight, decided, out,
        threshold."""
        decided = f"decided {self.decided}/{self.workers}"
        if self.provisional:
            decided += f" ({self.provisional} provisional)"
        parts = [f"in flight {self.in_flight:,}", decided]
        if self.gold_price is not None:
            spent = f"spent {money(self.answered * self.gold_price)}"
            if self.budget is not None:
                spent += f" / {money(self.budget * self.gold_price)}"
            parts.insert(0, spent)
        if self.unavailable:
            parts.append(f"out {self.unavailable}")
        if self.threshold is not None and all(map(math.isfinite, self.threshold)):
            estimate, lower, upper = self.threshold
            parts.append(f"threshold {estimate:.3f} [{lower:.3f}, {upper:.3f}]")
        return parts

    def _time_left(self, rate: float) -> list[str]:
        """The time the remaining answers take at the rate so far: an upper bound, since the
        run may stop early; nothing without a bound on the answers or a rate yet."""
        if self.most_answers is None or rate <= 0:
            return []
        return [f"at most {_clock(max(self.most_answers - self.answered, 0) / rate)} left"]


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


class ProgressBar(Progress):
    """A tqdm.auto bar of the answers: an HTML widget in a notebook, a text bar on a
    terminal. Its total is the most answers the run can need, where that is bounded (so
    tqdm's remaining time is an upper bound too); the rest of the line is its postfix.

    Examples
    --------
    >>> import io
    >>> bar = ProgressBar(io.StringIO())
    >>> bar.show(ProgressLine(12, 10, 2, 1, 6, most_answers=60))
    >>> bar.close()
    >>> "10/60" in bar.stream.getvalue()
    True
    """

    def __init__(self, stream: TextIO | None = None, interval: float = 0.1) -> None:
        super().__init__(sys.stderr if stream is None else stream, interval)
        self._bar: tqdm[Any] | None = None

    def show(self, line: ProgressLine) -> None:
        if self._bar is None:
            tqdm = tqdm_class()
            self._bar = tqdm(total=line.most_answers, unit="answer", file=self.stream,
                             mininterval=self.interval, dynamic_ncols=True)  # fmt: skip
        bar = self._bar
        if line.most_answers is not None:
            bar.total = line.most_answers  # it shrinks as workers are decided
        bar.update(line.answered - bar.n)
        bar.set_postfix_str("  ".join(line.details()), refresh=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def tqdm_class() -> type[tqdm[Any]]:
    """tqdm's bar for here: its notebook widget inside a Jupyter kernel with ipywidgets
    installed (the ``notebook`` extra), else its plain text bar. Without ipywidgets,
    ``tqdm.auto`` in a kernel warns "IProgress not found" and falls back to the text bar
    itself: choosing the text bar first says nothing and draws the same."""
    if "ipykernel" in sys.modules and _importable("ipywidgets"):  # the notebook extra
        from tqdm.auto import tqdm as auto

        return auto
    from tqdm.std import tqdm as text

    return text


def _importable(name: str) -> bool:
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def auto_progress() -> Progress | None:
    """The display for a run started from Python: a ``ProgressBar`` inside a Jupyter kernel or
    when standard error is a terminal, else none (a script whose output goes to a file)."""
    in_notebook = "ipykernel" in sys.modules
    return ProgressBar() if in_notebook or sys.stderr.isatty() else None


def _most_answers(algorithm: Algorithm, final: NDArray[np.bool_]) -> int | None:
    """The budget, or the answers so far plus what the per-worker bound leaves to the
    available workers not decided for good (and the answers in flight to the others),
    whichever is smaller; None without either."""
    bounds = [] if algorithm.budget is None else [algorithm.budget]
    cap = algorithm.max_questions_per_worker
    if cap is not None:
        counts, pending = algorithm.stats.count, algorithm.pending
        left = sum(
            max(cap - int(counts[arm]), 0) if open_ else int(pending[arm])
            for arm, open_ in enumerate(algorithm.available & ~final)
        )
        bounds.append(algorithm.n_answered + left)
    return min(bounds, default=None)


def _clock(seconds: float) -> str:
    """1.5s, 2m05s, 1h02m."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
