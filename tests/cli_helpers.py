"""What a finished `screener run` prints and exits with, checked together."""

from __future__ import annotations

import json

#: `run`'s exit code for a run that ended without its stopping condition (docs/reliability.md).
NOT_COMPLETED = 3


def assert_ran(code: int, stdout: str, stderr: str) -> None:
    """A run ended with its report: exit 0 when it completed, NOT_COMPLETED when the report
    says its condition was not met (JSON's condition_met, or the table's status line)."""
    assert code in (0, NOT_COMPLETED), stderr
    if stdout.lstrip().startswith("{"):
        data = json.loads(stdout)
        short = not data["condition_met"] and not data["extra"].get("fixed_budget")
    else:
        short = "CONDITION NOT MET" in stdout
    assert (code == NOT_COMPLETED) == short, (code, stdout[-500:])
