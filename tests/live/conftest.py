"""Fixtures of the live-service tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from screener.errors import OracleError
from screener.oracles import load_oracle_class


@pytest.fixture
def http_registered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Make ``load_oracle_class("http")`` work: use the installed entry point when there is
    one, else a throwaway distribution declaring it (the way a plugin package would)."""
    try:
        load_oracle_class("http")
    except OracleError:
        pass
    else:
        yield
        return
    root = tmp_path_factory.mktemp("entry_points")
    info = Path(root, "screener_http_test-0.dist-info")
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: screener-http-test\nVersion: 0\n")
    (info / "entry_points.txt").write_text(
        "[screener.oracles]\nhttp = screener.oracles.http:HttpOracle\n"
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(root))
        yield
