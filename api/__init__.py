"""The Starlette app, the GraphQL schema, authentication and the command line.

The names below are the public face; the modules behind them are free to change.
Each is imported when first used (graph/faces.py).
"""

import typing

from metisgraph.graph import lazy_face as _lazy_face

if typing.TYPE_CHECKING:
    from metisgraph.api.graphql.recall_service import answer
    from metisgraph.api.http.app import create_app
    from metisgraph.api.services import Services, prepare_services
    from metisgraph.api.settings import ApiSettings, Settings, load_settings
    from metisgraph.ingest.question import Question

__all__ = [
    "ApiSettings",
    "Question",
    "Services",
    "Settings",
    "answer",
    "create_app",
    "load_settings",
    "prepare_services",
]

if not typing.TYPE_CHECKING:
    _lazy_face(__name__)
