"""Live gold-question services over HTTP: the JSON API, a reference service, and its helpers.

None of this comes from the papers: it is the plumbing that puts real (or realistically
simulated) workers behind the oracle contract. See docs/live-api.md for the API.
"""

from screener.live.api import (
    ANSWERS_PATH,
    API_PREFIX,
    ASSIGNMENTS_PATH,
    SIGNATURE_HEADER,
    WEBHOOK_PATH,
    AnswerItem,
    ApiFormatError,
    Assignment,
    Rejection,
    SubmitResult,
    sign,
    verify,
)

__all__ = [
    "ANSWERS_PATH",
    "API_PREFIX",
    "ASSIGNMENTS_PATH",
    "SIGNATURE_HEADER",
    "WEBHOOK_PATH",
    "AnswerItem",
    "ApiFormatError",
    "Assignment",
    "Rejection",
    "SubmitResult",
    "sign",
    "verify",
]
