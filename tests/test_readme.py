"""The README's Python example runs and says what it claims."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_python_example_runs_and_finds_the_demo_spammers() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert blocks, "the README lost its Python example"
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(blocks[0], str(README), "exec"), {})
    assert output.getvalue().startswith("['w09', 'w20']")
    assert "condition met" in output.getvalue()
