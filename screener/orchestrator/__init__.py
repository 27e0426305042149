"""The asyncio orchestrator, its progress display and the decisions it journals."""

from __future__ import annotations

from typing import TYPE_CHECKING

from screener._lazy import attach

if TYPE_CHECKING:  # the public names, each imported when first read (screener._lazy)
    from screener.orchestrator.decisions import DecisionSink as DecisionSink
    from screener.orchestrator.decisions import DecisionStream as DecisionStream
    from screener.orchestrator.decisions import decided_event as decided_event
    from screener.orchestrator.options import RunOptions as RunOptions
    from screener.orchestrator.progress import Progress as Progress
    from screener.orchestrator.progress import ProgressLine as ProgressLine
    from screener.orchestrator.runner import Orchestrator as Orchestrator

__all__ = [
    "DecisionSink",
    "DecisionStream",
    "Orchestrator",
    "Progress",
    "ProgressLine",
    "RunOptions",
    "decided_event",
]

__getattr__, __dir__ = attach(__name__, __file__, __all__)
