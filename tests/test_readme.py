"""The README's Python examples run and say what they claim, its shell commands run, and its
test commands are the ones CI runs."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: Commands that serve until stopped: the README shows how to start them, a test cannot wait.
SERVERS = ("screener gate", "screener serve")
#: What a server prints when it starts (its PORT; a gate's GATE_RUN id): a line naming one
#: needs the server running.
PRINTED = r"\b(PORT|GATE_RUN)\b"
#: The real datasets, which only a machine with SCREENER_DATA set has.
DATA = "../shared/data"


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


def test_the_python_docs_page_shows_the_readmes_python_examples() -> None:
    """docs/python.md repeats the README's two examples: the ones run above, unchanged."""
    page = (ROOT / "docs" / "python.md").read_text(encoding="utf-8")
    readme = README.read_text(encoding="utf-8")
    examples = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert re.findall(r"```python\n(.*?)```", page, re.S) == examples


def _command_lines(text: str) -> list[str]:
    """Every command line of the sh blocks, a backslash continuation joined to its line."""
    lines: list[str] = []
    for block in _sh_blocks(text):
        lines += [line.strip() for line in block.replace("\\\n", " ").splitlines() if line]
    return lines


def _from_screener(line: str) -> str | None:
    """The line from its first `screener` command on: what comes before it (a virtual
    environment, `pip install`) prepares the machine; None for a line without one."""
    parts = line.split("&&")
    for at, part in enumerate(parts):
        if part.split()[:1] == ["screener"]:
            return "&&".join(parts[at:]).strip()
    return None


def _runnable(line: str) -> str | None:
    """The command to run for a README line, or None for one this test leaves out."""
    command = _from_screener(line)
    if command is None or command.startswith(SERVERS) or re.search(PRINTED, command):
        return None
    if DATA in command:
        data = os.environ.get("SCREENER_DATA")
        return command.replace(DATA, data) if data else None
    return command


@pytest.mark.subprocess
def test_every_readme_command_runs(tmp_path: Path) -> None:
    """Each command line of the README's sh blocks runs, in order, in one empty folder (with
    the repository's examples/), as a real subprocess of the installed `screener` command, and
    exits with 0, or 3 where the line's comment says so (a run cut short). Left out, by one
    rule each: a line without a `screener` command (installing, `pytest`, `export`; from a
    line that installs first, its `screener` command runs); `screener gate` and `screener
    serve`, which serve until stopped, and a line with the PORT or GATE_RUN one of them
    prints; a line reading the real datasets (../shared/data) unless SCREENER_DATA is set.
    RUN_ID stands for the run the last `screener run` line started."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = {key: value for key, value in os.environ.items() if key != "SCREENER_DB"}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    run_id: str | None = None
    ran = []
    for line in _command_lines(README.read_text(encoding="utf-8")):
        command = _runnable(line)
        if command is None:
            continue
        if "RUN_ID" in command:
            assert run_id, f"no run before {line!r}"
            command = command.replace("RUN_ID", run_id)
        expected = 3 if re.search(r"#.*\bexit 3\b", line) else 0
        done = subprocess.run(command, shell=True, cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=120, check=False)  # fmt: skip
        assert done.returncode == expected, (line, done.returncode, done.stderr[-2000:])
        started = re.search(r"^run ([0-9a-f]+) ", done.stdout, re.M)
        if command.startswith("screener run ") and started:
            run_id = started.group(1)
        ran.append(line)
    assert len(ran) >= 6, f"the README's commands were almost all left out: {ran}"
