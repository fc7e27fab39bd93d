"""Compatibility of a stored snippet with a caller's environment, from its requirements."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from metisgraph.ingest.code import Requirement, Verdict, compatibility
from metisgraph.ingest.environment import EnvironmentFingerprint, extract_environment
from metisgraph.ingest.records import EnvironmentInput

__all__ = ["verdict_for"]

_ORDER = ("compatible", "unknown", "incompatible")


def verdict_for(snippet: Mapping[str, Any], environment: EnvironmentInput | None) -> Verdict:
    """Whether a stored snippet (with its `requires`) can run in the caller's environment.

    A requirement verified in several environments holds each verified range; any one of
    them that the caller's environment satisfies is enough.
    """
    # The caller's statement, settled as every environment is (runtime and package names).
    settled = extract_environment((), environment) if environment is not None else None
    # An empty package list says nothing about what is installed: it is "not known".
    packages = dict(settled.packages) if settled and settled.packages else None
    runtime = _runtime(settled)
    chosen = [
        _best_alternative(r, packages, runtime)
        for r in snippet.get("requires") or ()
        if r.get("name")
    ]
    verdict = compatibility(chosen, packages, runtime)
    if not chosen:
        return Verdict(verdict.status, ("needs no packages or runtime version",))
    return verdict


def _runtime(environment: EnvironmentFingerprint | None) -> tuple[str, str] | None:
    if environment is None or not environment.runtime or not environment.runtime_version:
        return None
    return environment.runtime, environment.runtime_version


def _best_alternative(
    requirement: Mapping[str, Any], packages: dict[str, str] | None, runtime: tuple[str, str] | None
) -> Requirement:
    specs = [s or None for s in requirement.get("specs") or ()] or [requirement.get("spec")]
    options = [Requirement(str(requirement["name"]), spec) for spec in dict.fromkeys(specs)]
    return min(options, key=lambda r: _ORDER.index(compatibility([r], packages, runtime).status))
