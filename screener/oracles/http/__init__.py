"""The http oracle and the JSON protocol it speaks (docs/live-api.md).

``protocol`` holds the wire format both sides share (paths, the assignment and answer
records, webhook signatures); ``oracle`` is the client, ``settings`` its checked options and
``client`` its calls to the service, retried. The reference service that serves
the protocol over simulated workers is its own package, ``screener.service``.
"""

from screener.oracles.http.oracle import NEEDS_BANK, HttpOracle
from screener.oracles.http.settings import HttpSettings

__all__ = ["NEEDS_BANK", "HttpOracle", "HttpSettings"]
