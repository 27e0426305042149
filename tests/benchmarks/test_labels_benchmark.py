"""The final-labels benchmark: its curve readings on hand-made points, its calibration deciles,
and its command on a real dataset."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.labels import _accuracy_at, _calibration, _money_to_reach, _pipelines

ROOT = Path(__file__).resolve().parents[2]


def test_money_to_reach_interpolates_between_the_points_that_bracket_the_target() -> None:
    curve = [(50.0, 0.80), (70.0, 0.90), (100.0, 0.95)]
    assert _money_to_reach(curve, 0.85) == pytest.approx(60.0)
    assert _money_to_reach(curve, 0.70) == pytest.approx(50.0)  # the cheapest point does
    assert _money_to_reach(curve, 0.99) is None


def test_accuracy_at_a_money_outside_the_curve_is_not_read() -> None:
    curve = [(50.0, 0.80), (70.0, 0.90)]
    assert _accuracy_at(curve, 60.0) == pytest.approx(0.85)
    assert math.isnan(_accuracy_at(curve, 80.0))


def test_each_pipeline_is_read_against_no_screening_dataset_by_dataset() -> None:
    points = {
        ("a", "none"): (100.0, 0.80), ("b", "none"): (100.0, 0.90),
        ("a", "items-0.8"): (50.0, 0.78), ("a", "items-0.9"): (70.0, 0.84),
        ("a", "items-0.95"): (90.0, 0.86),
        ("b", "items-0.8"): (60.0, 0.85), ("b", "items-0.9"): (80.0, 0.88),
        ("b", "items-0.95"): (95.0, 0.89),
    }  # fmt: skip
    rows = {r["pipeline"]: r for r in _pipelines(points)}
    assert rows["none"]["money_ratio"] == pytest.approx(1.0)
    curve = rows["items 0.8-0.95"]
    assert curve["reaches"] == 1  # b's curve never reaches 0.90
    assert curve["reach_money"] == pytest.approx(0.50 + 0.2 * 0.02 / 0.06)
    assert math.isnan(curve["accuracy_at_none_money"])  # none's money is past both curves
    one = rows["items-0.95"]
    assert one["money_ratio"] == pytest.approx(math.sqrt(0.90 * 0.95))
    assert one["accuracy_gain"] == pytest.approx((0.06 - 0.01) / 2)


def _calibrated_row(pairs: list[tuple[float, bool]]) -> dict[str, Any]:
    return {"run": "items-0.95", "adversary": "", "calibration": [list(p) for p in pairs]}


def test_calibration_deciles_compare_the_stated_and_the_realised_wrong_share() -> None:
    pairs = [(0.95, True)] * 9 + [(0.95, False)] + [(0.85, True)] * 3 + [(0.85, False)]
    table = {r["decile"]: r for r in _calibration([_calibrated_row(pairs)], "items-0.95", "")}
    assert table[0.9]["items"] == 10 and table[0.9]["wrong"] == pytest.approx(0.1)
    assert table[0.9]["stated_wrong"] == pytest.approx(0.05)
    assert table[0.8]["wrong"] == pytest.approx(0.25)


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("SCREENER_DATA"), reason="SCREENER_DATA is not set")
def test_quick_mode_on_one_dataset_prints_the_pipelines(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.labels", "--quick", "--seeds", "1",
         "--datasets", "EBCC_ACT_SP_amt"],
        cwd=ROOT, capture_output=True, text=True, timeout=900, check=False,
        env={**os.environ, "SCREENER_RESULTS": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "labels-quick.json").is_file()
    for pipeline in ("none", "none+DS", "toloka-10+DS", "oracle-limit", "items-0.95"):
        assert f"| {pipeline} " in done.stdout
    assert "### items-0.95 collude-20" in done.stdout
