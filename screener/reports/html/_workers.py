"""The page's workers: their data, once and compact, for the per-worker plot and table that
``workers.js`` draws a page at a time; and, for a large crowd, a summary (a histogram of the
estimates and the names per decision)."""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from importlib import resources
from typing import Any

from screener.algorithms import Decision, Result, WorkerResult
from screener.crowd import WorkerPool
from screener.reports.html._figures import COLOURS, figure_html, histogram_figure, reward_range

#: Workers per page of the per-worker plot and table; a crowd larger than one page also gets
#: the summary.
PAGE_SIZE = 50
#: What a pool's accuracies are, by the answer source that ran: only these are a truth the
#: page may show, each labelled by where it comes from (in the legend, in the table).
TRUTH_LABELS = {
    "simulated": ("true accuracy (simulated)", "true accuracy"),
    "dataset": ("share correct over all its answers in the dataset", "dataset share"),
}
_DIGITS = 4  # decimals kept of every number in the page's data


def ordered(result: Result) -> list[WorkerResult]:
    """Workers by decision (in ``Decision``'s order, undecided last), then estimate, highest
    first (workers without one last), then rank."""
    order = {decision: index for index, decision in enumerate(Decision)}

    def key(w: WorkerResult) -> tuple[int, float, int]:
        estimate = w.estimate if math.isfinite(w.estimate) else -math.inf
        return order[w.decision], -estimate, w.rank

    return sorted(result.workers, key=key)


def truth_label(oracle: str, pool: WorkerPool) -> tuple[str, str] | None:
    """How to label the pool's accuracies on the page (legend, column), or None when they
    are not shown."""
    return TRUTH_LABELS.get(oracle) if pool.accuracies is not None else None


def workers_section(result: Result, pool: WorkerPool, truth: tuple[str, str] | None) -> str:
    """The per-worker plot and table with their filter and pager, and the data they draw."""
    data = _worker_data(result, pool, truth)
    options = "".join(
        f'<option value="{w}">{w} ({n:,})</option>' for w, n in result.word_counts().items() if n
    )
    script = resources.files(__package__).joinpath("workers.js").read_text(encoding="utf-8")
    payload = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    kind = result.extra.get("estimate")
    note = f"<br>Estimate: {html.escape(str(kind))}." if kind else ""
    return f"""<section id="workers"><h2>Workers ({len(result.workers):,})</h2>
<p class="note">Each worker's estimate and interval against the threshold or bar, beside the
gold questions it cost; sorted by decision, then estimate.{note}</p>
<form class="filter" onsubmit="return false">
<label>decision <select id="worker-decision"><option value="">all</option>{options}</select>
</label> <label>worker <input id="worker-name" type="search" placeholder="name contains">
</label> <button type="button" id="worker-previous">previous</button>
<span id="worker-page"></span> <button type="button" id="worker-next">next</button></form>
<div id="workers-plot"></div>
<table id="worker-table"><thead></thead><tbody></tbody></table>
<script type="application/json" id="worker-data">{payload}</script>
<script>{script}</script>
</section>"""


def summary_section(result: Result, pool: WorkerPool) -> str:
    """A large crowd at a glance: the histogram of estimates and the names per decision."""
    lists = []
    for word, count in result.word_counts().items():
        if word == Decision.UNDECIDED or not count:
            continue
        names = sorted(
            pool.workers[w.arm] for w in result.workers if result.word(w.decision) == word
        )
        lists.append(
            f"<details><summary>{html.escape(word)} ({count:,})</summary>"
            f"<p>{html.escape(', '.join(names))}</p></details>"
        )
    decided = "".join(lists) or '<p class="empty">No worker is decided.</p>'
    plot = figure_html(histogram_figure(result), "summary-plot")
    return (
        f'<section id="summary"><h2>The crowd at a glance</h2>\n{plot}\n'
        f"<h3>Decided workers</h3>\n{decided}\n</section>"
    )


def _worker_data(result: Result, pool: WorkerPool, truth: tuple[str, str] | None) -> dict[str, Any]:
    """Column arrays (one entry per worker, in page order), numbers rounded, each reason once;
    decisions by index into their shown words (``Result.word``)."""
    lines = ordered(result)
    decisions = [result.word(d) for d in Decision]
    reasons = list(dict.fromkeys(w.reason for w in lines))
    index = {reason: i for i, reason in enumerate(reasons)}
    data: dict[str, Any] = {
        "page": PAGE_SIZE,
        "decisions": decisions,
        "colours": [COLOURS[d] for d in Decision],
        "range": reward_range(result),
        "threshold": None if result.threshold is None else _numbers(
            (result.threshold.estimate, result.threshold.lower, result.threshold.upper)
        ),
        "name": [pool.workers[w.arm] for w in lines],
        "rank": [w.rank for w in lines],
        "decision": [list(Decision).index(w.decision) for w in lines],
        "leaning": [list(Decision).index(w.leaning) for w in lines],
        "estimate": _numbers(w.estimate for w in lines),
        "lower": _numbers(w.lower for w in lines),
        "upper": _numbers(w.upper for w in lines),
        "pulls": [w.pulls for w in lines],
        "reasons": reasons,
        "reason": [index[w.reason] for w in lines],
    }  # fmt: skip
    if any(w.share is not None for w in lines):
        data["share"] = _numbers(math.nan if w.share is None else w.share for w in lines)
    accuracies = pool.accuracies
    if truth is not None and accuracies is not None:
        data["truth"] = _numbers(accuracies[w.arm] for w in lines)
        data["truth_label"], data["truth_column"] = truth
    return data


def _numbers(values: Sequence[float] | Any) -> list[float | None]:
    return [round(float(v), _DIGITS) if math.isfinite(v) else None for v in values]
