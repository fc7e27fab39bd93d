"""From what a caller names an error by to the Error nodes that stand for it.

An error is named by its global id, its key (16 hex characters), its signature, or a raw
error text, signed the way ingest signs one (sanitized first, then every error in it).
Which Error nodes stand for those keys in the projects is graph.lineage.error_members.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from metisgraph.api.auth import Caller
from metisgraph.api.graphql.context import UserError
from metisgraph.api.graphql.tenancy import readable_ref
from metisgraph.graph import GraphStore
from metisgraph.graph.lineage import ErrorKey, error_members
from metisgraph.ingest.errors import extract_errors, signature_key
from metisgraph.ingest.sanitize import sanitize

__all__ = ["MAX_ERROR_TEXT", "ErrorName", "error_keys", "resolve_error"]

MAX_ERROR_TEXT = 200_000
_KEY = re.compile(r"^[0-9a-f]{16}$")


@dataclass(frozen=True)
class ErrorName:
    """Exactly one of: a global id, a key, a signature, a raw text."""

    id: str | None = None
    key: str | None = None
    signature: str | None = None
    text: str | None = None


def error_keys(caller: Caller, name: ErrorName, argument: str = "error") -> list[str]:
    """The keys of the errors named (none when an id names what the caller cannot read)."""
    given = [(f, v) for f, v in vars(name).items() if v is not None]
    if len(given) != 1:
        raise UserError(f"{argument}: give exactly one of id, key, signature or text")
    field, value = given[0]
    if not value.strip():
        raise UserError(f"{argument}.{field}: must not be empty")
    if field == "id":
        ref = readable_ref(caller, value, "Error")
        return [ref.key] if ref else []
    if field == "key":
        if not _KEY.match(value.strip()):
            raise UserError(f"{argument}.key: 16 hexadecimal characters, got {value[:40]!r}")
        return [value.strip()]
    if field == "signature":
        return [signature_key(value)]
    if len(value) > MAX_ERROR_TEXT:
        raise UserError(f"{argument}.text: at most {MAX_ERROR_TEXT:,} characters")
    found = extract_errors(sanitize(value).text)
    if not found:
        raise UserError(f"{argument}.text: no error found in the text")
    return list(dict.fromkeys(e.key for e in found))


async def resolve_error(
    store: GraphStore, caller: Caller, projects: list[str], name: ErrorName
) -> list[ErrorKey]:
    """The Error nodes of ``projects`` (already checked readable) that stand for the error."""
    return await error_members(store, projects, error_keys(caller, name))
