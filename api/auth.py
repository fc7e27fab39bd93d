"""Who is calling, and what they may do in which project (tenant)."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from metisgraph.api.scopes import Scope, implied

__all__ = [
    "ALL_PROJECTS",
    "ANONYMOUS",
    "Caller",
    "Forbidden",
    "Limits",
    "TokenTable",
    "bearer",
    "digest",
    "parse_tokens",
]

ALL_PROJECTS = "*"


class Forbidden(PermissionError):
    """The caller may not do that in that project."""


@dataclass(frozen=True)
class Limits:
    """A caller's rates and quota; None: the service's default, 0: unlimited."""

    per_second: float | None = None
    per_minute: float | None = None
    records_per_day: int | None = None


@dataclass(frozen=True)
class Caller:
    """A caller and its grants: project (or ``*``) → the scopes it holds there, implied ones
    included. ``grants`` None: every scope everywhere (anonymous on loopback)."""

    name: str
    grants: Mapping[str, frozenset[Scope]] | None
    key_id: str | None = None  # a key stored in Neo4j (its quota is kept there)
    limits: Limits = field(default_factory=Limits)

    @classmethod
    def granted(
        cls,
        name: str,
        projects: Iterable[str],
        scopes: Iterable[Scope],
        key_id: str | None = None,
        limits: Limits | None = None,
    ) -> Caller:
        held = implied(scopes)
        return cls(name, {p: held for p in projects}, key_id, limits or Limits())

    def allows(self, project: str, scope: Scope) -> bool:
        if self.grants is None:
            return True
        held = self.grants.get(project, frozenset()) | self.grants.get(ALL_PROJECTS, frozenset())
        return scope in held

    def may_use(self, project: str) -> bool:
        """The caller may at least read the project."""
        return self.allows(project, Scope.read)

    def require(self, projects: str | Iterable[str], scope: Scope) -> None:
        wanted = [projects] if isinstance(projects, str) else list(projects)
        denied = sorted({p for p in wanted if not self.allows(p, scope)})
        if denied:
            raise Forbidden(f"not allowed to {scope.value} project(s): {', '.join(denied)}")


def digest(token: str) -> bytes:
    """What is kept of a token: its SHA-256 (tokens are long and random: no salt needed)."""
    return hashlib.sha256(token.encode()).digest()


@dataclass(frozen=True)
class TokenTable:
    """The tokens of METISGRAPH_API_TOKENS, kept as digests and compared in constant time."""

    entries: tuple[tuple[bytes, Caller], ...]

    def caller_for(self, token: str) -> Caller | None:
        presented = digest(token)
        found = None
        for kept, caller in self.entries:  # every entry compared: the time says nothing
            if hmac.compare_digest(kept, presented):
                found = caller
        return found


def bearer(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header."""
    if not authorization or not authorization.lower().startswith("bearer "):
        return None
    return authorization[7:].strip() or None


def parse_tokens(spec: str) -> TokenTable:
    """Parse 'token=projA,projB;token2=*' (every scope on those projects); a malformed entry
    is an error."""
    entries = []
    for n, entry in enumerate(filter(None, (e.strip() for e in spec.split(";"))), start=1):
        token, sep, projects = entry.partition("=")
        token = token.strip()
        if not sep or len(token) < 16:
            raise ValueError(
                f"METISGRAPH_API_TOKENS entry {n}: expected 'token=project,...' with a token "
                "of at least 16 characters"
            )
        names = {p.strip() for p in projects.split(",") if p.strip()}
        scope = {ALL_PROJECTS} if ALL_PROJECTS in names else names
        entries.append((digest(token), Caller.granted(f"token#{n}", scope, [Scope.admin])))
    return TokenTable(tuple(entries))


ANONYMOUS = Caller("anonymous", None)  # no tokens configured: loopback callers do everything
