"""Issue 51: the first run finds the spammers, and every report says what it may have got
wrong: the mistakes its method expects or allows, and the tally by the truth where the truth
is known (a simulated pool), in the table, the JSON, the plan and the HTML page."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from stats_helpers import binomial_sf

import screener
from screener.algorithms import create_algorithm
from screener.cli.main import cli
from screener.reports.html import html_report
from screener.reports.mistakes import truth_tally
from screener.runs.settings import DEFAULT_ALGORITHM, DEFAULT_JOB

#: The crowd prior's cost mode, the default until issue 51: cheap, and often wrong.
COST_MODE = {"threshold": 0.6, "false_ban": 30, "missed_bad": 100, "contamination": 0.2,
             "pilot": 20}  # fmt: skip


def _demo_runs(
    algorithm: str, params: Mapping[str, object], seeds: range
) -> tuple[int, int, int, float]:
    """(spammers banned, spammers in all, good workers banned, questions a worker) over
    simulated runs of the demo pool, counted against its true accuracies."""
    pool = screener.demo_pool()
    assert pool.accuracies is not None
    bad = np.asarray(pool.accuracies) < 0.6
    caught = good_banned = questions = 0
    for seed in seeds:
        run = create_algorithm(algorithm, len(pool), {**params, "seed": seed})
        result = screener.simulate(run, screener.BernoulliRewards(pool.accuracies, seed=seed))
        tally = truth_tally(result, pool, "simulated")
        assert tally is not None
        caught += tally.bad_banned
        good_banned += tally.good_banned
        questions += result.total_pulls
    return caught, int(bad.sum()) * len(seeds), good_banned, questions / len(seeds) / len(pool)


@pytest.mark.slow
def test_the_default_job_bans_the_demo_spammers_and_no_good_worker() -> None:
    """The issue's targets on 200 seeds: at least 97% of the spammers banned (one-sided
    binomial test: a true catch rate of 95% would show this many with probability < 1%), at
    most 0.1 good workers banned a run on average (the same test against a rate of 0.1 / 28
    a good worker). Its price, 28 questions a worker, misses the issue's 12 (BENCHMARKS.md:
    the Bayes-optimal oracle that knows the crowd needs 13 for 97%)."""
    caught, spammers, good_banned, per_worker = _demo_runs(
        DEFAULT_ALGORITHM, dict(DEFAULT_JOB), range(200)
    )
    assert caught / spammers >= 0.97
    assert binomial_sf(caught, spammers, 0.95) < 0.01
    assert good_banned / 200 <= 0.1
    assert binomial_sf(good_banned, 200 * 28, 0.1 / 28) >= 0.01  # not above 0.1 a run
    assert per_worker < 35


def test_the_cost_mode_that_was_the_default_misses_spammers_and_bans_good_workers() -> None:
    """Why the default changed, kept as a check that the comparison still stands: the crowd
    prior's cost mode keeps about a third of the spammers and bans good workers."""
    caught, spammers, good_banned, _ = _demo_runs("crowd-prior", COST_MODE, range(40))
    assert caught / spammers < 0.9 and good_banned > 10


def _run(args: list[str], tmp_path: Path) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [*args, "--db", str(tmp_path / "s.db")])
    return result.exit_code, result.stdout


def test_the_default_run_reports_its_mistakes_expected_and_by_the_simulated_truth(
    tmp_path: Path,
) -> None:
    code, out = _run(["run"], tmp_path)
    assert code == 0, out
    assert "banned: w09, w20" in out
    assert "mistakes: at most a share 0.1 of each list in expectation" in out
    assert "mistakes made: by the simulated truth: 2 of 2 bad workers banned, 0 of 28 good" in out


def test_a_cost_mode_run_says_which_bans_are_bought_and_what_went_wrong(tmp_path: Path) -> None:
    """The guide's "your costs, your bar" line of old: a good worker banned costs a tenth of
    a bad one kept, so the rule bans workers it believes are above the bar, and says so."""
    pool = Path(__file__).resolve().parents[2] / "examples" / "pool30.csv"
    costs = ["-p", "false_ban=10", "-p", "missed_bad=300", "--threshold", "0.7"]
    code, out = _run(["run", str(pool), "-a", "crowd-prior", *costs, "--json"], tmp_path)
    assert code == 0, out
    data = json.loads(out)
    assert data["mistakes"]["expected"].startswith("expected ")
    truth = data["mistakes"]["by_truth"]
    assert truth["wrong"] == truth["good_banned"] + truth["bad_accepted"] > 0  # seed 0 errs
    reasons = [w["reason"] for w in data["workers"] if w["decision"] == "below"]
    bought = [r for r in reasons if "cheaper than asking again" in r]
    assert bought, reasons  # a ban of a worker more likely above the bar says it was bought
    assert all("more likely above the bar" in r for r in bought)


def test_error_modes_take_the_default_bar(tmp_path: Path) -> None:
    code, out = _run(["run", "--error", "bayes", "--json"], tmp_path)
    assert code in (0, 3), out
    assert json.loads(out)["params"]["threshold"] == 0.6


def test_the_plan_prices_the_default_in_mistakes_too(tmp_path: Path) -> None:
    code, out = _run(["plan", "--runs", "20", "--json"], tmp_path)
    assert code == 0, out
    mistakes = json.loads(out)["mistakes"]
    assert mistakes["bad_per_run"] == 2.0
    assert mistakes["false_bans_per_run"] <= 0.1 and mistakes["bad_banned_share"] >= 0.9
    code, text = _run(["plan", "--runs", "20"], tmp_path)
    assert "mistakes per run, by the simulated truth:" in text


def test_the_page_says_no_promise_held_where_its_truth_counts_mistakes(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    result = screener.run(screener.demo_pool(), algorithm="crowd-prior", params=COST_MODE, db=db)
    assert result.run_id is not None
    page = html_report(db, result.run_id, result)
    assert "The promise held" not in page and "the promise below holds" not in page
    assert "but by the simulated truth this run banned" in page
    assert "Mistakes made" in page and "Mistakes expected" in page
    right = screener.run(screener.demo_pool(), db=db)  # the default job, right on seed 0
    assert right.run_id is not None
    page = html_report(db, right.run_id, right)
    assert "The stopping condition was met: the promise below holds" in page
