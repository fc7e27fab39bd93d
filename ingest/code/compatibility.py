"""Can a snippet run in the caller's environment? compatible, unknown or incompatible, and why."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from metisgraph.ingest.code.model import Requirement, Verdict

__all__ = ["RUNTIMES", "compatibility"]

RUNTIMES = frozenset({"python", "node", "go", "java"})
_STATUS_ORDER = ("compatible", "unknown", "incompatible")


def compatibility(
    requires: Sequence[Requirement],
    environment: Mapping[str, str] | None,
    runtime: tuple[str, str] | None,
) -> Verdict:
    """Judge each requirement against installed packages and the runtime (name, version).

    Any unmet requirement makes the snippet incompatible; anything we cannot check (a missing
    package list, an unparsable version, a package not listed) makes it unknown.
    """
    packages: dict[str, str] = {canonicalize_name(n): v for n, v in (environment or {}).items()}
    judged = [
        _runtime(r, runtime)
        if r.name in RUNTIMES
        else _package(r, packages, environment is not None)
        for r in requires
    ]
    if not judged:
        return Verdict("compatible", ())
    status = max((status for status, _ in judged), key=_STATUS_ORDER.index)
    return Verdict(status, tuple(reason for s, reason in judged if s == status))


def _runtime(requirement: Requirement, runtime: tuple[str, str] | None) -> tuple[str, str]:
    needs = _needs(requirement)
    if runtime is None:
        return "unknown", f"{needs}; the environment's runtime is not known"
    name, version = runtime[0].lower(), runtime[1]
    if name != requirement.name:
        return "unknown", f"{needs}; the environment runs {name} {version}"
    return _check(requirement, version, needs, f"{name} {version}")


def _package(
    requirement: Requirement, packages: Mapping[str, str], listed: bool
) -> tuple[str, str]:
    needs = _needs(requirement)
    if not listed:
        return "unknown", f"{needs}; the environment's packages are not known"
    version = packages.get(canonicalize_name(requirement.name))
    if version is None:
        return "unknown", f"{needs}; {requirement.name} is not installed"
    return _check(requirement, version, needs, f"{requirement.name} {version}")


def _check(requirement: Requirement, version: str, needs: str, found: str) -> tuple[str, str]:
    if requirement.spec is None:
        return "compatible", f"{found} is installed"
    try:
        allowed = SpecifierSet(requirement.spec)
        parsed = Version(version)
    except (InvalidSpecifier, InvalidVersion):
        return "unknown", f"{needs}; cannot compare with {found}"
    if allowed.contains(parsed, prereleases=True):
        return "compatible", f"{found} satisfies {requirement.spec}"
    return "incompatible", f"{needs}; found {found}"


def _needs(requirement: Requirement) -> str:
    label = "Python" if requirement.name == "python" else requirement.name
    return f"needs {label} {requirement.spec}" if requirement.spec else f"needs {label}"
