"""`screener algorithms [NAME]`: every algorithm, its parameters and their defaults, read
from the code; checked against what each algorithm reports it was built with."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from typing import Any

import pytest
from click.testing import CliRunner

from screener.algorithms import ALGORITHMS, accepted_parameters, create_algorithm
from screener.cli.main import cli

#: Values for the parameters an algorithm cannot do without (k for top-K is a count).
REQUIRED: dict[str, Any] = {"threshold": 0.6, "k": 2, "eps": 0.2, "budget": 500}


def screener(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "screener", *args], capture_output=True,
                          text=True, timeout=120)  # fmt: skip


def described(name: str) -> dict[str, Any]:
    done = CliRunner().invoke(cli, ["algorithms", name, "--json"])
    assert done.exit_code == 0, done.output
    data: dict[str, Any] = json.loads(done.output)
    return data


@pytest.mark.subprocess
def test_the_listing_names_every_algorithm_once_with_its_summary() -> None:
    done = screener("algorithms")
    assert done.returncode == 0, done.stderr
    names = [line.split()[0] for line in done.stdout.splitlines()]
    assert names == sorted(ALGORITHMS)
    listing = json.loads(screener("algorithms", "--json").stdout)
    assert sorted(listing) == sorted(ALGORITHMS) and all(listing.values())


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_listed_defaults_are_what_the_algorithm_is_built_with(name: str) -> None:
    listed = {p["name"]: p for p in described(name)["parameters"]}
    assert set(listed) == accepted_parameters(ALGORITHMS[name])
    given = {key: value for key, value in REQUIRED.items() if listed.get(key, {}).get("required")}
    given["budget"] = REQUIRED["budget"]  # a run's setting, which fixed-budget methods need
    built = create_algorithm(name, 40, given).params()
    for key, value in built.items():
        if key in listed and key not in given and not listed[key]["required"]:
            default = listed[key]["default"]
            same = value == default or (
                isinstance(value, float)
                and isinstance(default, float)
                and math.isclose(value, default)
            )
            assert same or default is None, (key, value, default)


@pytest.mark.subprocess
def test_a_name_shows_its_promise_and_choices_and_an_unknown_one_is_one_line() -> None:
    shown = screener("algorithms", "confident-thresholding")
    assert shown.returncode == 0, shown.stderr
    assert "interval     betting | mixture | kl | hoeffding, default 'betting'" in shown.stdout
    assert "Promise" in shown.stdout and "delta        float, default 0.05" in shown.stdout
    wrong = screener("algorithms", "nope")
    assert wrong.returncode == 2
    assert wrong.stderr.startswith("error: unknown algorithm 'nope' (choose one of: ")
    assert len(wrong.stderr.splitlines()) == 1


@pytest.mark.subprocess
def test_run_help_claims_no_default_the_algorithm_does_not_use() -> None:
    # --delta once said 0.1 while confident-thresholding runs at 0.05.
    shown = screener("run", "--help").stdout
    assert "[default: 0.1]" not in shown and "[default: 2.0]" not in shown
    assert "screener algorithms NAME" in shown


def test_a_parameter_screener_sets_by_default_shows_both_defaults() -> None:
    # The class keeps its paper's direction; a run (command line or Python) screens for
    # spammers: the listing says both.
    done = CliRunner().invoke(cli, ["algorithms", "wrr"])
    assert done.exit_code == 0, done.output
    assert "direction    high | low, default 'high' (in a run 'low')" in done.output
