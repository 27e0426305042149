"""The README's Python example runs and says what it claims; its test commands are the ones
CI runs."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def test_python_examples_run_and_find_the_demo_spammers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 2, "the README lost its Python examples"
    monkeypatch.chdir(tmp_path)  # the first one journals into ./screener.db
    namespace: dict[str, Any] = {}
    exec(compile(blocks[0], str(README), "exec"), namespace)
    result = namespace["result"]
    assert result.condition_met and (tmp_path / "screener.db").exists()
    banned = {result.name(w.arm) for w in result.workers if w.decision == "below"}
    assert banned == {"w09", "w20"}
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(blocks[1], str(README), "exec"), {})
    assert output.getvalue().startswith("['w09', 'w20']")
    assert "condition met" in output.getvalue()


def _sh_blocks(text: str) -> list[str]:
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", text, re.S)]


def test_the_first_screen_is_two_commands_that_ci_runs_as_written() -> None:
    """The first screen gives two commands: install and run the demo, run the tests (the full
    suite). .ci/run runs both exactly as written there; the quick suite's line, for the inner
    loop, is under Development."""
    text = README.read_text(encoding="utf-8")
    first_screen, *sections = text.split("\n## ")
    assert len(first_screen.splitlines()) <= 40, "the two commands must fit on the first screen"
    blocks = _sh_blocks(first_screen)
    assert len(blocks) == 2, "the first screen: one block to install and run, one to test"
    demo, tests = blocks
    assert "\n" not in demo and demo.endswith("pip install . && screener run")
    assert "\n" not in tests and tests.endswith("&& pytest --full")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert demo in ci and tests in ci
    development = [s for s in sections if s.startswith("Development\n")]
    assert development, "the README lost its Development section"
    assert "pip install '.[dev]' && pytest" in _sh_blocks(development[0])
