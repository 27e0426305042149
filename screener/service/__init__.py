"""The reference gold-question service: the protocol of docs/live-api.md
(``screener.oracles.http.protocol``) served over simulated workers, with switchable faults.

None of this comes from the papers: it is the test double and demo server (``screener
serve``) that puts realistically misbehaving workers behind the http oracle.
"""

from screener.service.app import GoldService, start_service
from screener.service.arithmetic import arithmetic_bank
from screener.service.faults import Faults

__all__ = ["Faults", "GoldService", "arithmetic_bank", "start_service"]
