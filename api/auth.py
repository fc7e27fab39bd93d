"""Who is calling and which projects (tenants) they may use."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["ANONYMOUS", "Caller", "Forbidden", "TokenTable", "parse_tokens"]


class Forbidden(PermissionError):
    """The caller may not use that project."""


@dataclass(frozen=True)
class Caller:
    name: str
    projects: frozenset[str] | None  # None: every project (anonymous on loopback, or '*')

    def may_use(self, project: str) -> bool:
        return self.projects is None or project in self.projects

    def require(self, projects: str | Iterable[str]) -> None:
        wanted = [projects] if isinstance(projects, str) else list(projects)
        denied = [p for p in wanted if not self.may_use(p)]
        if denied:
            raise Forbidden(f"not allowed to use project(s): {', '.join(sorted(denied))}")


ANONYMOUS = Caller("anonymous", None)  # no tokens configured: loopback callers read everything


@dataclass(frozen=True)
class TokenTable:
    callers: dict[str, Caller]

    def caller_for(self, authorization: str | None) -> Caller | None:
        if not authorization or not authorization.lower().startswith("bearer "):
            return None
        return self.callers.get(authorization[7:].strip())


def parse_tokens(spec: str) -> TokenTable:
    """Parse 'token=projA,projB;token2=*' into callers; a malformed entry is an error."""
    callers: dict[str, Caller] = {}
    for n, entry in enumerate(filter(None, (e.strip() for e in spec.split(";"))), start=1):
        token, sep, projects = entry.partition("=")
        token = token.strip()
        if not sep or len(token) < 16:
            raise ValueError(
                f"METISGRAPH_API_TOKENS entry {n}: expected 'token=project,...' with a token "
                "of at least 16 characters"
            )
        names = frozenset(p.strip() for p in projects.split(",") if p.strip())
        callers[token] = Caller(f"token#{n}", None if "*" in names else names)
    return TokenTable(callers)
