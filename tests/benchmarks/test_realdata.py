"""Smoke test of the real-data benchmark: its quick mode runs on the shared datasets."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("SCREENER_DATA"), reason="SCREENER_DATA is not set")
def test_quick_mode_prints_every_table() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.realdata", "--quick", "--no-plots", "--seeds", "2",
         "--datasets", "EBCC_ACT_SP", "Zheng_s4_Dog"],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    for dataset in ("EBCC_ACT_SP", "Zheng_s4_Dog"):
        assert f"### {dataset}, 30+ answers, bar 0.600" in done.stdout
    assert "toloka-rule:accept_after=20" in done.stdout
    assert "crowd-prior" in done.stdout
    assert "## Targets over datasets" in done.stdout
    assert "cheapest screener method / cheapest rule" in done.stdout
