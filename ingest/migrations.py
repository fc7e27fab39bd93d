"""Migrations of the stored graph that need ingest's own code, and the list of them all.

``MIGRATIONS`` is every migration in version order: the Cypher-only ones of
``graph.migrations`` and those below. Add a new one with the next number.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from metisgraph.graph import GRAPH_MIGRATIONS, GraphStore, Migration, ordered
from metisgraph.ingest.errors import resign
from metisgraph.ingest.pipeline.families import assign_all_families

__all__ = ["MIGRATIONS", "resign_errors"]

_PAGE = 500
_PARKED = "~"  # cypher/migrations.cypher: park_resigned_errors, move_resigned_errors


def _pages(rows: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(rows), _PAGE):
        yield rows[start : start + _PAGE]


async def _changed_keys(
    store: GraphStore, project: str | None
) -> tuple[list[dict[str, Any]], int, int]:
    """Errors whose signature differs under the current signer, and counts of the rest."""
    moves: list[dict[str, Any]] = []
    unchanged = unsignable = 0
    after = ("", "")
    while page := await store.run(
        "error_page", project=project, after_project=after[0], after_key=after[1], limit=_PAGE
    ):
        for row in page:
            # A key '~…' was parked by a run cut short before it moved: it moves now under
            # its own key (keys are hexadecimal, so '~' is never a key's first character).
            parked = row["key"].startswith(_PARKED)
            old_key = row["key"].removeprefix(_PARKED)
            error = resign(row["kind"], row["sample"] or "")
            if error is None:
                unsignable += 1  # its sample no longer shows the error: the node stays as it is
            elif error.key == row["key"]:
                unchanged += 1
            else:
                props = error.node_properties()
                del props["sample"]  # the node keeps the sample it was first seen with
                moves.append(
                    {"project": row["project"], "old_key": old_key, "parked": parked, **props}
                )
        after = (page[-1]["project"], page[-1]["key"])
    return moves, unchanged, unsignable


async def resign_errors(store: GraphStore, project: str | None = None) -> dict[str, int]:
    """Sign every ``Error`` node again from its sample and move it to its new key.

    Nodes that now share a key merge into one, with all their relationships (HIT, RESOLVED,
    FIXES and any other, in and out, with their properties), the earliest first and latest
    last sighting, summed counts and their former keys. A node cannot split: it keeps one
    sample, so it moves whole to that sample's new key. Running it again changes nothing;
    a run cut short (each page is its own transaction) is finished by the next one.
    """
    moves, unchanged, unsignable = await _changed_keys(store, project)
    for rows in _pages([m for m in moves if not m["parked"]]):
        await store.run("park_resigned_errors", rows=rows)
    for rows in _pages(moves):
        await store.run("move_resigned_errors", rows=rows)
    targets = {(m["project"], m["key"]) for m in moves}
    return {
        "resigned": len(moves),
        "merged": len(moves) - len(targets),
        "unchanged": unchanged,
        "unsignable": unsignable,
    }


MIGRATIONS: tuple[Migration, ...] = ordered(
    GRAPH_MIGRATIONS,
    (
        Migration(1, "errors signed with the rules that hold across systems", resign_errors),
        Migration(
            2,
            "error families: signatures that differ where many values were seen",
            assign_all_families,
        ),
    ),
)
