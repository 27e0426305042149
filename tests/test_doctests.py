"""The Examples in screener's docstrings run, as the README's `pytest` runs everything.

They are run here, from the imported package, rather than by pytest's --doctest-modules on
the source folder: that collection imports screener/ a second time beside an installed
(non-editable) copy and fails with "import file mismatch", and `pip install .` is how a new
user installs it.
"""

from __future__ import annotations

import doctest
import importlib
import io
import pkgutil
from pathlib import Path

import pytest
from doctest_namespace import namespace

import screener

#: Every module of the package (``__main__`` would run the command line when imported).
MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(screener.__path__, "screener.")
    if not info.name.endswith("__main__")
)


@pytest.mark.parametrize("name", ["screener", *MODULES])
def test_docstring_examples(name: str, tmp_path: Path) -> None:
    """Each docstring's examples run with their own globals (``doctest_namespace``: a fresh
    folder and database each), then the module's own names."""
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    output = io.StringIO()
    for number, test in enumerate(doctest.DocTestFinder().find(module)):
        test.globs = {**namespace(tmp_path / str(number)), **vars(module)}
        runner.run(test, out=output.write)
    assert runner.failures == 0, output.getvalue()


def test_every_module_with_examples_is_run() -> None:
    """A module whose source holds an example is one of the modules run above."""
    folder = screener.__path__[0]
    for path in sorted(Path(folder).rglob("*.py")):
        if ">>> " not in path.read_text(encoding="utf-8") or path.name == "__main__.py":
            continue
        relative = path.relative_to(folder).with_suffix("")
        parts = [part for part in relative.parts if part != "__init__"]
        assert ".".join(["screener", *parts]) in ["screener", *MODULES], path
