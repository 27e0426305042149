"""screener-jsonl: an oracle that asks gold questions through JSON-lines files.

Registered as the ``jsonl`` oracle (entry-point group ``screener.oracles``).
"""

from screener_jsonl.oracle import OPTIONS, JsonlOracle, inbox_line, parse_answer

__all__ = ["OPTIONS", "JsonlOracle", "inbox_line", "parse_answer"]
__version__ = "0.1.0"
