"""The ``screener`` command line."""

from screener.cli.main import cli, main

__all__ = ["cli", "main"]
