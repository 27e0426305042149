"""Oracles by name, found through the ``screener.oracles`` entry-point group.

screener's own oracles register there exactly as third-party plugins do (see pyproject.toml),
so there is one way in: ``pip install`` a package that declares an entry point.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points

from screener.errors import OracleError
from screener.oracles.base import Oracle

__all__ = ["ENTRY_POINT_GROUP", "OracleInfo", "available_oracles", "load_oracle_class"]

ENTRY_POINT_GROUP = "screener.oracles"


@dataclass(frozen=True, slots=True)
class OracleInfo:
    """An installed oracle: its entry-point name, the class it names, and the distribution
    (package and version) that registered it.

    Examples
    --------
    >>> info = next(info for info in available_oracles() if info.name == "simulated")
    >>> info.package, info.target
    ('crowd-screener', 'screener.oracles.simulated:SimulatedOracle')
    """

    name: str
    target: str
    package: str
    version: str


def _entry_points() -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def available_oracles() -> list[OracleInfo]:
    """Every registered oracle, sorted by name.

    Examples
    --------
    >>> names = [info.name for info in available_oracles()]
    >>> {"simulated", "dataset", "log", "http"} <= set(names)
    True
    """
    found = []
    for name, ep in sorted(_entry_points().items()):
        dist = ep.dist
        package = dist.metadata["Name"] if dist is not None else "?"
        version = dist.version if dist is not None else "?"
        found.append(OracleInfo(name, ep.value, package, version))
    return found


def load_oracle_class(name: str) -> type[Oracle]:
    """The oracle class registered as ``name``; unknown names list the available ones.

    Examples
    --------
    >>> load_oracle_class("simulated").__name__
    'SimulatedOracle'
    """
    points = _entry_points()
    if name not in points:
        known = ", ".join(sorted(points)) or "none (is screener installed with pip?)"
        raise OracleError(f"unknown oracle {name!r}", f"available: {known}")
    try:
        loaded = points[name].load()
    except Exception as error:  # a broken plugin must not take the CLI down with a traceback
        raise OracleError(f"oracle {name!r} failed to load: {error}") from error
    if not (isinstance(loaded, type) and issubclass(loaded, Oracle)):
        raise OracleError(f"entry point {name!r} does not name an Oracle subclass")
    return loaded
