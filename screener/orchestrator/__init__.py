"""The asyncio orchestrator, its progress display and journal replay."""

from screener.orchestrator.progress import Progress, ProgressLine
from screener.orchestrator.replay import pending_pulls, replay
from screener.orchestrator.runner import Orchestrator, RunOptions

__all__ = ["Orchestrator", "Progress", "ProgressLine", "RunOptions", "pending_pulls", "replay"]
