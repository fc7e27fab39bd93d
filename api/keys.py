"""API keys kept in Neo4j: scoped per project, issued, listed and revoked by `metisgraph keys`.

A key is ``mgk_<key id>_<secret>``; the store keeps the key id and the SHA-256 of the whole
token, never the token. A request's key is found by its id and its digest compared in
constant time. What was found is remembered for ``KEY_CACHE_S`` at most, so a revoked key
stops working within that time on every server, without any message between them.
"""

from __future__ import annotations

import hmac
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from metisgraph.api.auth import ALL_PROJECTS, Caller, Limits, digest
from metisgraph.api.scopes import Scope, parse_scopes
from metisgraph.graph import GraphStore

__all__ = [
    "KEY_CACHE_S",
    "IssuedKey",
    "KeyInfo",
    "KeyRing",
    "QuotaExceeded",
    "create_key",
    "list_keys",
    "reserve_records",
    "revoke_key",
]

KEY_CACHE_S = 5.0
_CACHED_KEYS = 10_000
_TOKEN = re.compile(r"mgk_([0-9a-f]{12})_[A-Za-z0-9_-]{43}")


class QuotaExceeded(Exception):
    """A key's records for the day are used up; ``retry_after`` seconds until the next day."""

    def __init__(self, limit: int, retry_after: int) -> None:
        super().__init__(f"this key's quota of {limit:,} records a day is used up")
        self.retry_after = retry_after


@dataclass(frozen=True)
class KeyInfo:
    """What `keys list` shows of a key (never its secret)."""

    key_id: str
    note: str | None
    projects: list[str]
    scopes: list[str]
    limits: Limits
    created_at: Any = None
    created_by: str | None = None
    revoked_at: Any = None


@dataclass(frozen=True)
class IssuedKey:
    token: str  # shown once, at creation
    info: KeyInfo


def _limits(row: dict[str, Any]) -> Limits:
    return Limits(row.get("per_second"), row.get("per_minute"), row.get("records_per_day"))


def _info(row: dict[str, Any]) -> KeyInfo:
    return KeyInfo(
        key_id=row["key_id"],
        note=row.get("note"),
        projects=list(row["projects"]),
        scopes=list(row["scopes"]),
        limits=_limits(row),
        created_at=row.get("created_at"),
        created_by=row.get("created_by"),
        revoked_at=row.get("revoked_at"),
    )


async def create_key(
    store: GraphStore,
    projects: Sequence[str],
    scopes: Sequence[str],
    *,
    note: str | None = None,
    limits: Limits | None = None,
    actor: str,
) -> IssuedKey:
    """Issue a key for ``projects`` (``*``: all) with ``scopes``; the token is returned once."""
    if not projects:
        raise ValueError("a key needs at least one project (or '*')")
    granted = sorted(s.value for s in parse_scopes(scopes))
    if not granted:
        raise ValueError("a key needs at least one scope: read, write, review or admin")
    limits = limits or Limits()
    key_id = secrets.token_hex(6)
    token = f"mgk_{key_id}_{secrets.token_urlsafe(32)}"
    row = {
        "key_id": key_id,
        "digest": digest(token).hex(),
        "note": note,
        "projects": sorted(set(projects)),
        "scopes": granted,
        "per_second": limits.per_second,
        "per_minute": limits.per_minute,
        "records_per_day": limits.records_per_day,
    }
    await store.run("create_key", actor=actor, **row)
    return IssuedKey(token, _info(row))


async def list_keys(store: GraphStore, project: str | None = None) -> list[KeyInfo]:
    """Every key (revoked ones too), or those that reach ``project``."""
    return [_info(r) for r in await store.run("list_keys", project=project)]


async def revoke_key(store: GraphStore, key_id: str, *, actor: str) -> list[str]:
    """Revoke a key; returns the projects it reached. KeyError: no such live key."""
    rows = await store.run("revoke_key", key_id=key_id, actor=actor)
    if not rows:
        raise KeyError(key_id)
    return list(rows[0]["projects"])


class KeyRing:
    """Resolves presented tokens to callers, remembering each key id for ``ttl`` seconds
    (unknown and revoked ids too, so guessing costs no query per request)."""

    def __init__(
        self,
        store: GraphStore,
        ttl: float = KEY_CACHE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.ttl = ttl
        self.clock = clock
        self._cache: OrderedDict[str, tuple[float, dict[str, Any] | None]] = OrderedDict()

    @staticmethod
    def is_key(token: str) -> bool:
        return _TOKEN.fullmatch(token) is not None

    async def caller_for(self, token: str) -> Caller | None:
        match = _TOKEN.fullmatch(token)
        if match is None:
            return None
        key_id = match.group(1)
        row = await self._row(key_id)
        if row is None or not hmac.compare_digest(bytes.fromhex(row["digest"]), digest(token)):
            return None
        scopes = parse_scopes(row["scopes"])
        projects = row["projects"]
        name = f"key:{key_id}" + (f" ({row['note']})" if row.get("note") else "")
        return Caller.granted(name, projects, scopes, key_id=key_id, limits=_limits(row))

    async def _row(self, key_id: str) -> dict[str, Any] | None:
        now = self.clock()
        cached = self._cache.get(key_id)
        if cached is not None and now - cached[0] < self.ttl:
            return cached[1]
        rows = await self.store.run("key_by_id", key_id=key_id)
        self._cache[key_id] = (now, rows[0] if rows else None)
        self._cache.move_to_end(key_id)
        while len(self._cache) > _CACHED_KEYS:
            self._cache.popitem(last=False)
        return rows[0] if rows else None


async def reserve_records(store: GraphStore, caller: Caller, n: int, default: int) -> None:
    """Take ``n`` records from a stored key's quota for today (UTC); QuotaExceeded when it
    has no room. Other callers, and a limit of 0, are not counted."""
    limit = caller.limits.records_per_day
    limit = default if limit is None else limit
    if caller.key_id is None or not limit or n <= 0:
        return
    now = datetime.now(UTC)
    rows = await store.run(
        "reserve_records", key_id=caller.key_id, day=now.date().isoformat(), n=n, limit=limit
    )
    if not rows:
        midnight = datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), UTC)
        raise QuotaExceeded(limit, max(1, int((midnight - now).total_seconds()) + 1))


def grants_everything(caller: Caller) -> bool:
    """The caller holds admin on every project."""
    return caller.allows(ALL_PROJECTS, Scope.admin) and (
        caller.grants is None or ALL_PROJECTS in caller.grants
    )
