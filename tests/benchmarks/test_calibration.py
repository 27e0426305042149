"""Smoke test of the crowd prior's calibration benchmark on two shared datasets."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

#: Real processes (the screener command, a browser, ...): the full suite only.
pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("SCREENER_DATA"), reason="SCREENER_DATA is not set")
def test_calibration_prints_claimed_and_realised_shares() -> None:
    name = "calibration-smoke-test"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.calibration", "--seeds", "2", "--name", name,
         "--datasets", "EBCC_CTI_s4_Relevance", "Zheng_d_jn-product", "--methods", "crowd-prior"],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    written = ROOT / "benchmarks" / "results" / f"{name}.json"
    try:
        assert done.returncode == 0, done.stderr[-2000:]
        rows = json.loads(written.read_text(encoding="utf-8"))["rows"]
    finally:
        written.unlink(missing_ok=True)
    assert {(r["dataset"], r["mode"]) for r in rows} == {
        (d, m)
        for d in ("EBCC_CTI_s4_Relevance", "Zheng_d_jn-product")
        for m in ("simulated", "replay")
    }
    for row in rows:  # both datasets ban workers in every run; claims are posterior sums <= q
        assert row["bans_per_run"] > 0
        assert 0.0 < row["claimed_wrong_ban_share"] <= 0.1
        assert 0.0 <= row["wrong_ban_share"] <= 1.0
    assert "crowd-prior, replay crowds: wrong-ban share <= q + 0.05" in done.stdout
