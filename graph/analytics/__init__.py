"""Analytics with networkx on a bounded subgraph pulled by Cypher: clusters of related
errors, root-cause candidates, hubs, error → fix paths and over-represented packages."""

from metisgraph.graph.analytics.model import (
    Analytics,
    ErrorCluster,
    ErrorStat,
    FixPath,
    Hub,
    PackageLift,
    PathStep,
    RootCause,
)
from metisgraph.graph.analytics.pull import (
    DEFAULT_CAP,
    MAX_CAP,
    EpisodeFacts,
    ErrorFacts,
    Pulled,
    pull,
)
from metisgraph.graph.analytics.report import analytics, measure

__all__ = [
    "DEFAULT_CAP",
    "MAX_CAP",
    "Analytics",
    "EpisodeFacts",
    "ErrorCluster",
    "ErrorFacts",
    "ErrorStat",
    "FixPath",
    "Hub",
    "PackageLift",
    "PathStep",
    "Pulled",
    "RootCause",
    "analytics",
    "measure",
    "pull",
]
