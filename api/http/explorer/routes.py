"""GET /explore: the explorer page and its assets, shipped with the package.

The page holds no data: it asks POST /graphql with the token the user enters, so the API's
authentication and tenancy apply unchanged (401 without a valid token, another project's
names refused, its ids not found). Everything it loads comes from this server — the graph
library too: Cytoscape.js 3.35.0, its ES module build vendored as cytoscape.esm.min.js with
its licence (MIT) in cytoscape.LICENSE.txt, served here as well; a strict
Content-Security-Policy holds it to that, and the page writes text, never markup.
"""

from __future__ import annotations

from importlib import resources

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

__all__ = ["explorer_routes"]

_SCRIPT = "text/javascript; charset=utf-8"
_ASSETS = {
    "explore.js": _SCRIPT,
    "dom.js": _SCRIPT,
    "lineage.js": _SCRIPT,
    "graph.js": _SCRIPT,
    "search.js": _SCRIPT,
    "trends.js": _SCRIPT,
    "compare.js": _SCRIPT,
    "cytoscape.esm.min.js": _SCRIPT,
    "cytoscape.LICENSE.txt": "text/plain; charset=utf-8",
    "explore.css": "text/css; charset=utf-8",
}
_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_HEADERS = {
    "Content-Security-Policy": _POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


def _read(name: str) -> bytes:
    return resources.files("metisgraph.api.http.explorer").joinpath(name).read_bytes()


def explorer_routes() -> list[Route]:
    """/explore and /explore/<asset>; the files are read once, here."""
    page = _read("explore.html")
    assets = {name: (_read(name), media) for name, media in _ASSETS.items()}

    async def explore(request: Request) -> Response:
        return Response(page, media_type="text/html; charset=utf-8", headers=_HEADERS)

    async def asset(request: Request) -> Response:
        found = assets.get(request.path_params["name"])
        if found is None:
            return PlainTextResponse("not found", status_code=404, headers=_HEADERS)
        body, media = found
        return Response(body, media_type=media, headers=_HEADERS)

    return [
        Route("/explore", explore, methods=["GET"]),
        Route("/explore/{name}", asset, methods=["GET"]),
    ]
