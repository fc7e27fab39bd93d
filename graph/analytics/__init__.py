"""Analytics with networkx on a bounded subgraph pulled by Cypher: clusters of related
errors, root-cause candidates, hubs, error → fix paths and over-represented packages."""

import typing

from metisgraph.graph.faces import lazy_face as _lazy_face

if typing.TYPE_CHECKING:
    from metisgraph.graph.analytics.model import (
        DEFAULT_CAP,
        MAX_CAP,
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

if not typing.TYPE_CHECKING:
    _lazy_face(__name__)
