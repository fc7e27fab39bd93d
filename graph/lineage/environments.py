"""How two environments differ: the package versions that changed, came or went."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["EnvironmentDiff", "PackageChange", "environment_diff", "packages_of"]


@dataclass(frozen=True)
class PackageChange:
    """One package between the fixed run (``before``) and the failing one (``after``)."""

    name: str
    before: str | None  # None: absent when it was fixed
    after: str | None  # None: absent when it failed again

    @property
    def change(self) -> str:
        if self.before is None:
            return "added"
        if self.after is None:
            return "removed"
        return "changed"


@dataclass(frozen=True)
class EnvironmentDiff:
    """What differs between the environment of a fix and that of a later failure."""

    known: bool  # both environments are known; otherwise nothing can be said
    same_environment: bool = False
    packages: list[PackageChange] = field(default_factory=list)
    fields: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # os, runtime_version …


_FIELDS = ("os", "os_version", "arch", "runtime", "runtime_version")


def packages_of(pairs: Iterable[Sequence[Any]] | None) -> dict[str, str | None]:
    """[[name, version], ...] as a map (a package without a version maps to None)."""
    return {str(p[0]): (None if p[1] is None else str(p[1])) for p in pairs or ()}


def environment_diff(
    fixed: dict[str, Any] | None, failing: dict[str, Any] | None
) -> EnvironmentDiff:
    """Package versions and runtime fields that differ from the fix's environment."""
    if not fixed or not failing:
        return EnvironmentDiff(known=False)
    if fixed.get("key") == failing.get("key"):
        return EnvironmentDiff(known=True, same_environment=True)
    before = packages_of(fixed.get("packages"))
    after = packages_of(failing.get("packages"))
    changes = [
        PackageChange(name, before.get(name), after.get(name))
        for name in sorted(before.keys() | after.keys())
        if name not in before or name not in after or before[name] != after[name]
    ]
    fields = {f: (fixed.get(f), failing.get(f)) for f in _FIELDS if fixed.get(f) != failing.get(f)}
    return EnvironmentDiff(known=True, packages=changes, fields=fields)
