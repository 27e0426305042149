"""``screener gate --pool``: which pool a process serves, started or joined (docs/gate.md).

The first process naming a pool starts it, with the gate's settings and ``--shards``: the
pool row and its shards' gate runs in one transaction. A later process joins it and serves
it with the settings it started with, so it gives none (refused by name, as ``--resume``
refuses them). Of two processes starting the same pool at once, one creates it and the other
joins it, if it asked for the same pool; it is refused otherwise.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable

from screener.bank import GoldBank
from screener.cli.options import given_beside
from screener.errors import ConfigError
from screener.gate import GateSettings
from screener.gate.ids import new_gold_key
from screener.gate_service.journaled import gate_spec
from screener.journal import Journal, RunSpec, display_name
from screener.journal.pools import PoolExistsError, PoolRecord, PoolStore

__all__ = ["JOIN_OPTIONS", "MAX_SHARDS", "open_pool"]

#: What a process joining a pool may give: the pool, where it is, where to listen.
JOIN_OPTIONS = frozenset({"pool_name", "db", "host", "port"})
#: The most shards a pool may have (each is a gate run with its own journal connection).
MAX_SHARDS = 256


def open_pool(
    name: str,
    shards: int | None,
    settings_given: Callable[[], tuple[GateSettings, GoldBank | None]],
    db: str,
) -> PoolRecord:
    """Pool ``name`` of ``db``, joined, or started with ``settings_given()`` and ``shards``
    when there is none (module docstring)."""
    # A process joining (no --shards) never creates the database: a wrong --db writes nothing.
    with Journal(db) if shards is not None else Journal.open_existing(db) as journal:
        store = PoolStore(journal)
        found = store.find(name)
        if found is not None:
            _refuse_settings(name)
            return found
        if shards is None:
            raise ConfigError(
                f"there is no pool {name} in {display_name(db)} to join",
                "start it with --shards S and the gate's settings",
            )
        settings, bank = settings_given()
        try:
            return store.create(name, [_shard_spec(settings, bank) for _ in range(shards)])
        except PoolExistsError:  # another process started it since we looked
            return _joined_in_race(journal, store, name, shards, settings)


def _shard_spec(settings: GateSettings, bank: GoldBank | None) -> RunSpec:
    """A shard's run: the pool's settings, with a gold key of its own (a gold id names one
    shard's question, never another's)."""
    return gate_spec(dataclasses.replace(settings, gold_key=new_gold_key()), bank)


def _refuse_settings(name: str) -> None:
    given = given_beside(JOIN_OPTIONS)
    if given:
        names = ", ".join(given)
        raise ConfigError(
            f"pool {name} exists: a process joining it serves it with the settings it started "
            f"with, so {names} cannot be given",
            f"drop {names}, or name a new pool",
        )


def _joined_in_race(
    journal: Journal, store: PoolStore, name: str, shards: int, settings: GateSettings
) -> PoolRecord:
    found = store.find(name)
    assert found is not None  # pools are never deleted
    stored = journal.get_run(found.runs[0]).config.get("gate")
    if found.shards != shards or stored != json.loads(json.dumps(settings.to_dict())):
        raise ConfigError(
            f"pool {name} was just started by another process with other settings",
            "join it with --pool and --db alone, or name a new pool",
        )
    return found
