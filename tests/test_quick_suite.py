"""Plain `pytest` is the quick suite: it leaves out exactly the tests marked slow or
subprocess; `--full`, an explicit -m and a test file named on the command line run them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: A folder with both kinds of test, in the same files.
FOLDER = "tests/gate_service"
NAMED = f"{FOLDER}/test_standin.py"


def collected(*args: str) -> set[str]:
    """The ids pytest collects (and keeps) for ``args``, as a new process sees them."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return {line for line in done.stdout.splitlines() if "::" in line}


@pytest.mark.subprocess
def test_the_quick_suite_leaves_out_exactly_the_marked_tests() -> None:
    quick, full = collected(FOLDER), collected(FOLDER, "--full")
    marked = collected(FOLDER, "-m", "slow or subprocess")
    assert marked and quick and marked <= full
    assert quick == full - marked
    named = collected(NAMED)
    assert named == {test for test in full if test.startswith(f"{NAMED}::")}
    assert named & marked, "the named file has marked tests, and they run"
