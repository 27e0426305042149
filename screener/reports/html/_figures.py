"""The page's Plotly figures drawn from Python: answers over time, the threshold's history,
GOLD's ranking and the histogram of estimates (the per-worker plot is drawn in the page, from
its data, by ``workers.js``)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from screener.algorithms import Decision, Result, Threshold, WorkerResult
from screener.errors import ConfigError
from screener.reports.html._plotlyjs import embedded_figure

if TYPE_CHECKING:
    from screener.reports.html._history import RunHistory

#: One colour per decision: flagged workers red, kept ones blue or green, undecided orange.
COLOURS = {
    Decision.OUTLIER: "#d62728",
    Decision.BELOW: "#d62728",
    Decision.NORMAL: "#1f77b4",
    Decision.ABOVE: "#2ca02c",
    Decision.SELECTED: "#2ca02c",
    Decision.REJECTED: "#1f77b4",
    Decision.UNDECIDED: "#ff7f0e",
}
#: Bins of the histogram of estimates, over the reward range.
HISTOGRAM_BINS = 20
_ROW_PIXELS = 22  # height of one worker's row in GOLD's ranking
_CONFIG = {"displaylogo": False, "responsive": True}


def plotly() -> Any:
    """The plotly package (with graph_objects and io loaded), or the fix."""
    try:
        import plotly.graph_objects  # type: ignore[import-untyped]
        import plotly.io  # type: ignore[import-untyped]
    except ModuleNotFoundError as error:
        raise ConfigError(
            f"the HTML report needs plotly, which is not installed ({error})",
            "install crowd-screener[html]",
        ) from None
    return plotly


def reward_range(result: Result) -> list[float]:
    """The reward scale's ends, padded by 2% so that points on them stay visible."""
    low, high = float(result.params.get("lower", 0.0)), float(result.params.get("upper", 1.0))
    pad = (high - low) * 0.02
    return [low - pad, high + pad]


def figure_html(fig: Any, div_id: str) -> str:
    """The figure in the page, as its JSON, drawn there into element ``div_id`` (fixed, not
    plotly's random id: the same run always gives the same page)."""
    # The empty template: plotly.js's own plain style, and no theme copied into each figure.
    fig.update_layout(template="none", font={"family": "system-ui, sans-serif", "size": 12})
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    spec = json.loads(plotly().io.to_json(fig, validate=False))  # numpy arrays as lists
    return embedded_figure({**spec, "config": _CONFIG}, div_id)


def histogram_figure(result: Result) -> Any:
    """How many workers have an estimate in each bin, stacked by decision, with the
    threshold or bar."""
    go = plotly().graph_objects
    low, high = float(result.params.get("lower", 0.0)), float(result.params.get("upper", 1.0))
    edges = np.linspace(low, high, HISTOGRAM_BINS + 1)
    centres = (edges[:-1] + edges[1:]) / 2
    fig = go.Figure()
    for decision in dict.fromkeys(w.decision for w in result.ranking):
        estimates = [w.estimate for w in result.workers
                     if w.decision is decision and math.isfinite(w.estimate)]  # fmt: skip
        counts, _ = np.histogram(np.clip(estimates, low, high), bins=edges)
        fig.add_trace(
            go.Bar(
                x=centres.round(4).tolist(), y=counts.tolist(), width=(high - low) / HISTOGRAM_BINS,
                name=result.word(decision), marker={"color": COLOURS[decision]},
                hovertemplate="%{y:,} workers near %{x:.3f}<extra>" + result.word(decision)
                + "</extra>",
            )
        )  # fmt: skip
    _draw_threshold(fig, result.threshold)
    fig.update_layout(
        barmode="stack", height=320, xaxis_title="estimate", yaxis_title="workers",
        margin={"l": 10, "r": 10, "t": 30, "b": 40}, xaxis={"range": reward_range(result)},
    )  # fmt: skip
    return fig


def _draw_threshold(fig: Any, threshold: Threshold | None) -> None:
    if threshold is None or not math.isfinite(threshold.estimate):
        return
    label = f"threshold {threshold.estimate:.3f}"
    if threshold.lower < threshold.upper:
        fig.add_vrect(x0=threshold.lower, x1=threshold.upper, fillcolor="#888", opacity=0.2,
                      line_width=0, layer="below")  # fmt: skip
        label += f" [{threshold.lower:.3f}, {threshold.upper:.3f}]"
    else:
        label += " (given)"
    fig.add_vline(x=threshold.estimate, line_dash="dash", line_color="#555",
                  annotation_text=label, annotation_position="top")  # fmt: skip


def answers_figure(history: RunHistory) -> Any:
    if len(history.answers) < 2:
        return None
    go = plotly().graph_objects
    fig = go.Figure(
        go.Scatter(
            x=history.seconds, y=history.answers, mode="lines", name="answers",
            hovertemplate="%{y:,} answers after %{x:.3g} s<extra></extra>",
        )
    )  # fmt: skip
    fig.update_layout(
        height=320, xaxis_title="seconds since the run started", yaxis_title="answers received",
        margin={"l": 10, "r": 10, "t": 20, "b": 40},
    )  # fmt: skip
    return fig


def threshold_figure(history: RunHistory, result: Result) -> Any:
    go = plotly().graph_objects
    answers = [count for count, _ in history.threshold]
    points = [t for _, t in history.threshold]
    band = {"mode": "lines", "line": {"width": 0}, "hoverinfo": "skip", "showlegend": False}
    fig = go.Figure(
        [
            go.Scatter(x=answers, y=[_finite(t.upper) for t in points], **band),
            go.Scatter(
                x=answers, y=[_finite(t.lower) for t in points], fill="tonexty",
                fillcolor="rgba(100,100,100,0.25)", **band,
            ),
            go.Scatter(
                x=answers, y=[_finite(t.estimate) for t in points], mode="lines",
                name="threshold", line={"color": "#333"},
                customdata=[[t.lower, t.upper] for t in points],
                hovertemplate="after %{x:,} answers: %{y:.3f} "
                "[%{customdata[0]:.3f}, %{customdata[1]:.3f}]<extra></extra>",
            ),
        ]
    )  # fmt: skip
    fig.update_layout(
        height=340, xaxis_title="answers received", yaxis_title="threshold (reward scale)",
        margin={"l": 10, "r": 10, "t": 20, "b": 40}, showlegend=False,
    )  # fmt: skip
    fig.update_yaxes(range=reward_range(result))
    return fig


def gold_figure(result: Result, names: Sequence[str], most: int) -> Any:
    """Workers by GOLD's rank (the first ``most``): the round at which each left the
    majority's community."""
    go = plotly().graph_objects
    ranked: Sequence[WorkerResult] = result.ranking[:most]
    labels = [names[w.arm] for w in ranked]
    terminal = [w.score is not None for w in ranked]
    rounds = [w.score if w.score is not None else result.total_pulls for w in ranked]
    fig = go.Figure(
        go.Bar(
            x=rounds, y=labels, orientation="h",
            marker={
                "color": [COLOURS[w.decision] for w in ranked],
                "opacity": [1.0 if t else 0.35 for t in terminal],
            },
            text=[f"rank {w.rank}" if t else f"rank {w.rank}: never terminal"
                  for w, t in zip(ranked, terminal, strict=True)],
            textposition="inside", insidetextanchor="start",
            hovertemplate="<b>%{y}</b>: %{text}, round %{x:,}<extra></extra>",
        )
    )  # fmt: skip
    for key, label in (("first_round", "first terminal round"),
                       ("outlier_cutoff_round", "outlier cutoff")):  # fmt: skip
        value = result.extra.get(key)
        if value is not None:
            fig.add_vline(x=value, line_dash="dot", annotation_text=label)
    # Worker names are categories, even when they look like numbers.
    fig.update_yaxes(type="category", categoryorder="array", categoryarray=labels,
                     autorange="reversed")  # fmt: skip
    fig.update_layout(
        height=150 + _ROW_PIXELS * len(ranked), xaxis_title="terminal round (answers so far)",
        margin={"l": 10, "r": 10, "t": 30, "b": 40},
    )  # fmt: skip
    return fig


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None
