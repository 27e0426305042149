"""Issue 36, settings: every value given is used as documented or refused in one line, with
nothing written; a setting given two ways, or one the algorithm or answer source would not
use, is refused by name. Each test is one case of the issue, run through the real CLI in a
folder holding a journal with one finished run (which must stay byte for byte as it was)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from liar_service import liar_service
from refusals import DB, finished_run, one_line, refused, screener

BANK = "id,payload,key,scoring\n" + "".join(f"q{i},{i}+{i},{2 * i},numeric\n" for i in range(40))


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("settings")
    finished_run(folder / DB)
    (folder / "bank.csv").write_text(BANK, encoding="utf-8")
    return folder


@pytest.fixture
def folder(tmp_path: Path, template: Path) -> Path:
    shutil.copytree(template, tmp_path, dirs_exist_ok=True)
    return tmp_path


def run_refused(folder: Path, *args: str) -> str:
    return refused(folder, "run", "--workers", "6", "--budget", "300", *args, "--db", DB)


LATENCY = (
    "error: latency must be a finite number of seconds >= 0, got inf (e.g. constant:0.05; "
    "answers that never come are -O loss=P)"
)


@pytest.mark.parametrize(
    "args",
    [
        ["--latency", "constant:inf"],
        ["--latency", "constant:1e400"],
        ["--latency", "exponential:inf"],
        ["-O", "latency=constant:inf"],
    ],
)
def test_latency_constant_inf_is_refused(folder: Path, args: list[str]) -> None:
    """It started, never answered, and left a run "running"."""
    assert run_refused(folder, "--outliers", "1", *args) == LATENCY


def test_serve_latency_constant_inf_is_refused(folder: Path) -> None:
    assert refused(folder, "serve", "--latency", "constant:inf", "--stop-after", "1") == LATENCY


@pytest.mark.slow
@pytest.mark.parametrize("value", ["inf", "1e400"])
def test_timeout_inf_is_refused(folder: Path, value: str) -> None:
    """A question lost by the oracle was never asked again."""
    assert run_refused(folder, "--timeout", value) == (
        "error: timeout must be a finite number of seconds > 0, got inf (a question never "
        "timed out is never asked again; e.g. --timeout 600)"
    )
    (folder / "run.toml").write_text("[run]\ntimeout = inf\n", encoding="utf-8")
    assert "timeout must be a finite number" in run_refused(folder, "--config", "run.toml")


def test_top_2_with_wrr_is_refused(folder: Path) -> None:
    """--top became wrr's k (the k-sigma rule's), silently."""
    assert run_refused(folder, "-a", "wrr", "--top", "2") == (
        "error: --top selects how many workers a top-K algorithm picks; wrr picks no number "
        "of workers (drop --top, or use --algorithm adaptive-topk or clucb-pac or optmai)"
    )


@pytest.mark.slow
def test_rho_2_means_what_each_algorithm_says(folder: Path) -> None:
    """wrr's rho (>= 1: how many times as often an active worker is asked) is 2 as given,
    and stored so; GOLD's rho is a share, and 2 is refused; --help says both ranges."""
    done = screener("run", "--workers", "6", "-a", "wrr", "--rho", "2", "--budget", "100",
                    "--db", DB, "--json", "--quiet", cwd=folder)  # fmt: skip
    assert done.returncode == 3, done.stderr
    report = stored(folder, json.loads(done.stdout)["run_id"])
    assert report["params"]["rho"] == 2.0 and report["run_spec"]["params"]["rho"] == 2.0
    assert run_refused(folder, "-a", "gold", "--rho", "2") == (
        "error: rho must lie in (0.5, 1), got 2.0 (the paper uses rho=0.9)"
    )
    help_text = " ".join(screener("run", "--help", cwd=folder).stdout.split())
    assert "WRR: how many times as often an active worker is asked, >= 1" in help_text
    assert "GOLD: the share of normal workers, in (0.5, 1)" in help_text


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["-a", "confident-thresholding", "--threshold", "0.7", "-p", "threshold=0.6"],
         "--threshold 0.7 and -p threshold=0.6 both set threshold"),
        (["--k", "3", "-p", "k=2"], "--k 3.0 and -p k=2 both set k"),
        (["-p", "budget=5"], "-p budget=5 and --budget 300 both set budget"),
        (["-a", "adaptive-topk", "--top", "2", "-p", "k=3", "-p", "eps=0.1"],
         "-p k=3 and --top 2 both set k"),
    ],
)  # fmt: skip
def test_threshold_flag_and_param_conflict(folder: Path, args: list[str], line: str) -> None:
    """The -p value won without a word."""
    assert run_refused(folder, *args) == f"error: {line} (give one of them)"


def test_one_option_given_twice_is_refused(folder: Path) -> None:
    line = run_refused(folder, "-p", "k=2", "-p", "k=3")
    assert line == "error: --param k=2 and --param k=3 both set k (see `screener run --help`)"


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["-O", "rewards=beta", "--rewards", "bernoulli"],
         "--rewards bernoulli and -O rewards=beta both set rewards (give one of them)"),
        (["--latency", "none", "-O", "latency=constant:0.01"],
         "--latency none and -O latency=constant:0.01 both set latency (give one of them)"),
        (["--batch-release", "2", "-O", "batch_release=3"],
         "--batch-release 2 and -O batch_release=3 both set batch_release (give one of them)"),
    ],
)  # fmt: skip
def test_rewards_flag_and_oracle_option_conflict(folder: Path, args: list[str], line: str) -> None:
    """The -O value won without a word."""
    assert run_refused(folder, *args) == f"error: {line}"


def test_a_simulated_flag_for_another_oracle_is_refused(folder: Path) -> None:
    """--rewards was dropped without a word when another oracle answered."""
    line = refused(folder, "run", "--oracle", "http", "-O", "url=http://127.0.0.1:1",
                   "--questions", "bank.csv", "--workers", "3", "--rewards", "beta",
                   "--db", DB)  # fmt: skip
    assert line == (
        "error: --rewards beta sets simulated answers, and the http oracle takes no rewards "
        "(drop --rewards, or use --oracle simulated)"
    )


@pytest.mark.slow
@pytest.mark.parametrize("args", [["-O", "concentration=0"], ["-O", "concentration=5"]])
def test_concentration_without_beta_rewards_is_refused(folder: Path, args: list[str]) -> None:
    """Bernoulli rewards have no concentration: the option was ignored."""
    assert run_refused(folder, *args) == (
        "error: concentration shapes graded (beta) rewards, and these are bernoulli (drop the "
        "concentration option, or add -O rewards=beta)"
    )
    line = run_refused(folder, "-O", "rewards=beta", "-O", "concentration=inf")
    assert line.startswith("error: concentration must be a finite number > 0, got inf")


@pytest.mark.slow
def test_pool_with_two_accuracy_columns(folder: Path) -> None:
    """One of the two was read and the other ignored."""
    (folder / "pool.csv").write_text("worker,accuracy,accuracy\na,0.9,0.1\nb,0.8,0.2\n")
    assert refused(folder, "run", "pool.csv", "--db", DB) == (
        "error: pool.csv: the header has more than one accuracy column (keep one of each)"
    )
    (folder / "pool.csv").write_text("worker,accuracy,mean\na,0.9,0.1\nb,0.8,0.2\n")
    assert refused(folder, "serve", "pool.csv", "--stop-after", "1") == (
        "error: pool.csv: the header has two accuracy columns, accuracy and mean (keep one of them)"
    )


def test_plan_seeds_past_the_maximum(folder: Path) -> None:
    """Runs SEED to SEED + RUNS - 1: the last ones were past the documented maximum."""
    line = refused(folder, "plan", "--seed", "9223372036854775806", "--runs", "5",
                   "--workers", "5", "--budget", "100")  # fmt: skip
    assert line == (
        "error: 5 runs take seeds 9,223,372,036,854,775,806 to 9,223,372,036,854,775,810, "
        "past the largest seed, 9,223,372,036,854,775,807 (give --seed 9223372036854775803 "
        "or less)"
    )


def test_rr_hoeffding_with_quantile_paper_is_refused(folder: Path) -> None:
    """The paper's quantile changes the Agresti-Coull intervals only: with Hoeffding's it
    was ignored, and the result showed the full guarantee under a setting the docs call
    a heuristic."""
    line = run_refused(folder, "-a", "rr", "--interval", "hoeffding", "--quantile", "paper")
    assert line == (
        "error: quantile='paper' changes the Agresti-Coull intervals only: "
        "interval='hoeffding' has no normal quantile to change (drop --quantile paper, or "
        "give --interval agresti-coull with it)"
    )


@pytest.mark.slow
@pytest.mark.parametrize("args", [["--interval", "agresti-coull"], ["--quantile", "paper"]])
def test_an_option_ade_does_not_use_is_refused(folder: Path, args: list[str]) -> None:
    line = run_refused(folder, "-a", "ade", *args)
    assert line.startswith("error: ADE uses the paper's Hoeffding radii, so ")
    assert line.endswith("(--interval and --quantile do not apply to ade: drop them)")


@pytest.mark.slow
def test_seed_as_an_algorithm_parameter_is_refused(folder: Path) -> None:
    """-p seed=3 was overwritten by the run's seed."""
    assert run_refused(folder, "-p", "seed=3") == (
        "error: seed is a setting of the run, not an algorithm parameter (give it with "
        "--seed N, or seed= in Python)"
    )


@pytest.mark.slow
def test_confident_thresholding_says_what_its_interval_is(folder: Path) -> None:
    """It called its intervals "anytime" where each is two-sided at 1 - 2 delta / n."""
    args = ["run", "-a", "confident-thresholding", "--threshold", "0.6", "--workers", "6",
            "--db", DB, "--quiet"]  # fmt: skip
    table = screener(*args, cwd=folder)
    assert table.returncode == 0, table.stderr
    assert (
        "intervals: anytime, two-sided: each end of a worker's interval holds at every answer "
        "count with probability >= 1 - delta / n = 0.991667, so the interval with >= 1 - 2 "
        "delta / n = 0.983333 (a decision needs one end)"
    ) in " ".join(table.stdout.split())
    mixture = screener(*args, "-p", "interval=mixture", "--json", cwd=folder)
    assert json.loads(mixture.stdout)["extra"]["intervals"] == (
        "anytime: each worker's interval holds at every answer count at once with "
        "probability >= 1 - delta / n = 0.991667"
    )


def stored(folder: Path, run_id: str) -> dict[str, Any]:
    done = screener("report", run_id, "--db", DB, "--json", cwd=folder)
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.mark.slow
def test_a_refusal_of_a_run_file_setting_is_one_line(folder: Path) -> None:
    (folder / "run.toml").write_text('[oracle]\nlatency = "constant:inf"\n', encoding="utf-8")
    line = one_line(screener("run", "--config", "run.toml", "--db", DB, cwd=folder))
    assert line == LATENCY


@pytest.mark.slow
def test_http_service_rejecting_every_assignment_names_its_reason(folder: Path) -> None:
    """Every worker ended "unavailable: no answer to 10 questions in a row", and the
    service's reason ("unknown worker") never reached the user; since issue 53 a service
    that refuses every worker is one exit-2 line, which names the reason."""
    (folder / "pool.csv").write_text("worker,accuracy\nw1,0.9\nw2,0.8\nw3,0.7\n")
    with liar_service() as url:
        done = screener("run", "pool.csv", "--questions", "bank.csv", "--oracle", "http",
                        "-O", f"url={url}/reject", "--db", DB, "--json", "--quiet",
                        cwd=folder)  # fmt: skip
    line = one_line(done)
    assert any(f"(the last: unknown worker {w!r})" in line for w in ("w1", "w2", "w3")), line
