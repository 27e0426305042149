"""SIGTERM (systemd, docker stop, `timeout`) ends a command as Ctrl-C does: a run journals
"interrupted: terminated" and prints the command that resumes it, and the command exits
with 143 (128 + SIGTERM) instead of dying without a word."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Coroutine, Iterator
from types import FrameType
from typing import Any, TypeVar

__all__ = ["Terminated", "run_until_terminated", "terminate_like_interrupt"]

T = TypeVar("T")


class Terminated(KeyboardInterrupt):
    """The process was asked to terminate (SIGTERM): a kind of interruption, so whatever
    cleans up after Ctrl-C cleans up after it too."""


class _Cancelled(Exception):
    """Raised out of the run's task when SIGTERM cancelled it (Terminated, a
    KeyboardInterrupt, would stop the event loop halfway through its cleanup)."""


@contextlib.contextmanager
def terminate_like_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises Terminated where the program is (as SIGINT raises
    KeyboardInterrupt); the previous handler is put back after."""

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        raise Terminated

    try:
        previous = signal.signal(signal.SIGTERM, on_sigterm)
    except ValueError:  # not the main thread: leave signals to whoever owns them
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_until_terminated(work: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(work)``; SIGTERM cancels it with the message TERMINATED (so that a run
    journals why it stopped) and raises Terminated once the loop is closed."""
    try:
        return asyncio.run(_terminable(work))
    except _Cancelled:
        raise Terminated from None


async def _terminable(work: Coroutine[Any, Any, T]) -> T:
    from screener.runs.stops import TERMINATED  # the journal's stops: loaded with a run only

    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    asked: list[bool] = []

    def on_sigterm() -> None:
        asked.append(True)
        task.cancel(TERMINATED)

    previous = signal.getsignal(signal.SIGTERM)
    try:
        loop.add_signal_handler(signal.SIGTERM, on_sigterm)
    except (NotImplementedError, RuntimeError, ValueError):  # no signals in this thread
        return await work
    try:
        return await work
    except asyncio.CancelledError:
        if asked:
            raise _Cancelled from None
        raise
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
