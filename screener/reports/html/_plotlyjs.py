"""plotly.js in the page, once and small: the basic bundle (the scatter, bar and pie traces:
every figure the report draws is scatter or bar), vendored in ``vendor/`` with its licence,
gzip-compressed and base64-encoded into the page, and unpacked there by ``loader.js`` with the
browser's DecompressionStream, which then draws each figure from its JSON.

Nothing is fetched: the page opens offline. The compression is deterministic (no timestamp),
so the same run always gives the same page.
"""

from __future__ import annotations

import base64
import functools
import gzip
import json
from importlib import resources
from typing import Any

__all__ = ["BUNDLE", "embedded_figure", "packed_plotly_js", "page_scripts", "plotly_js"]

#: The vendored bundle, beside its licence and provenance (vendor/README.md).
BUNDLE = "vendor/plotly-basic.min.js"


def plotly_js() -> str:
    """The vendored plotly.js bundle's source."""
    return resources.files(__package__).joinpath(BUNDLE).read_text(encoding="utf-8")


@functools.cache
def packed_plotly_js() -> str:
    """The bundle as the page carries it: gzip (level 9, no timestamp), then base64."""
    packed = gzip.compress(plotly_js().encode("utf-8"), compresslevel=9, mtime=0)
    return base64.b64encode(packed).decode("ascii")


def page_scripts() -> str:
    """The page head's scripts: the packed bundle, and the loader that runs it."""
    loader = resources.files(__package__).joinpath("loader.js").read_text(encoding="utf-8")
    return (
        f'<script type="application/octet-stream" id="plotly-js">{packed_plotly_js()}</script>\n'
        f"<script>{loader}</script>"
    )


def embedded_figure(spec: dict[str, Any], div_id: str) -> str:
    """A figure's element and its JSON (``data``, ``layout``, ``config``), drawn by the loader
    into the element ``div_id`` once plotly.js is unpacked."""
    payload = json.dumps(spec, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    return (
        f'<div id="{div_id}"></div>\n'
        f'<script type="application/json" data-figure="{div_id}">{payload}</script>'
    )
