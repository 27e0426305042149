"""Issue 36 for `screener gate` and `screener standin`: every value used or refused in one
line, with nothing written; a setting given two ways, or one the gate would not use, refused
by name; seeds within their documented range; a gate URL that is no URL refused at once."""

from __future__ import annotations

from pathlib import Path

import pytest
from refusals import refused

DATASET = "worker,item,answer,gold\nw1,i1,a,a\nw2,i1,b,a\nw1,i2,a,\n"
GATE = "http://127.0.0.1:1"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "answers.csv").write_text(DATASET, encoding="utf-8")
    return tmp_path


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["-p", "seed=3"], "error: seed is the gate's setting, which the algorithm is given too, "
         "not a parameter (give it with --seed N (seed= in Python), not -p seed=)"),
        (["--gold-every", "5"], "error: gold_every=5 paces the share policy only, and this "
         "gate's policy is value (add --policy share, or drop --gold-every)"),
        (["--policy", "first", "--gold-every", "10"], "error: gold_every=10 paces the share "
         "policy only, and this gate's policy is first (add --policy share, or drop "
         "--gold-every)"),
        (["--policy", "first", "--gold-every", "0"], "error: gold_every=0 paces the share "
         "policy only, and this gate's policy is first (add --policy share, or drop "
         "--gold-every)"),
        (["--policy", "share", "--gold-every", "0"], "error: every must be a whole number >= "
         "1, got 0 (one gold question in N requests, e.g. --gold-every 10)"),
        (["--policy", "first", "--tenure"], "error: tenure and bans are the value policy's, "
         "and this gate's policy is first (use --policy value, or leave them out)"),
        (["--policy", "share", "--bans", "cost"], "error: tenure and bans are the value "
         "policy's, and this gate's policy is share (use --policy value, or leave them out)"),
        (["-a", "quiz", "-p", "threshold=0.6"], "error: the value policy prices gold with the "
         "crowd prior, and quiz has none (use --algorithm crowd-prior, or --policy first or "
         "share)"),
        (["-p", "threshold=0.6", "-p", "threshold=0.7"],
         "error: --param threshold=0.6 and --param threshold=0.7 both set threshold "
         "(see `screener gate --help`)"),
        (["--seed", "9223372036854775808"], "error: seed must be a whole number from 0 to "
         "9,223,372,036,854,775,807, got 9223372036854775808 (e.g. --seed 0)"),
        (["--audit-rate", "inf"], "error: audit_rate must be a share in [0, 1], got inf "
         "(e.g. audit_rate=0.1)"),
        (["--alpha", "nan"], "error: alpha must be a share in [0, 1], got nan (e.g. alpha=0.1)"),
        (["--expected-tasks", "1e400"], "error: expected_tasks must be a number >= 1, got inf "
         "(e.g. 20)"),
        (["--price", "gold=inf,task=1"], "error: the price of a gold question must be a "
         "number > 0, got inf (give e.g. --price gold=0.05,task=0.05)"),
    ],
)  # fmt: skip
def test_gate_settings_used_or_refused(folder: Path, args: list[str], line: str) -> None:
    """`-p seed=` was overridden by --seed, and --gold-every ignored under the value
    policy, both without a word. A policy's options are its own (issue 52, item 4): one of
    another policy is refused, and `--gold-every 10`, the share policy's pace, is refused
    too now that an option's default is not read as typed."""
    assert refused(folder, "gate", *args) == line


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--gate", "nope"], "error: --gate nope is not a gate's URL (give the base URL "
         "`screener gate` printed, e.g. http://127.0.0.1:8080)"),
        (["--gate", "http://127.0.0.1:abc"], "error: --gate http://127.0.0.1:abc is not a "
         "gate's URL (give the base URL `screener gate` printed, e.g. http://127.0.0.1:8080)"),
        (["--gate", GATE, "--seed", "-1"], "error: seed must be a whole number from 0 to "
         "9,223,372,036,854,775,807, got -1 (e.g. --seed 0)"),
        (["--gate", GATE, "--session", "inf"], "error: session must be a share in [0, 1], "
         "got inf"),
        (["--gate", GATE, "--gold-share", "nan"], "error: gold_share must be a share in "
         "[0, 1], got nan"),
    ],
)  # fmt: skip
def test_standin_refuses_in_one_line(folder: Path, args: list[str], line: str) -> None:
    """A URL that is no URL was retried for two minutes as a gate that is down; a negative
    seed was an internal error."""
    assert refused(folder, "standin", "answers.csv", *args) == line
