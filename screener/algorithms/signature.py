"""What a class says of itself, read from its definition: an algorithm's keyword parameters
(its constructor's signature: the one source for ``params()``, the registry's checks and
``screener algorithms NAME``), and whether a class overrides the batch form of a hook below
its scalar form (the algorithms' hooks, the reward models' draws)."""

from __future__ import annotations

import functools
import inspect
import re
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from screener.algorithms.base import Algorithm

__all__ = ["Parameter", "overrides_batch_form", "parameters"]


@dataclass(frozen=True)
class Parameter:
    """One keyword parameter of an algorithm's constructor: its default (``required`` when it
    has none), its type as written, and its values when the type is a ``Literal``."""

    name: str
    default: Any
    required: bool
    kind: str
    choices: tuple[str, ...]


@functools.cache
def parameters(cls: type[Algorithm]) -> tuple[Parameter, ...]:
    """The keyword parameters of ``cls``, following ``**kwargs`` up to the base classes (the
    subclass's default wins), in the order a reader meets them.

    Cached per class: a class's signature does not change, and ``params()`` (every
    ``result()``, so every progress line) would otherwise read it and its type hints anew."""
    found: dict[str, Parameter] = {}
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        signature = inspect.signature(init).parameters.values()
        hints = typing.get_type_hints(init)
        for p in signature:
            if p.kind is p.KEYWORD_ONLY and p.name not in found:
                found[p.name] = _parameter(p, hints.get(p.name))
        if not any(p.kind is p.VAR_KEYWORD for p in signature):
            break
    return tuple(found.values())


def _parameter(p: inspect.Parameter, hint: Any) -> Parameter:
    literal = typing.get_origin(hint) is typing.Literal
    kind = re.sub(r"\btyping\.|<class '(\w+)'>", r"\1", str(hint)) if hint is not None else ""
    return Parameter(
        name=p.name,
        default=None if p.default is p.empty else p.default,
        required=p.default is p.empty,
        kind="one of" if literal else kind,
        choices=tuple(str(v) for v in typing.get_args(hint)) if literal else (),
    )


def overrides_batch_form(cls: type, batch: str, scalar: str) -> bool:
    """True when ``cls`` (or a class it inherits from) overrides hook ``batch`` below the
    class that gives its scalar form ``scalar``: that scalar form would skip the override,
    so the class must fall back to one that calls ``batch``."""
    for klass in cls.__mro__:
        if scalar in vars(klass):
            return False
        if batch in vars(klass):
            return True
    return False
