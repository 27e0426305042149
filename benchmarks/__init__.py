"""Paper reproductions and speed measurements (see BENCHMARKS.md); not part of the package."""
