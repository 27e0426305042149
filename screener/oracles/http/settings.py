"""The http oracle's settings: one frozen record, checked once, read from run-file options and
written back by ``describe()`` so that a journaled run reopens the same way."""

from __future__ import annotations

import math
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from screener.bank import parse_number
from screener.errors import ConfigError
from screener.oracles.http.protocol import MAX_LIMIT

__all__ = ["BACKOFF_CAP", "HttpSettings"]

DELIVERIES = ("poll", "webhook")
#: The longest wait between two tries of a request, in seconds.
BACKOFF_CAP = 30.0
_NAMESPACE_CHARACTERS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-"
)


@dataclass(frozen=True)
class HttpSettings:
    """Where the service is and how to talk to it: the options of ``HttpOracle`` (its
    ``OPTIONS`` say what each means). Every value is checked on construction, each refusal
    one line naming the option.
    """

    url: str
    namespace: str
    token_env: str = "SCREENER_TOKEN"
    delivery: str = "poll"
    poll_wait: float = 10.0
    batch: int = 100
    request_timeout: float = 10.0
    max_attempts: int = 5
    backoff: float = 0.2
    webhook_host: str = "127.0.0.1"
    webhook_port: int = 0
    webhook_url: str | None = None

    def __post_init__(self) -> None:
        checked = {
            "url": _check_url(self.url, "url"),
            "namespace": _check_namespace(self.namespace),
            "delivery": _check_choice(self.delivery, "delivery", DELIVERIES),
            "poll_wait": _check_range(self.poll_wait, "poll_wait", 0.0, 60.0),
            "batch": int(_check_range(self.batch, "batch", 1, MAX_LIMIT)),
            "request_timeout": _check_range(self.request_timeout, "request_timeout", 1e-3, 3600.0),
            "max_attempts": int(_check_range(self.max_attempts, "max_attempts", 1, 100)),
            "backoff": _check_range(self.backoff, "backoff", 0.0, BACKOFF_CAP),
            "webhook_port": int(_check_range(self.webhook_port, "webhook_port", 0, 65535)),
            "webhook_url": None
            if self.webhook_url is None
            else _check_url(self.webhook_url, "webhook_url"),
        }
        for name, value in checked.items():
            object.__setattr__(self, name, value)  # normalised once, then frozen

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> HttpSettings:
        """Settings from run-file options (strings or numbers); a namespace is generated per
        run when none is given."""
        fields: dict[str, Any] = {
            "namespace": str(options.get("namespace") or uuid.uuid4().hex[:12]),
            "token_env": str(options.get("token_env", "SCREENER_TOKEN")),
            "delivery": str(options.get("delivery", "poll")),
            "webhook_host": str(options.get("webhook_host", "127.0.0.1")),
            "webhook_url": options.get("webhook_url"),
        }
        for key, kind in _NUMBERS.items():
            if options.get(key) is not None:
                fields[key] = _number(options[key], key, kind)
        return cls(str(options["url"]), **fields)

    def as_options(self) -> dict[str, Any]:
        """The options ``from_options`` reads back into these settings (no ``webhook_url``
        when unset)."""
        options = {name: getattr(self, name) for name in _DESCRIBED}
        if self.webhook_url is not None:
            options["webhook_url"] = self.webhook_url
        return options


#: The options ``as_options`` writes, in the order a journaled run has always stored them.
_DESCRIBED = (
    "url",
    "token_env",
    "delivery",
    "poll_wait",
    "batch",
    "request_timeout",
    "max_attempts",
    "backoff",
    "webhook_host",
    "webhook_port",
    "namespace",
)
_NUMBERS: dict[str, type[int] | type[float]] = {
    "poll_wait": float,
    "batch": int,
    "request_timeout": float,
    "max_attempts": int,
    "backoff": float,
    "webhook_port": int,
}


def _number(value: object, name: str, kind: type[int] | type[float]) -> float:
    number = None if isinstance(value, bool) else parse_number(value)
    if number is None:
        raise ConfigError(f"http oracle option {name} must be a number, got {value!r}")
    if kind is int:
        if not number.is_integer():
            raise ConfigError(f"http oracle option {name} must be a whole number, got {value!r}")
        return int(number)
    return number


def _check_range(value: float, name: str, low: float, high: float) -> float:
    if not (math.isfinite(value) and low <= value <= high):
        raise ConfigError(f"http oracle option {name} must lie in [{low:g}, {high:g}], got {value}")
    return value


def _check_choice(value: str, name: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise ConfigError(f"http oracle option {name} is {value!r}", f"use {' or '.join(choices)}")
    return value


def _check_url(url: str, name: str) -> str:
    parts = urlsplit(str(url))
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"http oracle option {name} is not an http(s) URL: {url!r}")
    if parts.username is not None or parts.password is not None:
        # Said without echoing the URL: it holds a credential.
        raise ConfigError(
            f"http oracle option {name} must not carry credentials",
            "put the token in the environment variable named by token_env",
        )
    return str(url).rstrip("/")


def _check_namespace(namespace: str) -> str:
    if not namespace or len(namespace) > 64 or not set(namespace) <= _NAMESPACE_CHARACTERS:
        raise ConfigError(
            f"http oracle namespace {namespace!r} is not usable",
            "use 1-64 letters, digits, '_', '.' or '-'",
        )
    return namespace
