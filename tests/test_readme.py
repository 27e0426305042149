"""The README's Python example runs and says what it claims."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


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
