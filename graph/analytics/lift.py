"""Packages and versions over-represented among failing runs (lift, with the counts)."""

from __future__ import annotations

from collections import Counter

from metisgraph.graph.analytics.model import PackageLift
from metisgraph.graph.analytics.pull import Pulled

__all__ = ["MIN_SUPPORT", "over_represented"]

MIN_SUPPORT = 3  # failing episodes a package must appear in to be reported


def over_represented(
    pulled: Pulled, min_support: int = MIN_SUPPORT, limit: int = 20
) -> list[PackageLift]:
    """Lift of each package (any version) and each version among failing episodes.

    Only episodes whose environment is known count: a lift of 2 means the package (or
    version) is twice as frequent among failing runs as among all runs.
    """
    total: Counter[tuple[str, str | None]] = Counter()
    failing: Counter[tuple[str, str | None]] = Counter()
    runs = fails = 0
    for e in pulled.episodes:
        packages = pulled.packages.get((e.project, e.environment or ""))
        if packages is None:
            continue
        failed = e.outcome == "failure"
        runs += 1
        fails += failed
        items = {(n, v) for n, v in packages.items()} | {(n, None) for n in packages}
        total.update(items)
        if failed:
            failing.update(items)
    if not fails:
        return []
    lifts = [
        PackageLift(
            name=name,
            version=version,
            failing=failing[(name, version)],
            total=total[(name, version)],
            lift=round((failing[(name, version)] / fails) / (total[(name, version)] / runs), 4),
        )
        for name, version in failing
        if failing[(name, version)] >= min_support
    ]
    kept = [x for x in lifts if x.lift > 1.0]
    kept.sort(key=lambda x: (-x.lift, -x.failing, x.name, x.version or ""))
    return kept[:limit]
