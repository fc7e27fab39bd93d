"""/explore without a browser: the page and its assets ship, load nothing from elsewhere and
carry a policy that holds them to their own origin. (The page at work: test_explore_page.)"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from metisgraph.api.http.explorer import explorer_routes

SVG_NAMESPACE = "http://www.w3.org/2000/svg"
OURS = ("explore.js", "dom.js", "lineage.js", "graph.js", "search.js", "trends.js", "compare.js")
VENDORED = "cytoscape.esm.min.js"  # Cytoscape.js, MIT: its licence ships beside it


@pytest.fixture(scope="module")
def page() -> Iterator[Any]:
    with TestClient(Starlette(routes=explorer_routes())) as client:
        yield client


def test_the_page_and_its_assets_are_served_with_a_strict_policy(page: Any) -> None:
    for path, media in (
        ("/explore", "text/html"),
        *((f"/explore/{name}", "text/javascript") for name in (*OURS, VENDORED)),
        ("/explore/explore.css", "text/css"),
        ("/explore/cytoscape.LICENSE.txt", "text/plain"),
    ):
        response = page.get(path)
        assert response.status_code == 200, path
        assert response.headers["content-type"].startswith(media)
        policy = response.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "script-src 'self'" in policy
        assert "connect-src 'self'" in policy and "frame-ancestors 'none'" in policy
        assert response.headers["x-content-type-options"] == "nosniff"


def test_only_the_shipped_assets_are_served(page: Any) -> None:
    for name in ("explore.html", "routes.py", "__init__.py", "..%2Froutes.py", "missing.js"):
        assert page.get(f"/explore/{name}").status_code == 404, name


def test_nothing_is_loaded_from_another_origin(page: Any) -> None:
    html = page.get("/explore").text
    for reference in re.findall(r'(?:src|href)="([^"]*)"', html):
        assert not re.match(r"^[a-z]+:|^//", reference) or reference == "data:,", reference
    for name in OURS:
        script = page.get(f"/explore/{name}").text.replace(SVG_NAMESPACE, "")
        assert not re.search(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/", script), name
        assert "innerHTML" not in script and "insertAdjacentHTML" not in script, name
        for imported in re.findall(r'from "([^"]+)"', script):
            assert re.fullmatch(r"\./[a-z.]+\.js", imported), (name, imported)
            assert page.get(f"/explore/{imported[2:]}").status_code == 200, imported
    assert "url(" not in page.get("/explore/explore.css").text


def test_the_graph_library_ships_with_its_licence(page: Any) -> None:
    library = page.get(f"/explore/{VENDORED}").text
    licence = page.get("/explore/cytoscape.LICENSE.txt").text
    assert "export{" in library.replace(" ", "") and 'version="3.' in library
    assert "The Cytoscape Consortium" in licence and "Permission is hereby granted" in licence
