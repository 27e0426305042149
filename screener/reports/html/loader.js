// plotly.js (the basic bundle) arrives in the page gzip-compressed and base64-encoded, in
// #plotly-js: it is unpacked with the browser's DecompressionStream and run, and then every
// figure in a script[data-figure] is drawn into the element of that id. window.screenerPlotly
// is the promise of all that, for the page's other scripts (workers.js).
window.screenerPlotly = (async function () {
  "use strict";
  const packed = document.getElementById("plotly-js").textContent.trim();
  const bytes = Uint8Array.from(atob(packed), (c) => c.charCodeAt(0));
  const unpacked = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  const source = document.createElement("script");
  source.textContent = await new Response(unpacked).text();
  document.head.appendChild(source);
  if (document.readyState === "loading") {
    await new Promise((done) => document.addEventListener("DOMContentLoaded", done));
  }
  for (const figure of document.querySelectorAll("script[data-figure]")) {
    const spec = JSON.parse(figure.textContent);
    window.Plotly.newPlot(figure.dataset.figure, spec.data, spec.layout, spec.config);
  }
  return window.Plotly;
})();
window.screenerPlotly.catch((error) => {
  const show = () => {
    const note = document.createElement("p");
    note.className = "verdict not-held";
    note.textContent = "The plots could not be drawn (" + error + "): this page needs a " +
      "browser with DecompressionStream (Chrome 80, Firefox 113, Safari 16.4 or later).";
    document.body.prepend(note);
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", show);
  else show();
});
