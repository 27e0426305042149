"""The real-data benchmark: its quick mode on the shared datasets, its script form, and the
fair reading (the crowd prior built for the costs, the best rule, doing nothing, the oracle)
on hand-made scores."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks.limits import doing_nothing_cost, oracle_cost
from benchmarks.realdata import COSTS, Cell, Score, cost_key, cost_method, reading, summary

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.subprocess
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
    for row in ("toloka-rule:accept_after=20", cost_method(30, 1000), "accept-all", "ban-all"):
        assert f"| {row} " in done.stdout
    assert "## The fair reading over datasets" in done.stdout
    assert "crowd-prior built for the costs / the best rule after the fact" in done.stdout
    assert "crowd-prior built for the costs / doing nothing" in done.stdout


def _score(method: str, questions: float, cost: float) -> Score:
    costs = {cost_key(b, m): cost for b, m in COSTS}
    return Score(method, 10, 8, 2, questions, questions, 0.0, 0.0, math.nan, 0.0, 0.0, costs)


TRUTH = np.array([0.3, 0.5] + [0.9] * 8)  # two bad workers in ten at bar 0.6


def test_each_setting_reads_the_configuration_built_for_it() -> None:
    """A crowd-prior built for other costs is cheaper everywhere, and is never the one read;
    the rule is the cheapest configuration; nothing is the cheaper of the two trivial
    policies; the oracle is the limits module's."""
    others = [_score(cost_method(b, m), 1.0, 0.5) for b, m in COSTS if (b, m) != (30.0, 300.0)]
    scores = [
        _score("quiz:quiz_size=5", 5.0, 9.0),
        _score("toloka-rule:accept_after=10", 8.0, 7.0),
        _score(cost_method(30, 300), 3.0, 6.0),
        *[s for s in others if s.method != cost_method(30, 100)],
    ]
    cells = reading(scores, TRUTH, 0.6, cap=30)
    cell = cells[cost_key(30, 300)]
    assert (cell.ours, cell.ours_questions) == (6.0, 3.0)
    assert (cell.rule, cell.rule_method) == (7.0, "toloka-rule:accept_after=10")
    # accept everyone: 300 x 2/10 = 60; ban everyone: 30 x 8/10 = 24
    assert cell.nothing == pytest.approx(24.0) and cell.nothing_method == "ban-all"
    assert cell.oracle == pytest.approx(oracle_cost(TRUTH, 0.6, 30, 30.0, 300.0))
    assert cell.oracle <= doing_nothing_cost(TRUTH, 0.6, 30.0, 300.0)
    assert cells[cost_key(30, 100)].ours is None  # not in the run: no comparison, no stand-in


def _table(ours: float, rule: float, nothing: float, oracle: float) -> dict[str, object]:
    cell = Cell(ours, 3.0, rule, "quiz:quiz_size=5", nothing, "accept-all", oracle)
    return {"reading": {cost_key(b, m): vars(cell) for b, m in COSTS}}


def test_the_summary_counts_wins_against_the_rule_and_against_doing_nothing() -> None:
    tables = {
        "a|30+|0.6": _table(ours=5.0, rule=6.0, nothing=4.0, oracle=4.0),  # nothing unbeatable
        "b|30+|0.6": _table(ours=3.0, rule=6.0, nothing=4.0, oracle=2.0),  # ours beats both
        "c|30+|0.6": _table(ours=7.0, rule=6.0, nothing=8.0, oracle=2.0),  # the rule wins
    }
    (_, line) = summary(tables)
    cells = len(COSTS)
    assert "at every cost setting in 2/3 datasets" in line
    assert f"in {2 * cells}/{3 * cells} (dataset, cost) cells" in line
    nothing = (
        f"cheaper than doing nothing in {2 * cells}/{3 * cells} cells (the best rule: {cells})"
    )
    assert nothing in line
    assert f"any method can beat doing nothing (oracle) in {2 * cells}/{3 * cells} cells" in line
    assert "beats both doing nothing and the best rule wherever any method can in 1/3" in line


@pytest.mark.subprocess
def test_runs_as_a_script_from_the_checkout() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "realdata.py"), "--help"],
        cwd=ROOT.parent, capture_output=True, text=True, timeout=120, check=False,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "--quick" in done.stdout
