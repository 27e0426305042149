// The per-worker plot and table of a screener report, a page of workers at a time, drawn from
// the column arrays in #worker-data (written by screener/reports/html/_workers.py): each
// worker's estimate and interval against the threshold (with the truth, where known), the
// gold questions it cost, and a table row. Worker names are categories, never numbers. It
// starts once plotly.js is unpacked (window.screenerPlotly, loader.js).
window.screenerPlotly.then(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("worker-data").textContent);
  const state = { page: 0, decision: "", name: "" };
  const fixed = (v) => (v === null ? "-" : v.toFixed(3));
  const byId = (id) => document.getElementById(id);

  function matching() {
    const rows = [];
    for (let i = 0; i < data.name.length; i++) {
      if (state.decision && data.decisions[data.decision[i]] !== state.decision) continue;
      if (state.name && !data.name[i].toLowerCase().includes(state.name)) continue;
      rows.push(i);
    }
    return rows;
  }

  function traces(rows) {
    const out = [];
    const groups = new Map();
    for (const i of rows) {
      const d = data.decision[i];
      if (!groups.has(d)) groups.set(d, []);
      groups.get(d).push(i);
    }
    for (const [d, group] of groups) {
      const pick = (key) => group.map((i) => data[key][i]);
      const gap = (a, b) => group.map((i) =>
        data[a][i] === null || data[b][i] === null ? null : data[a][i] - data[b][i]);
      out.push({
        type: "scatter", mode: "markers", name: data.decisions[d],
        x: pick("estimate"), y: pick("name"),
        marker: { color: data.colours[d], size: 8 },
        error_x: { type: "data", symmetric: false, array: gap("upper", "estimate"),
                   arrayminus: gap("estimate", "lower"), color: data.colours[d] },
        customdata: group.map((i) => [data.rank[i], data.pulls[i], fixed(data.lower[i]),
                                      fixed(data.upper[i]), data.reasons[data.reason[i]]]),
        hovertemplate: "<b>%{y}</b> (rank %{customdata[0]})<br>estimate %{x:.3f}, interval " +
          "[%{customdata[2]}, %{customdata[3]}]<br>%{customdata[1]} answers<br>" +
          "%{customdata[4]}<extra>" + data.decisions[d] + "</extra>",
      });
    }
    if (data.truth) {
      out.push({
        type: "scatter", mode: "markers", name: data.truth_label,
        x: rows.map((i) => data.truth[i]), y: rows.map((i) => data.name[i]),
        marker: { symbol: "line-ns-open", size: 12, color: "#444" },
        hovertemplate: "<b>%{y}</b>: " + data.truth_label + " %{x:.3f}<extra></extra>",
      });
    }
    out.push({
      type: "bar", orientation: "h", xaxis: "x2", showlegend: false,
      x: rows.map((i) => data.pulls[i]), y: rows.map((i) => data.name[i]),
      marker: { color: rows.map((i) => data.colours[data.decision[i]]) },
      hovertemplate: "<b>%{y}</b>: %{x:,} answers<extra></extra>",
    });
    return out;
  }

  function thresholdShapes() {
    const t = data.threshold;
    if (!t || t[0] === null) return { shapes: [], annotations: [] };
    const line = { type: "line", xref: "x", yref: "paper", x0: t[0], x1: t[0], y0: 0, y1: 1,
                   line: { dash: "dash", color: "#555" } };
    const shapes = [line];
    let label = "threshold " + fixed(t[0]);
    if (t[1] !== null && t[2] !== null && t[1] < t[2]) {
      shapes.unshift({ type: "rect", xref: "x", yref: "paper", x0: t[1], x1: t[2], y0: 0,
                       y1: 1, fillcolor: "#888", opacity: 0.2, line: { width: 0 },
                       layer: "below" });
      label += " [" + fixed(t[1]) + ", " + fixed(t[2]) + "]";
    } else {
      label += " (given)";
    }
    const note = { xref: "x", yref: "paper", x: t[0], y: 1, yanchor: "bottom",
                   showarrow: false, text: label };
    return { shapes: shapes, annotations: [note] };
  }

  function drawPlot(rows) {
    const height = 170 + 22 * rows.length;
    const marks = thresholdShapes();
    const layout = {
      height: height, margin: { l: 10, r: 10, t: 40, b: 110 },
      font: { family: "system-ui, sans-serif", size: 12 },
      xaxis: { domain: [0, 0.72], range: data.range, automargin: true,
               title: { text: "estimate and interval" } },
      xaxis2: { domain: [0.75, 1], automargin: true, title: { text: "gold questions asked" } },
      yaxis: { type: "category", categoryorder: "array", autorange: "reversed",
               categoryarray: rows.map((i) => data.name[i]), automargin: true },
      legend: { orientation: "h", y: -60 / (height - 150), yanchor: "top" },
      shapes: marks.shapes, annotations: marks.annotations,
    };
    Plotly.react("workers-plot", traces(rows), layout, { displaylogo: false, responsive: true });
  }

  function cell(text) {
    const td = document.createElement("td");
    td.textContent = text;
    return td;
  }

  function drawTable(rows) {
    const columns = ["rank", "worker", "decision", "leaning", "estimate", "interval"];
    if (data.share) columns.push("share");
    if (data.truth) columns.push(data.truth_column);
    columns.push("answers", "reason");
    const head = document.createElement("tr");
    for (const c of columns) {
      const th = document.createElement("th");
      th.textContent = c;
      head.appendChild(th);
    }
    byId("worker-table").tHead.replaceChildren(head);
    const body = rows.map((i) => {
      const tr = document.createElement("tr");
      const undecided = data.decisions[data.decision[i]] === "undecided";
      tr.style.borderLeft = "4px solid " + data.colours[data.decision[i]];
      const cells = [data.rank[i], data.name[i], data.decisions[data.decision[i]],
                     undecided ? data.decisions[data.leaning[i]] : "", fixed(data.estimate[i]),
                     "[" + fixed(data.lower[i]) + ", " + fixed(data.upper[i]) + "]"];
      if (data.share) cells.push(fixed(data.share[i]));
      if (data.truth) cells.push(fixed(data.truth[i]));
      cells.push(data.pulls[i].toLocaleString("en"), data.reasons[data.reason[i]]);
      cells.forEach((c) => tr.appendChild(cell(String(c))));
      return tr;
    });
    byId("worker-table").tBodies[0].replaceChildren(...body);
  }

  function draw() {
    const all = matching();
    const pages = Math.max(1, Math.ceil(all.length / data.page));
    state.page = Math.min(state.page, pages - 1);
    const first = state.page * data.page;
    const rows = all.slice(first, first + data.page);
    byId("worker-page").textContent = all.length
      ? "workers " + (first + 1) + "-" + (first + rows.length) + " of " + all.length
      : "no worker matches";
    byId("worker-previous").disabled = state.page === 0;
    byId("worker-next").disabled = state.page >= pages - 1;
    if (rows.length) drawPlot(rows);
    else Plotly.purge("workers-plot");
    drawTable(rows);
  }

  byId("worker-decision").addEventListener("change", (e) => {
    state.decision = e.target.value;
    state.page = 0;
    draw();
  });
  byId("worker-name").addEventListener("input", (e) => {
    state.name = e.target.value.trim().toLowerCase();
    state.page = 0;
    draw();
  });
  byId("worker-previous").addEventListener("click", () => { state.page -= 1; draw(); });
  byId("worker-next").addEventListener("click", () => { state.page += 1; draw(); });
  draw();
});
