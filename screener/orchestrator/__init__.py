"""The asyncio orchestrator and its progress display."""

from screener.orchestrator.progress import Progress, ProgressLine
from screener.orchestrator.runner import Orchestrator, RunOptions

__all__ = ["Orchestrator", "Progress", "ProgressLine", "RunOptions"]
