"""The architecture as a rule: screener's packages and modules form layers, and each imports
only the layers below it (so algorithms import only stats, checks and errors, oracles never reach
up into the orchestrator or the reference service, and nothing imports the CLI)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import screener

#: Bottom to top. A part of screener may import the parts listed before it, none after.
LAYERS = (
    "_lazy",  # a package's names imported when first read
    "errors",
    "arrays",  # the numpy array types of the annotations
    "checks",  # the argument checks every layer shares (a count, a seed, a choice)
    "money",  # prices and amounts, read and shown the same by the gate, runs and reports
    "stats",
    "algorithms",  # pure decision objects: numbers in, decisions out
    "simulation",
    "files",
    "_version",
    "bank",
    "crowd",  # the workers to screen: a pool, read from a file or simulated
    "gate",  # gold or task for each arriving worker: a pure decision object
    "journal",  # storage
    "oracles",  # answer sources, the http protocol with its client
    "service",  # the reference service serving that protocol
    "orchestrator",
    "runs",  # stored runs: set up, start, resume, replay, rescore, export
    "gate_service",  # the gate served over HTTP, every call journaled in a run
    "reports",  # the report of a run: table, JSON, CSV, HTML page
    "api",
    "testing",
    "cli",
    "__init__",
    "__main__",
)

ROOT = Path(screener.__file__).parent


def _part(path: Path) -> str:
    """The layer a source file belongs to: its top-level package or module under screener/."""
    relative = path.relative_to(ROOT)
    return relative.parts[0].removesuffix(".py")


def _imported_modules(path: Path) -> Iterator[tuple[int, str]]:
    """(line, module) for every absolute import of screener in ``path``."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            if name.split(".")[0] == "screener":
                yield node.lineno, name


def _imported_parts(path: Path) -> Iterator[tuple[int, str]]:
    """(line, part of screener) for every absolute import of screener in ``path``."""
    for line, name in _imported_modules(path):
        parts = name.split(".")
        yield line, parts[1] if len(parts) > 1 else "__init__"


SOURCES = sorted(ROOT.rglob("*.py"))


def test_every_part_of_the_package_has_a_layer() -> None:
    parts = {_part(path) for path in SOURCES}
    assert parts <= set(LAYERS), f"give these a layer: {sorted(parts - set(LAYERS))}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_only_go_down(path: Path) -> None:
    mine = LAYERS.index(_part(path))
    upward = [
        f"line {line}: screener.{part}"
        for line, part in _imported_parts(path)
        if part != LAYERS[mine] and LAYERS.index(part) > mine
    ]
    assert not upward, f"{path.relative_to(ROOT)} imports from above its layer: {upward}"


def test_the_rule_can_fail(tmp_path: Path) -> None:
    """An algorithm importing the journal is caught (guards the AST walk itself)."""
    module = tmp_path / "bad.py"
    module.write_text("def f():\n    from screener.journal import Journal\n", encoding="utf-8")
    assert [part for _, part in _imported_parts(module)] == ["journal"]
    assert LAYERS.index("journal") > LAYERS.index("algorithms")


#: Inside ``testing``, two parts that stay apart: the conformance suites a plugin author
#: imports (``screener.testing``) and the test doubles and simulators of a platform that the
#: tests, the benchmarks and ``screener standin`` use (``screener.testing.doubles``).
DOUBLES = ROOT / "testing" / "doubles"


@pytest.mark.parametrize(
    "path", sorted((ROOT / "testing").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT))
)
def test_the_conformance_suites_and_the_test_doubles_are_apart(path: Path) -> None:
    is_double = path.is_relative_to(DOUBLES)
    crossing = [
        f"line {line}: {name}"
        for line, name in _imported_modules(path)
        if name.startswith("screener.testing")
        and name.startswith("screener.testing.doubles") != is_double
    ]
    assert not crossing, f"{path.relative_to(ROOT)} reaches across testing/: {crossing}"
