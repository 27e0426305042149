"""What every docstring example of screener may use without importing or making it: the
globals ``tests/test_doctests.py`` runs each example with (the examples run under the stdlib
``doctest``, not pytest's ``--doctest-modules``, so this is passed as ``globs`` rather than
through pytest's ``doctest_namespace`` fixture).

- ``np``: numpy, as a user imports it;
- the public names of ``screener``, ``screener.algorithms`` and ``screener.journal``
  (``simulate``, ``RoundRobin``, ``Journal``, ``RunSpec``, ``Event``, ...), as a user has
  them after importing them: a module's examples import a name once, where that teaches where
  it comes from, and its later examples lean on this;
- ``folder``: a new, empty folder of the example's own (a ``pathlib.Path``), for the files it
  writes;
- ``db``: a new run database in that folder (a path, as ``str``), not created yet;
- ``spec``: the spec of a small run to store in it (``RunSpec``): Weighted Round-Robin
  (``k`` 2) over two workers, ``ann`` and ``bob``, answered by the simulated oracle, seed 0.

A module's own names win over these.
"""

from __future__ import annotations

from pathlib import Path

import numpy

import screener
import screener.algorithms
import screener.journal
from screener.journal import RunSpec

#: The names every example shares; ``namespace`` adds the ones each example gets fresh.
NAMES: dict[str, object] = {
    "np": numpy,
    **{name: getattr(screener.journal, name) for name in screener.journal.__all__},
    **{name: getattr(screener.algorithms, name) for name in screener.algorithms.__all__},
    **{name: getattr(screener, name) for name in screener.__all__},
}

SPEC = RunSpec("wrr", {"k": 2.0}, 0, {"name": "simulated"}, {"workers": ["ann", "bob"]}, {})


def namespace(folder: Path) -> dict[str, object]:
    """The globals of one example, whose files go to ``folder`` (made here, empty)."""
    folder.mkdir(parents=True)
    return {**NAMES, "folder": folder, "db": str(folder / "runs.db"), "spec": SPEC}
