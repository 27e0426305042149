"""The platforms' static rules (Toloka's control-task rule, Appen's quiz mode): hand-worked
answer sequences, the ask/tell contract, and real CLI runs with every oracle."""

from __future__ import annotations

import csv
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_helpers import assert_ran
from service_helpers import reference_service, write_pool_and_bank

from screener.algorithms import (
    ALGORITHMS,
    AskState,
    Decision,
    PlatformRule,
    Quiz,
    Result,
    StopReason,
    TellOutcome,
    TolokaRule,
    WorkerResult,
)
from screener.crowd import synthetic_pool
from screener.errors import ConfigError
from screener.simulation import BernoulliRewards, simulate
from screener.simulation.recorded import EXHAUSTED_RECORDS, RecordedRewards

Answers = Sequence[float]


def run_on(alg: PlatformRule, answers: Sequence[Answers], batch: int | None = None) -> Result:
    """Run ``alg`` to the end; worker i's j-th question gets ``answers[i][j]`` (then it is
    exhausted)."""
    workers = [f"w{i}" for i in range(len(answers))]
    rewards = RecordedRewards(workers, answers, replacement=False, shuffle=False)
    return simulate(alg, rewards, batch=batch)


def line(result: Result, arm: int) -> WorkerResult:
    return next(w for w in result.workers if w.arm == arm)


def assert_decided(result: Result, arm: int, decision: Decision, at: int, words: str) -> None:
    """Worker ``arm`` was decided on exactly its ``at``-th answer and asked nothing more."""
    w = line(result, arm)
    assert (w.decision, w.leaning, w.pulls, w.pending) == (decision, decision, at, 0), w
    assert words in w.reason


# ------------------------------------------------------------ toloka-rule, by hand
def test_toloka_bans_on_the_third_answer_when_one_of_three_is_right() -> None:
    result = run_on(TolokaRule(1), [[1, 0, 0] + [1] * 30])
    assert result.stop_reason is StopReason.CONDITION_MET
    assert_decided(
        result, 0, Decision.BELOW, 3,
        "banned: 1 of the last 3 answers correct (33.33% < 60%) at answer 3",
    )  # fmt: skip


def test_toloka_waits_for_min_answers_even_when_all_are_wrong() -> None:
    alg = TolokaRule(2)
    for _ in range(2):  # answers 1 and 2 of worker 0 are wrong: no decision yet
        ask = alg.ask(2)
        alg.tell_many(ask.ids, [0.0 if arm == 0 else 1.0 for arm in ask.arms.tolist()])
        assert line(alg.result(), 0).decision is Decision.UNDECIDED
    ask = alg.ask(2)
    assert ask.arms.tolist() == [0, 1]
    alg.tell_many(ask.ids, [0.0, 1.0])
    assert line(alg.result(), 0).decision is Decision.BELOW
    # The banned worker gets no further question; worker 1 (three right) surely needs three
    # more (all wrong, 3 of 6 = 50% < 60% is the first possible ban), so a window of 5 gets
    # those (issue 19 item 4; it used to get one: one question in flight per worker).
    assert alg.ask(5).arms.tolist() == [1, 1, 1]
    # With min_answers = 4 the same three wrong answers decide nothing.
    late = run_on(TolokaRule(1, min_answers=4), [[0, 0, 0, 0, 1]])
    assert_decided(late, 0, Decision.BELOW, 4, "0 of the last 4 answers correct")


def test_toloka_two_of_four_is_a_ban_at_the_fourth_answer() -> None:
    # 1, 1, 0: 2/3 = 66.7% >= 60% (kept); 1, 1, 0, 0: 2/4 = 50% < 60%.
    result = run_on(TolokaRule(1), [[1, 1, 0, 0, 1, 1, 1]])
    assert_decided(result, 0, Decision.BELOW, 4, "2 of the last 4 answers correct (50% < 60%)")


def test_toloka_window_of_ten_fires_on_the_fifteenth_answer() -> None:
    # Ten right, then wrong: after answer 10 + k the window holds 10 - k right answers, and
    # (10 - k) / 10 < 0.6 first at k = 5. Over all 15 answers the share is 10/15 = 66.7%:
    # only the window bans, and the result says so (leaning BELOW, estimate above the bar).
    result = run_on(TolokaRule(1), [[1] * 10 + [0] * 10])
    assert_decided(
        result, 0, Decision.BELOW, 15,
        "banned: 5 of the last 10 answers correct (50% < 60%) at answer 15",
    )  # fmt: skip
    assert line(result, 0).estimate == pytest.approx(10 / 15)


def test_toloka_old_wrong_answers_leave_the_window() -> None:
    # 0, 1, 1, 1, 0, 0: at answer 6 all six give 3/6 = 50% (a ban), the last five give
    # 3/5 = 60% (no ban: the first wrong answer has left a window of five).
    sequence = [[0, 1, 1, 1, 0, 0]]
    kept = run_on(TolokaRule(1, window=5, accept_after=6), sequence)
    assert_decided(kept, 0, Decision.ABOVE, 6, "accepted: 6 answers without a ban")
    banned = run_on(TolokaRule(1, window=6, accept_after=6), sequence)
    assert_decided(banned, 0, Decision.BELOW, 6, "3 of the last 6 answers correct (50% < 60%)")


def test_toloka_accepts_at_exactly_twenty_answers_unless_the_twentieth_bans() -> None:
    # Worker 1: 15 right then 5 wrong: the window at answer 20 holds 5 of 10 (a ban beats
    # the acceptance on the same answer); at answer 19 it held 6 of 10 (60%, kept).
    result = run_on(TolokaRule(2), [[1] * 40, [1] * 15 + [0] * 25])
    assert_decided(result, 0, Decision.ABOVE, 20, "accepted: 20 answers without a ban")
    assert_decided(result, 1, Decision.BELOW, 20, "5 of the last 10 answers correct")
    assert result.total_pulls == 40 and result.condition_met


def test_toloka_graded_rewards_count_as_their_value() -> None:
    # 0.5 + 0.5 + 0.9 = 1.9 of 3 (63.3%, kept); 0.5 + 0.5 + 0.7 = 1.7 of 3 (56.7%, banned).
    result = run_on(TolokaRule(2, accept_after=3), [[0.5, 0.5, 0.9], [0.5, 0.5, 0.7]])
    assert_decided(result, 0, Decision.ABOVE, 3, "accepted")
    assert_decided(result, 1, Decision.BELOW, 3, "1.7 of the last 3 answers correct (56.67%")


# ------------------------------------------------------------ quiz, by hand
def test_quiz_passes_at_the_bar_and_fails_below_it_at_exactly_q() -> None:
    # 7 of 10 = 70% >= 70%: pass; 6 of 10: fail. All wrong: graded at 10, not earlier.
    answers = [[1] * 7 + [0] * 3 + [1] * 5, [1] * 6 + [0] * 9, [0] * 15]
    result = run_on(Quiz(3), answers)
    assert result.condition_met
    assert_decided(result, 0, Decision.ABOVE, 10, "passed the quiz: 7 of 10 correct (70% >= 70%)")
    assert_decided(result, 1, Decision.BELOW, 10, "failed the quiz: 6 of 10 correct (60% < 70%)")
    assert_decided(result, 2, Decision.BELOW, 10, "failed the quiz: 0 of 10 correct")


def test_quiz_removes_on_the_hidden_question_that_drops_the_running_accuracy() -> None:
    # Quiz 8 of 10 (pass); hidden 1 wrong: 8/11 = 72.7% (kept); hidden 2 wrong: 8/12 = 66.7%.
    result = run_on(Quiz(2, hidden=5), [[1] * 8 + [0] * 6, [1] * 20])
    assert_decided(
        result, 0, Decision.BELOW, 12,
        "removed at answer 12 (hidden question 2 of 5): 8 of 12 correct (66.67% < 70%)",
    )  # fmt: skip
    assert_decided(
        result, 1, Decision.ABOVE, 15,
        "passed the quiz and 5 hidden questions: 15 of 15 correct (100% >= 70%)",
    )  # fmt: skip


def test_quiz_fail_is_final_even_with_hidden_questions_left() -> None:
    result = run_on(Quiz(1, quiz_size=4, hidden=3, threshold=0.5), [[0, 1, 0, 0, 1, 1, 1]])
    assert_decided(result, 0, Decision.BELOW, 4, "failed the quiz: 1 of 4 correct (25% < 50%)")


# ------------------------------------------------------------ scheduling and contract
def test_one_question_in_flight_per_worker_round_robin() -> None:
    # min_answers=1: a ban is possible on every next answer, so one question in flight per
    # worker is all that is surely needed (the default, 3, fills further: test_concurrency).
    alg = TolokaRule(3, min_answers=1)
    first = alg.ask(10)
    assert first.arms.tolist() == [0, 1, 2] and first.seqs.tolist() == [0, 0, 0]
    assert alg.ask(1).state is AskState.WAIT
    alg.tell(int(first.ids[1]), 1.0)
    again = alg.ask(10)
    assert again.arms.tolist() == [1] and again.seqs.tolist() == [1]
    alg.tell_many(np.concatenate([first.ids[[0, 2]], again.ids]), [1.0, 1.0, 1.0])
    # Fewest answered first: workers 0 and 2 have one answer, worker 1 two.
    assert alg.ask(2).arms.tolist() == [0, 2]


def _make(name: str, n: int, **params: Any) -> PlatformRule:
    if name == "quiz":
        return Quiz(n, quiz_size=6, hidden=4, **params)
    return TolokaRule(n, window=5, accept_after=12, **params)


def test_duplicate_answer_is_a_no_op() -> None:
    alg = TolokaRule(2)
    ask = alg.ask(2)
    assert alg.tell(int(ask.ids[0]), 0.0) is TellOutcome.ACCEPTED
    before = alg.result()
    assert alg.tell(int(ask.ids[0]), 1.0) is TellOutcome.DUPLICATE
    assert alg.result() == before and alg.stats.count.tolist() == [1, 0]


def test_a_released_pull_is_asked_again_of_the_same_worker() -> None:
    alg = Quiz(3, quiz_size=1)  # graded on the first answer: one question surely needed
    ask = alg.ask(3)
    assert alg.release(int(ask.ids[1]))
    again = alg.ask(3)
    assert again.arms.tolist() == [1] and again.seqs.tolist() == [0]
    assert alg.ask(1).state is AskState.WAIT


def test_an_unavailable_worker_is_undecided_leaning_above_with_the_reason() -> None:
    alg = TolokaRule(2)
    for _ in range(2):
        ask = alg.ask(2)
        alg.tell_many(ask.ids, [1.0, 1.0])
    alg.set_unavailable(0, "left the platform")
    result = run_on(alg, [[1.0] * 30, [1.0] * 30])
    assert result.stop_reason is StopReason.WORKERS_EXHAUSTED and not result.condition_met
    gone = line(result, 0)
    assert (gone.decision, gone.leaning, gone.pulls) == (Decision.UNDECIDED, Decision.ABOVE, 2)
    assert "left the platform" in gone.reason and "undecided after 2 answers" in gone.reason
    assert_decided(result, 1, Decision.ABOVE, 20, "accepted")


def test_exhausted_records_leave_the_worker_undecided() -> None:
    result = run_on(Quiz(2), [[1] * 4, [1] * 10])
    short = line(result, 0)
    assert (short.decision, short.leaning, short.pulls) == (Decision.UNDECIDED, Decision.ABOVE, 4)
    assert EXHAUSTED_RECORDS in short.reason
    assert result.stop_reason is StopReason.WORKERS_EXHAUSTED


def test_a_budget_stops_the_run_and_says_so() -> None:
    result = run_on(TolokaRule(3, budget=7), [[1] * 30] * 3)
    assert result.stop_reason is StopReason.BUDGET_SPENT and result.total_pulls == 7
    assert [line(result, arm).pulls for arm in range(3)] == [3, 2, 2]
    assert all("(budget spent)" in w.reason for w in result.workers)
    assert {w.decision for w in result.workers} == {Decision.UNDECIDED}


@pytest.mark.parametrize("cls", [TolokaRule, Quiz], ids=lambda c: c.name)
def test_params_rebuild_the_same_algorithm(cls: type[PlatformRule]) -> None:
    original = cls(9, threshold=0.75, budget=500, seed=3)
    rebuilt = cls(9, **original.params())
    assert rebuilt.params() == original.params()
    means = np.linspace(0.4, 0.95, 9)
    first = simulate(original, BernoulliRewards(means, seed=5), batch=4)
    second = simulate(rebuilt, BernoulliRewards(means, seed=5), batch=4)
    assert first.to_dict() == second.to_dict()
    assert ALGORITHMS[cls.name] is cls


@pytest.mark.parametrize("name", ["toloka-rule", "quiz"])
def test_replaying_the_same_answers_in_other_batches_gives_the_same_result(name: str) -> None:
    """Decisions depend on each worker's own answer order only, not on the interleaving."""
    rng = np.random.default_rng(11)
    answers = [(rng.random(40) < p).astype(float) for p in np.linspace(0.3, 0.95, 10)]
    results = [run_on(_make(name, 10), answers, batch=b).to_dict() for b in (1, 3, None)]
    assert results[0] == results[1] == results[2]
    decided = [w for w in results[0]["workers"] if w["decision"] != "undecided"]
    assert len(decided) == 10


def test_the_result_carries_the_bar_and_says_there_is_no_guarantee() -> None:
    result = run_on(Quiz(2, threshold=0.8), [[1] * 10, [0] * 10])
    assert result.threshold is not None and result.threshold.estimate == 0.8
    assert result.extra == {"threshold": 0.8, "fixed_budget": False, "max_questions_per_worker": 10}
    for cls in (TolokaRule, Quiz):
        assert cls.guarantee is not None and "no statistical guarantee" in cls.guarantee
    assert result.guarantee == Quiz.guarantee


BAD: list[tuple[type[PlatformRule], dict[str, Any], str]] = [
    (TolokaRule, {"window": 0}, "window must be a whole number >= 1, got 0"),
    (TolokaRule, {"window": 2.5}, "window must be a whole number"),
    (TolokaRule, {"window": True}, "window must be a whole number"),
    (TolokaRule, {"min_answers": 0}, "min_answers must be a whole number >= 1"),
    (TolokaRule, {"min_answers": 11}, r"min_answers \(11\) must not exceed window \(10\)"),
    (TolokaRule, {"accept_after": 2}, "accept_after must be a whole number >= 3"),
    (TolokaRule, {"threshold": 1.2}, "threshold must lie"),
    (Quiz, {"quiz_size": 0}, "quiz_size must be a whole number >= 1"),
    (Quiz, {"quiz_size": "10"}, "quiz_size must be a whole number"),
    (Quiz, {"hidden": -1}, "hidden must be a whole number >= 0"),
    (Quiz, {"hidden": False}, "hidden must be a whole number"),
]


@pytest.mark.parametrize(("cls", "params", "words"), BAD)
def test_bad_parameters_are_config_errors(
    cls: type[PlatformRule], params: dict[str, Any], words: str
) -> None:
    with pytest.raises(ConfigError, match=words):
        cls(4, **params)


# ------------------------------------------------------------ the CLI, every oracle
def screener(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "screener", *args],
        capture_output=True, text=True, timeout=300, cwd=cwd, env=env,
    )  # fmt: skip


def report_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The JSON a command printed; a run's exit code agrees with its condition."""
    if done.args[3] == "run":
        assert_ran(done.returncode, done.stdout, done.stderr)
    else:
        assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def by_worker(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {w["worker"]: w for w in report["workers"]}


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("args", "most"), [(["-a", "toloka-rule", "--threshold", "0.6"], 20),
                       (["-a", "quiz", "-p", "hidden=5"], 15)],
)  # fmt: skip
def test_cli_simulated_runs_decide_every_worker(tmp_path: Path, args: list[str], most: int) -> None:
    run = ("run", "--workers", "12", "--outliers", "2", "--seed", "5", *args)
    report = report_of(screener(*run, "--json", cwd=tmp_path))
    assert report["condition_met"] and "no statistical guarantee" in report["guarantee"]
    assert all(w["decision"] in ("above", "below") for w in report["workers"])
    assert all(0 < w["pulls"] <= most for w in report["workers"])
    # The two spammers (accuracy ~0.5, synthetic_pool(12, 2, seed=5)) are both put out.
    pool = synthetic_pool(12, 2, seed=5)
    spammers = [w for w, p in zip(pool.workers, pool.require_accuracies(), strict=True) if p < 0.6]
    assert all(by_worker(report)[w]["decision"] == "below" for w in spammers)
    text = screener(*run, "--db", "text.db", cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert "status: stopping condition met: no statistical guarantee" in text.stdout
    assert "delta" not in text.stdout.split("status:")[1].splitlines()[0]


def _write_answers(path: Path, answers: dict[str, list[int]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["worker", "item", "answer", "gold"])
        for worker, rewards in answers.items():
            for j, reward in enumerate(rewards):
                writer.writerow([worker, f"q{j}", "yes" if reward else "no", "yes"])


@pytest.mark.subprocess
def test_cli_dataset_replay_decides_on_the_hand_worked_answers(tmp_path: Path) -> None:
    _write_answers(tmp_path / "answers.csv", {
        "ann": [1, 0, 0] + [1] * 10,  # toloka: banned at 3; quiz: 8 of 10, pass
        "bob": [1] * 25,  # accepted at 20; quiz: pass at 10
        "cat": [1] * 10 + [0] * 10,  # banned at 15; quiz: pass at 10 (10 of 10)
        "dan": [1] * 5,  # exhausted after 5: undecided, leaning above
        "eve": [1] * 6 + [0] * 8,  # answers 2-11 hold 5 right: banned at 11; quiz 6 of 10
    })  # fmt: skip
    source = ["--oracle", "dataset", "-O", "path=answers.csv", "-O", "replacement=false",
              "-O", "shuffle=false", "--quiet", "--json"]  # fmt: skip
    toloka = report_of(screener("run", *source, "-a", "toloka-rule", "--threshold", "0.6",
                                cwd=tmp_path))  # fmt: skip
    lines = by_worker(toloka)
    expected = {"ann": ("below", 3), "bob": ("above", 20), "cat": ("below", 15),
                "dan": ("undecided", 5), "eve": ("below", 11)}  # fmt: skip
    assert {w: (v["decision"], v["pulls"]) for w, v in lines.items()} == expected
    assert lines["cat"]["reason"] == "banned: 5 of the last 10 answers correct (50% < 60%) " \
        "at answer 15"  # fmt: skip
    assert lines["dan"]["leaning"] == "above" and "exhausted" in lines["dan"]["reason"]
    assert toloka["stop_reason"] == "workers exhausted"
    quiz = report_of(screener("run", *source, "-a", "quiz", "--db", "quiz.db", cwd=tmp_path))
    decisions = {w: (v["decision"], v["pulls"]) for w, v in by_worker(quiz).items()}
    assert decisions == {"ann": ("above", 10), "bob": ("above", 10), "cat": ("above", 10),
                         "dan": ("undecided", 5), "eve": ("below", 10)}  # fmt: skip


def _logged_answers(db: Path, run_id: str, workers: Sequence[str]) -> list[list[float]]:
    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "SELECT worker, reward FROM events WHERE run_id = ? AND kind = 'answered' "
            "ORDER BY id", (run_id,),
        ).fetchall()  # fmt: skip
    per_worker: dict[str, list[float]] = {w: [] for w in workers}
    for worker, reward in rows:
        per_worker[worker].append(float(reward))
    return [per_worker[w] for w in workers]


@pytest.mark.subprocess
def test_cli_log_replay_with_quiz_matches_the_rule_on_the_logged_answers(tmp_path: Path) -> None:
    first = report_of(screener("run", "--workers", "10", "--outliers", "2", "-a", "rr",
                               "--budget", "300", "--seed", "3", "--quiet", "--json",
                               cwd=tmp_path))  # fmt: skip
    run_id = first["run_id"]
    both = report_of(screener("replay", run_id, "-a", "quiz", "-p", "hidden=3", "--json",
                              cwd=tmp_path))  # fmt: skip
    replay = both["replay"]
    assert replay["algorithm"] == "quiz" and both["original"]["run_id"] == run_id
    workers = [w["worker"] for w in sorted(first["workers"], key=lambda w: w["arm"])]
    logged = _logged_answers(tmp_path / "screener.db", run_id, workers)
    expected = run_on(Quiz(len(workers), hidden=3), logged)
    got = by_worker(replay)
    for arm, worker in enumerate(workers):
        want = line(expected, arm)
        assert (got[worker]["decision"], got[worker]["pulls"]) == (want.decision, want.pulls)
        assert got[worker]["reason"] == want.reason
    assert replay["condition_met"] == expected.condition_met
    assert {"above", "below"} <= {w["decision"] for w in replay["workers"]}


TOKEN = "platform-rules-test-token"


@pytest.fixture
def service(tmp_path: Path) -> Iterator[str]:
    pool = synthetic_pool(8, 1, seed=3)
    write_pool_and_bank(tmp_path, pool, 200)
    with reference_service(tmp_path, TOKEN) as url:
        yield url


@pytest.mark.subprocess
def test_cli_live_run_of_toloka_rule_against_the_reference_service(
    tmp_path: Path, service: str
) -> None:
    env = {**os.environ, "SCREENER_TOKEN": TOKEN}
    report = report_of(screener("run", "workers.csv", "--questions", "questions.csv",
                                "--oracle", "http", "-O", f"url={service}", "-a", "toloka-rule",
                                "--threshold", "0.6", "--quiet", "--json", cwd=tmp_path,
                                env=env))  # fmt: skip
    assert report["condition_met"]
    assert all(w["decision"] in ("above", "below") for w in report["workers"])
    assert all(w["pulls"] <= 20 for w in report["workers"])
    with sqlite3.connect(tmp_path / "screener.db") as connection:
        answered = dict(connection.execute(
            "SELECT worker, COUNT(*) FROM events WHERE kind = 'answered' GROUP BY worker"
        ).fetchall())  # fmt: skip
    assert answered == {w["worker"]: w["pulls"] for w in report["workers"]}
    for w in report["workers"]:  # every decision sits on the answer count its reason names
        assert w["decision"] == "below" or w["pulls"] == 20
        assert w["decision"] == "above" or w["reason"].endswith(f"at answer {w['pulls']}")
