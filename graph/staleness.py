"""Invalidation when dependencies move: which snippets are stale in which environments.

A snippet is ``(:Snippet)-[:STALE_IN {package, verified, found, reason}]->(:Environment)``
when, in that environment,

* ``moved``: a package it requires has a version outside what it was verified with: outside
  every range of its requirement (ingest pins one from the environment it ran in), and,
  for versions it worked with that no range covers, another release line (another major;
  another minor under 0.x, where minors break);
* ``failed``: it failed there (a sandbox run, or a use reported in an episode there) after
  having worked somewhere; ``package`` names the first required package whose version there
  differs from every version it worked with, when one does.

The last report from an environment decides: a later success there clears the flag, and its
versions count as verified from then on. Judged again whenever an environment is written,
or a snippet is written, used or run: in every environment it has evidence in, unless only
the last word from some environments changed (a use of a stored snippet that requires no
package and had worked, or failed: ingest/pipeline/ingestor.py `judged_where`), then in
those. Queries: cypher/staleness.cypher.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from metisgraph.graph.store import GraphStore

__all__ = [
    "Staleness",
    "judge_stale",
    "outside_verified",
    "refresh_staleness",
    "same_line",
    "stale_ids",
]

Row = dict[str, Any]
# Pairs judged per project and call: every candidate of an ordinary batch, and a bound on
# one environment that many snippets require packages of.
_CANDIDATES = 20_000
_PAGE = 1_000


@dataclass(frozen=True)
class Staleness:
    """What refresh_staleness did: pairs judged, flags written, flags cleared."""

    judged: int = 0
    stale: int = 0
    cleared: int = 0


def _version(text: str | None) -> Version | None:
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None


def same_line(a: Version, b: Version) -> bool:
    """One release line: the same major version, and the same minor under 0.x."""
    return a.major == b.major and (a.major != 0 or a.minor == b.minor)


def outside_verified(found: str, specs: Iterable[str], working: Iterable[str]) -> bool | None:
    """Whether version `found` is outside what was verified: every range in `specs` (the
    requirement's specifiers), and the release line of every version in `working` (the
    versions it worked with) that no range covers. None when it cannot be told (nothing to
    compare with, or nothing parses)."""
    version = _version(found)
    if version is None:
        return None
    ranges = []
    for spec in filter(None, specs):
        try:
            ranges.append(SpecifierSet(spec))
        except InvalidSpecifier:
            continue
    worked = [v for v in (_version(w) for w in working) if v is not None]
    if any(r.contains(version, prereleases=True) for r in ranges):
        return False
    # With a range, it speaks for itself; a version it worked with outside every range (a
    # later success in a newer environment) adds that version's release line.
    lines = [w for w in worked if not any(r.contains(w, prereleases=True) for r in ranges)]
    if not ranges and not lines:
        return None
    return not any(same_line(version, w) for w in lines)


def _verified(package: Row) -> list[str]:
    """What the snippet was verified with, for this package: its ranges, then the versions
    it worked with."""
    specs = [s for s in package.get("specs") or [] if s]
    working = sorted({w for w in package.get("working") or [] if w})
    return [*dict.fromkeys(specs), *working]


def judge_stale(fact: Row) -> Row | None:
    """The STALE_IN row for one `stale_facts` row ({package, verified, found, reason}), or
    None when the snippet is fresh in that environment."""
    if fact.get("last_here") is True:  # the latest word from there: it works
        return None
    packages = [p for p in fact.get("packages") or [] if p and p.get("found")]
    for package in packages:
        if outside_verified(package["found"], package.get("specs") or [], package["working"]):
            return {
                "package": package["name"],
                "verified": _verified(package),
                "found": package["found"],
                "reason": "moved",
            }
    if fact.get("last_here") is False and fact.get("worked"):
        moved = next((p for p in packages if p["found"] not in (p.get("working") or [])), None)
        return {
            "package": moved["name"] if moved else None,
            "verified": _verified(moved) if moved else [],
            "found": moved["found"] if moved else None,
            "reason": "failed",
        }
    return None


async def refresh_staleness(
    store: GraphStore,
    project: str,
    *,
    envs: Sequence[str] = (),
    snippets: Sequence[str] = (),
    pairs: Sequence[tuple[str, str]] = (),
) -> Staleness:
    """Judge again the snippets of `project` in the environments `envs` (keys) were written
    to, every environment the `snippets` (ids) have evidence in, and the (snippet id,
    environment key) `pairs` (where a batch brought a snippet new evidence and nothing it was
    verified with moved); write what changed."""
    if not envs and not snippets and not pairs:
        return Staleness()
    found: list[Row] = []
    if envs or snippets:
        found = await store.run(
            "stale_candidates",
            project=project,
            envs=sorted(set(envs)),
            snippets=sorted(set(snippets)),
            limit=_CANDIDATES,
        )
    keys = dict.fromkeys([(p["snippet"], p["env"]) for p in found] + sorted(set(pairs)))
    todo = [{"snippet": snippet, "env": env} for snippet, env in keys]
    judged = stale = cleared = 0
    for start in range(0, len(todo), _PAGE):
        page = todo[start : start + _PAGE]
        facts = await store.run("stale_facts", project=project, pairs=page)
        marked, fresh = [], []
        for fact in facts:
            row = judge_stale(fact)
            key = {"snippet": fact["snippet"], "env": fact["env"]}
            if row is None:
                fresh.append(key)
            else:
                marked.append(key | row)
        await store.write_many(
            [("mark_stale", {"project": project, "rows": marked}),
             ("clear_stale", {"project": project, "rows": fresh})]
        )  # fmt: skip
        judged, stale, cleared = judged + len(facts), stale + len(marked), cleared + len(fresh)
    return Staleness(judged, stale, cleared)


async def stale_ids(store: GraphStore, project: str, ids: Sequence[str]) -> set[str]:
    """Which of these snippets are stale in some environment."""
    if not ids:
        return set()
    rows = await store.run("stale_snippet_ids", project=project, ids=list(ids))
    return {r["id"] for r in rows}
