"""Environments: the OS, runtime and packages an episode ran in, as a stable fingerprint.

Evidence comes from what an agent saw (``python --version``, ``pip freeze``, ``pip
list``, ``uname -a``, ``/etc/os-release``, ``java -version``, ``mvn -v``, ``node -v``,
``go version``, ``rustc --version``, lock files and manifests) and from fields the
caller states. Each piece of evidence has a rank: a direct statement (a version
printed by the tool, a lock file) beats a secondary one (``mvn -v`` naming the JVM)
beats an inference (a ``python3.9/site-packages`` path, a version range in a
manifest). For one field the highest rank wins, and among equals the latest, since
a later ``pip freeze`` follows an upgrade. Explicit fields win over all of it.

The same environment gives the same ``key`` (a hash over every field and package),
which is the identity of its ``Environment`` node.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from metisgraph.ingest.environment.evidence import (
    RUNTIMES,
    Evidence,
    Parser,
    arch_name,
    normalize_package,
    os_name,
)
from metisgraph.ingest.environment.packages import PACKAGE_PARSERS
from metisgraph.ingest.environment.runtimes import RUNTIME_PARSERS, node_version
from metisgraph.ingest.environment.systems import SYSTEM_PARSERS
from metisgraph.ingest.long_runs import without_long_runs
from metisgraph.ingest.records import EnvironmentInput
from metisgraph.ingest.sanitize.redaction import redact

__all__ = ["EnvironmentFingerprint", "environment_row", "extract_environment", "fingerprint"]


@dataclass(frozen=True)
class EnvironmentFingerprint:
    """A runtime context: OS, architecture, runtime and packages, with its identity hash."""

    os: str | None
    os_version: str | None
    arch: str | None
    runtime: str | None
    runtime_version: str | None
    packages: dict[str, str]
    key: str


def _normalize_stated(name: str) -> str:
    """A package named by a caller, ecosystem unknown: Maven and npm names keep their dots."""
    if ":" in name or name.startswith("@") or "/" in name:
        return normalize_package(name, "other")
    return normalize_package(name)


# In this order: runtimes, then the system, then packages (a later sighting of the same
# field and rank wins).
_PARSERS: tuple[Parser, ...] = (*RUNTIME_PARSERS, *SYSTEM_PARSERS, *PACKAGE_PARSERS)


def fingerprint(
    os: str | None = None,
    os_version: str | None = None,
    arch: str | None = None,
    runtime: str | None = None,
    runtime_version: str | None = None,
    packages: dict[str, str] | None = None,
) -> EnvironmentFingerprint:
    """A fingerprint from known fields; ``key`` hashes all of them, so equal means equal."""
    packages = dict(sorted((packages or {}).items()))
    canonical = json.dumps(
        [os, os_version, arch, runtime, runtime_version, packages], separators=(",", ":")
    )
    key = hashlib.sha256(canonical.encode()).hexdigest()
    return EnvironmentFingerprint(os, os_version, arch, runtime, runtime_version, packages, key)


def environment_row(
    project: str, env: EnvironmentFingerprint, episode_ids: list[str]
) -> dict[str, Any]:
    """The row `upsert_environments` (cypher/write.cypher) writes an environment from."""
    return {
        "project": project,
        "key": env.key,
        "os": env.os,
        "os_version": env.os_version,
        "arch": env.arch,
        "runtime": env.runtime,
        "runtime_version": env.runtime_version,
        "packages": [{"name": n, "version": v} for n, v in sorted(env.packages.items())],
        "episode_ids": episode_ids,
    }


@dataclass
class _Known:
    """The fields of an environment as they are settled."""

    os: str | None = None
    os_version: str | None = None
    arch: str | None = None
    runtime: str | None = None
    runtime_version: str | None = None
    packages: dict[str, str] = field(default_factory=dict)

    def empty(self) -> bool:
        fields = (self.os, self.os_version, self.arch, self.runtime, self.runtime_version)
        return not any(fields) and not self.packages


def _best(table: dict[str, tuple[int, int, str]], name: str) -> str | None:
    held = table.get(name)
    return held[2] if held else None


def _from_evidence(found: Evidence) -> _Known:
    """The winning value of every field; runtimes after the first become packages."""
    runtimes = sorted(found.runtimes.items(), key=lambda item: (-item[1][0], item[1][1]))
    known = _Known(
        os=_best(found.fields, "os"),
        os_version=_best(found.fields, "os_version"),
        arch=_best(found.fields, "arch"),
        packages={name: value for name, (_, _, value) in found.packages.items()},
    )
    if runtimes:
        known.runtime, known.runtime_version = runtimes[0][0], runtimes[0][1][2]
    for name, (_, _, version) in runtimes[1:]:
        known.packages.setdefault(name, version)
    return known


def _stated(value: str) -> str:
    """A stated field as stored: stripped, secrets redacted (a caller's text, like any other)."""
    return redact(value.strip()).text


def _apply_stated(explicit: EnvironmentInput, known: _Known) -> None:
    """Explicit fields over extracted ones; another stated runtime drops the extracted version."""
    if explicit.runtime:
        stated = _stated(explicit.runtime).lower()
        runtime = RUNTIMES.get(stated, stated)
        if runtime != known.runtime:
            known.runtime_version = None
        known.runtime = runtime
    if explicit.os:
        system = os_name(_stated(explicit.os))
        if system != known.os:
            known.os_version = None  # an extracted version belongs to the extracted OS
        known.os = system
    if explicit.arch:
        known.arch = arch_name(_stated(explicit.arch))
    if explicit.os_version:
        known.os_version = _stated(explicit.os_version)
    if explicit.runtime_version:
        known.runtime_version = _stated(explicit.runtime_version)
    for name, version in explicit.packages.items():
        known.packages[_normalize_stated(_stated(name))] = _stated(version)


def extract_environment(
    texts: Iterable[str], explicit: EnvironmentInput | None = None
) -> EnvironmentFingerprint | None:
    """The environment the texts show, with explicit fields winning; None when nothing is known."""
    found = Evidence()
    observed = [text for text in texts if text]
    for text in observed:
        scanned = without_long_runs(text)  # a run past any name's length costs its square
        for parse in _PARSERS:
            parse(scanned, found)
    node_version(observed, found)
    known = _from_evidence(found)
    if explicit is not None:
        _apply_stated(explicit, known)
    if known.empty():
        return None
    return fingerprint(
        known.os, known.os_version, known.arch, known.runtime, known.runtime_version, known.packages
    )
