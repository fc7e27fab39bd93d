"""What analytics answer, as plain data, and how many episodes they measure at most."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

__all__ = [
    "DEFAULT_CAP",
    "MAX_CAP",
    "Analytics",
    "ErrorCluster",
    "ErrorStat",
    "FixPath",
    "Hub",
    "PackageLift",
    "PathStep",
    "RootCause",
]

# The most recent episodes measured by default, and at most (the cap a caller may ask).
DEFAULT_CAP = 20_000
MAX_CAP = 200_000


@dataclass(frozen=True)
class ErrorStat:
    """One error (by key, across the projects measured) and how often it was met."""

    key: str
    kind: str | None
    signature: str | None
    template: str | None
    projects: tuple[str, ...]
    sightings: int  # episodes that hit it
    tasks: int  # tasks in which it was hit


@dataclass(frozen=True)
class ErrorCluster:
    """Errors that keep meeting in the same tasks (a community of the co-occurrence graph)."""

    errors: list[ErrorStat]
    tasks: int  # tasks that hit two or more of them
    projects: list[str]
    cohesion: float  # share of the members' co-occurrence weight that stays inside


@dataclass(frozen=True)
class RootCause:
    """An error that comes first in tasks that go on to hit others."""

    error: ErrorStat
    leads: int  # tasks with two or more errors where it was sighted first
    multi_tasks: int  # tasks with two or more errors that it is part of
    share: float  # leads / multi_tasks
    precedes: int  # (task, later error) pairs it came before
    preceded_by: int  # (task, earlier error) pairs it came after
    followers: list[str]  # kinds of the errors it most often precedes


@dataclass(frozen=True)
class Hub:
    """A snippet, tool or package at the crossroads of failures and fixes."""

    kind: str  # snippet | tool | package
    name: str
    projects: list[str]
    betweenness: float  # share of shortest paths between errors and fixes that cross it
    errors: int  # distinct errors it is linked with
    failures: int  # failing episodes that touched it
    fixes: int  # fixes it took part in (snippets)
    node_id: str | None = None  # a global id, for the explorer (snippets)


@dataclass(frozen=True)
class PathStep:
    kind: str  # Error | Episode | Snippet
    id: str  # global id
    label: str


@dataclass(frozen=True)
class FixPath:
    """The shortest way from an error to code that fixes it: sighting, steps, the fix."""

    error: ErrorStat
    snippet: str
    steps: int  # episodes on the path, the sighting and the fixing step included
    path: list[PathStep]


@dataclass(frozen=True)
class PackageLift:
    """A package (or one version of it) more frequent among failing runs than among all."""

    name: str
    version: str | None  # None: any version of the package
    failing: int  # failing episodes whose environment has it
    total: int  # episodes (with a known environment) whose environment has it
    lift: float  # (failing / all failing) / (total / all)


@dataclass
class Analytics:
    projects: list[str]
    since: datetime | None
    until: datetime | None
    episodes: int  # episodes measured
    cap: int
    truncated: bool
    clusters: list[ErrorCluster] = field(default_factory=list)
    root_causes: list[RootCause] = field(default_factory=list)
    hubs: list[Hub] = field(default_factory=list)
    fix_paths: list[FixPath] = field(default_factory=list)
    over_represented: list[PackageLift] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
