"""The gate served over HTTP (``screener gate``; the API in docs/gate-api.md).

``GateSession``: a ``screener.gate.Gate`` whose every call is journaled, with the decisions
it made, before its reply, in a run that one process owns through the journal's lease, and
that a restarted process rebuilds by replaying the journaled calls (``journaled``) after the
gate's latest snapshot (``snapshots``).
``gate_app`` / ``serve_gate``: the aiohttp service over a session; ``GateClient``: an asyncio
client of that API (the platform stand-in's), ``protocol``: what both sides read and write.
"""

from screener.gate_service.app import gate_app, listen, serve_gate
from screener.gate_service.client import GateClient
from screener.gate_service.journaled import gate_spec, replay_gate, run_gate
from screener.gate_service.protocol import (
    TOKEN_ENV,
    AnswerItem,
    GateApiError,
    ItemEntry,
    LabelItem,
    StreamQuery,
)
from screener.gate_service.session import GateSession, GateStoppedError
from screener.gate_service.snapshots import RebuiltGate, rebuild_gate
from screener.runs.stored import GATE_ORACLE

__all__ = [
    "GATE_ORACLE",
    "TOKEN_ENV",
    "AnswerItem",
    "GateApiError",
    "GateClient",
    "GateSession",
    "GateStoppedError",
    "ItemEntry",
    "LabelItem",
    "RebuiltGate",
    "StreamQuery",
    "gate_app",
    "gate_spec",
    "listen",
    "rebuild_gate",
    "replay_gate",
    "run_gate",
    "serve_gate",
]
