"""The installed version, read once from the package metadata."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["DISTRIBUTION", "__version__"]

#: The name on the package index ("screener" there is an unrelated project); the import name
#: and the command stay ``screener``.
DISTRIBUTION = "crowd-screener"

try:
    __version__ = version(DISTRIBUTION)
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
