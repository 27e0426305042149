"""The asyncio orchestrator, its progress display and the decisions it journals."""

from screener.orchestrator.decisions import DecisionSink, DecisionStream, decided_event
from screener.orchestrator.progress import Progress, ProgressLine
from screener.orchestrator.runner import Orchestrator, RunOptions

__all__ = [
    "DecisionSink",
    "DecisionStream",
    "Orchestrator",
    "Progress",
    "ProgressLine",
    "RunOptions",
    "decided_event",
]
