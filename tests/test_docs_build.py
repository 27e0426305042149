"""The API reference builds from the docstrings (mkdocs, strict: a broken reference fails)
and documents every name the public namespaces export."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
#: Each reference page and the namespace it documents (the names come from its __all__).
PAGES = {
    "screener": "screener",
    "algorithms": "screener.algorithms",
    "oracles": "screener.oracles",
    "bank": "screener.bank",
    "testing": "screener.testing",
    "journal": "screener.journal",
    "runs": "screener.runs",
}


def test_the_pages_are_the_ones_mkdocs_builds() -> None:
    for page, module in PAGES.items():
        text = (ROOT / "docs" / "api" / f"{page}.md").read_text(encoding="utf-8")
        assert f"::: {module}\n" in text
    assert sorted(p.stem for p in (ROOT / "docs" / "api").glob("*.md")) == sorted(PAGES)


def test_the_reference_builds_and_names_every_public_object(tmp_path: Path) -> None:
    pytest.importorskip("mkdocstrings", reason="the docs extra is not installed")
    site = tmp_path / "site"
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    for page, module_name in PAGES.items():
        html = (site / "api" / page / "index.html").read_text(encoding="utf-8")
        anchors = set(re.findall(r'id="([\w.]+)"', html))
        module = importlib.import_module(module_name)
        exported = [name for name in module.__all__ if not name.startswith("_")]  # __version__
        missing = [name for name in exported if f"{module_name}.{name}" not in anchors]
        assert not missing, f"{page}: no entry for {missing}"
