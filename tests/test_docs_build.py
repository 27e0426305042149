"""The API reference builds from the docstrings (mkdocs, strict: a broken reference fails)
and documents every name the public namespaces export."""

from __future__ import annotations

import html
import importlib
import re
import subprocess
import sys
from pathlib import Path

import click
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


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The docs, built strict (a broken reference or link fails the build)."""
    pytest.importorskip("mkdocstrings", reason="the docs extra is not installed")
    pytest.importorskip("mkdocs_click", reason="the docs extra is not installed")
    site = tmp_path_factory.mktemp("docs") / "site"
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    return site


@pytest.mark.subprocess
def test_the_reference_builds_and_names_every_public_object(site: Path) -> None:
    for page, module_name in PAGES.items():
        html = (site / "api" / page / "index.html").read_text(encoding="utf-8")
        anchors = set(re.findall(r'id="([\w.]+)"', html))
        module = importlib.import_module(module_name)
        exported = [name for name in module.__all__ if not name.startswith("_")]  # __version__
        missing = [name for name in exported if f"{module_name}.{name}" not in anchors]
        assert not missing, f"{page}: no entry for {missing}"


@pytest.mark.subprocess
def test_the_command_line_page_is_every_command_and_option_from_click(site: Path) -> None:
    """docs/cli.md is generated from the click commands: each has its heading there, and each
    of its options (and their help's first words) is in its part of the page."""
    from screener.cli.commands import every_command
    from screener.cli.main import cli

    page = (site / "cli" / "index.html").read_text(encoding="utf-8")
    parts = re.split(r'<h3 id="([\w-]+)"', page)
    sections = dict(zip(parts[1::2], parts[2::2], strict=True))
    commands = every_command(cli)
    assert sorted(sections) == sorted(commands)
    for name, command in commands.items():
        text = html.unescape(re.sub(r"<[^>]+>", "", sections[name]))
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                assert max(param.opts, key=len) in text, (name, param.opts)
        summary = (command.help or "").split(".")[0].split()[:4]
        assert " ".join(summary) in " ".join(text.split()), name


@pytest.mark.subprocess
def test_the_command_line_page_shows_defaults_not_clicks_sentinel(site: Path) -> None:
    """click 8.2+ holds an option without a default as a sentinel, which mkdocs-click printed
    as "Sentinel.UNSET" (docs/hooks.py shows what it stands for)."""
    text = html.unescape(re.sub(r"<[^>]+>", " ", (site / "cli" / "index.html").read_text()))
    assert "Sentinel" not in text and "UNSET" not in text
    words = " ".join(text.split())
    table = words[words.index("Description Default") :]
    row = table[table.index("--debug") : table.index("--quiet")].split()
    assert " ".join(row).endswith("(anywhere on the line). False")  # the flag's default


#: A script or stylesheet fetched from another host: the built site must load none.
_REMOTE = re.compile(r'<(?:script|link)\b[^>]*\b(?:src|href)="(?:https?:)?//', re.IGNORECASE)


@pytest.mark.subprocess
def test_the_site_loads_nothing_from_the_network(site: Path) -> None:
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 10
    remote = [str(p.relative_to(site)) for p in pages if _REMOTE.search(p.read_text())]
    assert remote == []
    assert not list(site.rglob("hooks.py"))  # the build's hooks are not published
