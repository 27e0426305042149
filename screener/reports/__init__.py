"""Reports of a run: a ranked table for people, fitted to the terminal (``text``, its table in
``table``), JSON and CSV for programs (``data``), what each says of the run whatever its
format (``summary``), a cost plan in words (``plan``) and one self-contained HTML page
(``screener.reports.html``, with the optional ``html`` extra). A gate run's report is
``screener.reports.gate_run`` (imported on its own: it rebuilds the gate).
"""

from screener.reports.data import FORMATS, json_text, render_csv, render_json
from screener.reports.plan import render_plan
from screener.reports.summary import (
    ONLY,
    Only,
    banned_workers,
    cost_line,
    decision_counts,
    describe_status,
    money_spent,
    shown_workers,
)
from screener.reports.text import render_comparison, render_table, terminal_width

__all__ = [
    "FORMATS",
    "ONLY",
    "Only",
    "banned_workers",
    "cost_line",
    "decision_counts",
    "describe_status",
    "json_text",
    "money_spent",
    "render_comparison",
    "render_csv",
    "render_json",
    "render_plan",
    "render_table",
    "shown_workers",
    "terminal_width",
]
