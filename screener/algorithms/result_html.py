"""A result as a notebook shows it: the summary and the first workers, as HTML."""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING

from screener.algorithms.worker_result import Decision

if TYPE_CHECKING:
    from screener.algorithms.result import Result

__all__ = ["HTML_ROWS", "result_html"]

#: Workers a notebook shows under the summary.
HTML_ROWS = 10


def result_html(result: Result) -> str:
    """The summary and the first ``HTML_ROWS`` workers as a small HTML fragment."""
    counts = ", ".join(f"{n:,} {word}" for word, n in result.word_counts().items())
    head = (
        f"<b>{html.escape(result.algorithm)}</b>: {len(result.workers):,} workers ({counts}), "
        f"{result.total_pulls:,} answers"
        + (f", run <code>{html.escape(result.run_id)}</code>" if result.run_id else "")
    )
    columns = ("rank", "worker", "decision", "estimate", "interval", "pulls", "reason")
    rows = []
    for w in result.ranking[:HTML_ROWS]:
        decision = result.word(w.decision)
        if w.decision is Decision.UNDECIDED and w.leaning is not Decision.UNDECIDED:
            decision += f" (leaning {result.word(w.leaning)})"
        cells = (
            w.rank, result.name(w.arm) or w.arm, decision, _fixed(w.estimate),
            f"[{_fixed(w.lower)}, {_fixed(w.upper)}]", w.pulls, w.reason,
        )  # fmt: skip
        rows.append("".join(f"<td>{html.escape(str(c))}</td>" for c in cells))
    more = len(result.workers) - HTML_ROWS
    tail = f"<p>… {more:,} more (<code>to_dataframe()</code> has them all)</p>" if more > 0 else ""
    return (
        f"<div><p>{head}<br>{html.escape(result.status())}</p><table>"
        f"<tr>{''.join(f'<th>{c}</th>' for c in columns)}</tr>"
        + "".join(f"<tr>{row}</tr>" for row in rows)
        + f"</table>{tail}</div>"
    )


def _fixed(value: float) -> str:
    return f"{value:.3f}" if math.isfinite(value) else "-"
