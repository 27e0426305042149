"""The Examples in screener's docstrings run, as the README's `pytest` runs everything.

They are run here, from the imported package, rather than by pytest's --doctest-modules on
the source folder: that collection imports screener/ a second time beside an installed
(non-editable) copy and fails with "import file mismatch", and `pip install .` is how a new
user installs it.
"""

from __future__ import annotations

import contextlib
import doctest
import importlib
import io
import pkgutil
from pathlib import Path

import numpy
import pytest

import screener
import screener.algorithms

#: Every module of the package (``__main__`` would run the command line when imported).
MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(screener.__path__, "screener.")
    if not info.name.endswith("__main__")
)


#: Names every example may use without importing them, as a user has them after
#: ``import numpy as np`` and importing the public names of ``screener`` and
#: ``screener.algorithms``: a module's examples import a name once, where it teaches where
#: the name comes from, and later examples in the module lean on this. A module's own names win.
NAMESPACE: dict[str, object] = {
    "np": numpy,
    **{name: getattr(screener.algorithms, name) for name in screener.algorithms.__all__},
    **{name: getattr(screener, name) for name in screener.__all__},
}


@pytest.mark.parametrize("name", ["screener", *MODULES])
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        failed, _ = doctest.testmod(
            module, globs={**NAMESPACE, **vars(module)}, optionflags=doctest.ELLIPSIS, report=True
        )
    assert failed == 0, output.getvalue()


def test_every_module_with_examples_is_run() -> None:
    """A module whose source holds an example is one of the modules run above."""
    folder = screener.__path__[0]
    for path in sorted(Path(folder).rglob("*.py")):
        if ">>> " not in path.read_text(encoding="utf-8") or path.name == "__main__.py":
            continue
        relative = path.relative_to(folder).with_suffix("")
        parts = [part for part in relative.parts if part != "__init__"]
        assert ".".join(["screener", *parts]) in ["screener", *MODULES], path
