"""The reports: the ranked table (counts, notes, fitted to a width), JSON and CSV; statuses
that say what ended a run; a result's repr and notebook view."""

from __future__ import annotations

import asyncio
import csv
import dataclasses
import html
import io
import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from plan_helpers import make_plan

from screener import BernoulliRewards, RoundRobin, WeightedRoundRobin, simulate
from screener.algorithms import CrowdPrior, Decision, Result, StopReason, WorkerResult
from screener.algorithms.thresholding import LSA
from screener.algorithms.worker_result import WORKER_FIELDS
from screener.crowd import WorkerPool, synthetic_pool
from screener.reports import (
    decision_counts,
    describe_status,
    render_csv,
    render_json,
    render_table,
)
from screener.runs import run_state
from screener.runs.results import load_results
from screener.runs.session import start_run
from screener.simulation.recorded import RecordedRewards

POOL = synthetic_pool(8, 1, seed=5)


def _means() -> np.ndarray:
    return np.asarray(POOL.require_accuracies())


def test_a_given_bar_is_shown_as_given_and_long_shared_reasons_become_notes() -> None:
    result = simulate(LSA(len(POOL), threshold=0.8, budget=200), BernoulliRewards(_means(), 3))
    text = render_table(result, POOL)
    assert "threshold: 0.800 (given)" in text
    rows = [line for line in text.splitlines() if line[:4].strip().isdigit()]
    assert len(rows) == len(POOL)
    # Every worker has the same long reason: printed once, as note [1], under the table.
    reason = result.workers[0].reason
    assert len(reason) > 60 and all(w.reason == reason for w in result.workers)
    assert all(row.endswith("[1]") for row in rows)
    assert text.count(reason) == 1 and text.splitlines()[-1] == f"[1] {reason}"


def _line(arm: int, decision: Decision, reason: str, pulls: int = 10) -> WorkerResult:
    estimate = math.nan if pulls == 0 else 0.3 + 0.05 * arm
    return WorkerResult(
        arm, estimate, max(0.0, estimate - 0.1) if pulls else 0.0, 1.0, pulls, 0, decision,
        Decision.NORMAL if decision is Decision.UNDECIDED else decision, reason, arm + 1,
    )  # fmt: skip


def _result(lines: Sequence[WorkerResult], stop: StopReason | None = None) -> Result:
    """A result as the report sees it, with the reasons and decisions a test needs."""
    return Result(
        "wrr", {"k": 2.0, "delta": 0.1}, tuple(lines), stop, RoundRobin.guarantee,
        sum(w.pulls for w in lines), 0, 0,
    )  # fmt: skip


def _pool(names: list[str]) -> WorkerPool:
    return WorkerPool(tuple(names), None, "test")


SHORT_SHARED = "no answers yet"
LONG_UNIQUE = "a reason only this worker has, and long: " + "x" * 40
MIXED = _result(
    [
        _line(0, Decision.OUTLIER, "interval clear of the threshold's"),
        _line(1, Decision.OUTLIER, "interval clear of the threshold's"),
        _line(2, Decision.NORMAL, "unique and short"),
        _line(3, Decision.NORMAL, LONG_UNIQUE),
        _line(4, Decision.UNDECIDED, SHORT_SHARED, pulls=0),
        _line(5, Decision.UNDECIDED, SHORT_SHARED, pulls=0),
        _line(6, Decision.UNDECIDED, "unavailable: exhausted: no unseen gold question left"),
        _line(7, Decision.UNDECIDED, "unavailable: no answer to 5 questions in a row"),
    ],
    StopReason.WORKERS_EXHAUSTED,
)


def test_every_repeated_reason_is_a_note_and_unique_ones_stay_in_their_row() -> None:
    # Layout change (issue 14): a repeated reason is a note whatever its length (it was one
    # only past 60 characters), so that every algorithm's table stays narrow.
    text = render_table(MIXED, _pool([f"w{i}" for i in range(8)])).splitlines()
    rows = text[text.index(next(t for t in text if t.startswith("rank"))) + 1 :][:8]
    assert [row.rsplit("  ", 1)[1] for row in rows] == [
        "[1]", "[1]", "unique and short", LONG_UNIQUE, "[2]", "[2]",
        MIXED.workers[6].reason, MIXED.workers[7].reason,
    ]  # fmt: skip
    assert text[-2:] == ["[1] interval clear of the threshold's", f"[2] {SHORT_SHARED}"]


def test_counts_per_class_come_first_with_the_exhausted_and_unavailable() -> None:
    text = render_table(MIXED, _pool([f"w{i}" for i in range(8)])).splitlines()
    assert text[2].startswith("mistakes: ")  # what it may have got wrong, beside the status
    assert text[3] == "workers: 2 outlier, 2 normal, 4 undecided (1 exhausted, 1 unavailable)"
    assert decision_counts(MIXED) == {
        "outlier": 2, "normal": 2, "undecided": 4, "exhausted": 1, "unavailable": 1,
    }  # fmt: skip


def test_workers_that_ran_out_of_recorded_answers_are_counted_as_exhausted() -> None:
    rng = np.random.default_rng(0)
    records = [
        np.array([1.0, 0.0, 1.0]) if arm < 2 else (rng.random(400) < 0.8).astype(float)
        for arm in range(len(POOL))
    ]  # the first two workers run out after three answers, undecided
    model = RecordedRewards(POOL.workers, records, 0, replacement=False, shuffle=False)
    result = simulate(RoundRobin(len(POOL), interval="hoeffding", budget=600), model)
    out_of_answers = [w for w in result.workers if w.reason.startswith("unavailable: exhausted")]
    assert len(out_of_answers) == 2  # the case under test is present
    assert decision_counts(result).get("exhausted") == 2
    assert "(2 exhausted)" in render_table(result, POOL).splitlines()[3]


def test_a_narrow_terminal_gets_short_names_notes_and_no_interval_column() -> None:
    names = [f"worker-{i}-with-a-long-platform-id-{i:04d}" for i in range(8)]
    pool = _pool(names)
    wide = render_table(MIXED, pool)
    assert all(name in wide for name in names)
    for width in (80, 64):
        lines = render_table(MIXED, pool, width=width).splitlines()
        assert max(map(len, lines)) <= width, width
        header = next(line for line in lines if line.startswith("rank"))
        assert ("interval" in header) == (width == 80)
        rows = lines[lines.index(header) + 1 : lines.index(header) + 9]
        shown = [row.split()[1] for row in rows]
        assert all("…" in name for name in shown) and len(set(shown)) == len(names)
        assert all(name.endswith(f"{i:04d}") for i, name in enumerate(shown))
        assert rows[3].endswith("[3]")  # too long for its row: a note, wrapped to the width
        note = lines.index(next(line for line in lines if line.startswith("[3] ")))
        assert " ".join(part.strip() for part in lines[note : note + 2]) == f"[3] {LONG_UNIQUE}"


def test_only_and_limit_choose_the_rows_of_every_format() -> None:
    pool = _pool([f"w{i}" for i in range(8)])
    table = render_table(MIXED, pool, only="undecided", limit=3).splitlines()
    assert "listed: 3 of 8 workers (undecided only; the first 3 by rank)" in table
    header = table.index(next(t for t in table if t.startswith("rank")))
    assert [row.split()[1] for row in table[header + 1 : header + 4]] == ["w4", "w5", "w6"]
    assert table[header + 4] == ""
    data = render_json(MIXED, pool, only="decided", limit=3)
    assert [w["worker"] for w in data["workers"]] == ["w0", "w1", "w2"]
    rows = list(csv.DictReader(io.StringIO(render_csv(MIXED, pool, only="undecided"))))
    assert [row["worker"] for row in rows] == ["w4", "w5", "w6", "w7"]
    assert "no decided workers" in render_table(_result(MIXED.workers[4:]), pool, only="decided")


@pytest.mark.parametrize(
    ("params", "banned"),
    [
        ({"k": 2.0, "direction": "low"}, ["w0", "w1"]),  # spammers: the low outliers
        ({"k": 2.0, "direction": "high"}, None),  # a high outlier is not banned for it
        ({"k": 2.0}, None),  # nor is either side's
    ],
)
def test_the_headline_names_the_banned_where_the_question_bans(
    params: dict[str, float | str], banned: list[str] | None
) -> None:
    result, pool = dataclasses.replace(MIXED, params=params), _pool([f"w{i}" for i in range(8)])
    headline = [line for line in render_table(result, pool).splitlines() if ":" in line]
    named = [line for line in headline if line.startswith("banned:")]
    assert named == ([] if banned is None else [f"banned: {', '.join(banned)}"])
    # The outliers once: as the banned where the question bans them, else as outliers.
    assert ("outliers: w0, w1" in headline) == (banned is None)
    assert render_json(result, pool)["banned"] == banned


def test_csv_has_one_row_per_worker_under_a_header() -> None:
    algorithm = WeightedRoundRobin(len(POOL), k=1.5, delta=0.1, direction="low", budget=150)
    result = simulate(algorithm, BernoulliRewards(_means(), 2))
    text = render_csv(result, POOL)
    assert text.splitlines()[0] == (
        "rank,worker,decision,leaning,estimate,lower,upper,share,pulls,pending,score,reason"
    )
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == len(POOL)
    for row, w in zip(rows, result.ranking, strict=True):
        assert row["worker"] == POOL.workers[w.arm] and int(row["rank"]) == w.rank
        assert row["decision"] == w.decision.value and row["reason"] == w.reason
        assert float(row["estimate"]) == w.estimate and int(row["pulls"]) == w.pulls
        assert (float(row["lower"]), float(row["upper"])) == (w.lower, w.upper)
    unanswered = list(csv.DictReader(io.StringIO(render_csv(MIXED, _pool(list("abcdefgh"))))))
    assert unanswered[4]["estimate"] == "" and unanswered[4]["pulls"] == "0"


def test_an_estimated_threshold_is_shown_with_its_interval() -> None:
    algorithm = WeightedRoundRobin(len(POOL), k=1.5, delta=0.1, direction="low")
    result = simulate(algorithm, BernoulliRewards(_means(), 2))
    text = render_table(result, POOL)
    assert result.threshold is not None
    t = result.threshold
    assert f"threshold: {t.estimate:.3f}  interval [{t.lower:.3f}, {t.upper:.3f}]" in text
    assert "(given)" not in text


def test_a_run_stopped_by_the_per_worker_cap_says_so_not_workers_exhausted() -> None:
    means = [0.2, 0.35, 0.45, 0.65, 0.75, 0.9]
    result = simulate(CrowdPrior(6, threshold=0.5, max_answers=60), BernoulliRewards(means, 1))
    assert result.stop_reason is StopReason.WORKERS_EXHAUSTED  # the case under test
    stuck = [w for w in result.workers if w.decision is Decision.UNDECIDED]
    assert stuck and all(w.pulls == 60 for w in stuck)
    status = render_table(result, _pool(list("abcdef"))).splitlines()[1]
    assert status.startswith(
        f"status: CONDITION NOT MET (per-worker question cap reached: {len(stuck)} at the cap "
        "of 60 questions)"
    )
    assert "exhausted" not in status


def test_workers_out_of_questions_or_gone_are_told_apart_from_the_cap() -> None:
    assert MIXED.ending == (
        "workers exhausted: 1 out of gold questions, 1 left, 2 with nothing left to ask"
    )
    out = _result(MIXED.workers[6:7], StopReason.WORKERS_EXHAUSTED)
    assert out.ending == "workers out of gold questions: 1 out of gold questions"


def test_a_leavers_reason_says_unavailable_once() -> None:
    algorithm = CrowdPrior(3, threshold=0.6)
    algorithm.set_unavailable(0, "unavailable: worker left")  # as the reference service says
    algorithm.set_unavailable(1, "no answer to 5 questions in a row")
    reasons = {w.arm: w.reason for w in algorithm.result().workers}
    assert reasons[0] == "unavailable: worker left"
    assert reasons[1] == "unavailable: no answer to 5 questions in a row"


async def test_an_interrupted_runs_report_says_interrupted_not_still_running(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "runs.db")
    plan = make_plan(synthetic_pool(20, 2, seed=1), "wrr", seed=1,
                     oracle_options={"latency": "constant:0.01"})  # fmt: skip
    task = asyncio.create_task(start_run(plan, db))
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    record, result, _ = load_results(db)
    assert result.stop_reason is None and result.total_pulls > 0  # stopped mid-run
    state = run_state(db, record.id)
    assert state == "interrupted"
    text = render_table(result, plan.pool, record.id, state=state)
    assert "status: interrupted (screener run --resume continues it) before its stopping " \
        "condition" in text and "still running" not in text  # fmt: skip
    assert render_json(result, plan.pool, state=state)["status"] == describe_status(result, state)
    assert "not finished" in describe_status(result)  # a live result, no stored state


def test_a_results_repr_is_short_and_its_notebook_view_shows_the_first_rows() -> None:
    pool = synthetic_pool(1000, 10, seed=1)
    algorithm = CrowdPrior(len(pool), threshold=0.6, max_answers=5)
    result = simulate(algorithm, BernoulliRewards(pool.require_accuracies(), 1)).named(pool.workers)
    text = repr(result)
    banned = [result.name(arm) for arm in result.banned]
    lead = f"banned {banned[0]}" if banned else "1,000 workers ("  # the bans come first
    assert text.startswith(f"<Result crowd-prior: {lead}") and len(text) < 200
    assert "1,000 workers (" in text
    page = result._repr_html_()
    assert page.count("<tr>") == 1 + 10 and "990 more" in page
    assert html.escape(result.ranking[0].reason) in page and html.escape(result.status()) in page


def test_every_data_frame_column_is_documented() -> None:
    result = simulate(LSA(len(POOL), threshold=0.8, budget=200), BernoulliRewards(_means(), 3))
    frame = result.named(POOL.workers).to_dataframe()
    assert [frame.index.name, *frame.columns] == list(WORKER_FIELDS)
    doc = Result.to_dataframe.__doc__ or ""
    for column in WORKER_FIELDS:
        assert f"- {column}" in doc, column


def test_an_algorithms_warnings_stand_under_the_status_above_the_decisions() -> None:
    """A crowd-prior run whose crowd failed the prior's check: the warning is shown whether
    or not the stopping condition held (the status line hides the promise when it did not)."""
    warned = replace(MIXED, extra={"warnings": ["THE CROWD DOES NOT FIT THE PRIOR: ..."]})
    lines = render_table(warned, _pool([f"w{i}" for i in range(8)])).splitlines()
    assert lines[1].startswith("status: CONDITION NOT MET")
    assert lines[2] == "warning: THE CROWD DOES NOT FIT THE PRIOR: ..."
    assert not any(line.startswith("warning") for line in render_table(MIXED, _pool(
        [f"w{i}" for i in range(8)])).splitlines())  # fmt: skip
