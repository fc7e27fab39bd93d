"""The explorer's graph view (Cytoscape.js) in a real chromium against the real app: edge labels
by relation, the legend as a filter, pan and zoom, double-click to expand, a link that
reproduces the whole view, and a 200-node neighbourhood laid out without overlaps."""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import unquote

import pytest
from explore_site import (  # noqa: F401  (fixtures)
    SHOP_TOKEN,
    Site,
    _attrs,
    _open,
    _screenshot,
    _wait,
    browser_fixture,
    site_fixture,
)
from story import numpy_error_key

from metisgraph.graph import NodeRef

pytestmark = pytest.mark.browser

HOOD = """query($id: ID!, $depth: Int!) { neighbourhood(id: $id, depth: $depth, limit: 200) {
  nodes { id kind } edges { source target type } } }"""

_CY = "const cy = document.getElementById('graph').cy;"


def _hood(site: Site, node: str, depth: int = 1) -> dict[str, Any]:
    found: dict[str, Any] = site.ask(SHOP_TOKEN, HOOD, id=node, depth=depth)["neighbourhood"]
    return found


def _shown(browser: Any) -> set[str]:
    return set(_attrs(browser, "#graph-nodes tbody tr", "data-id"))


def _drawn(browser: Any) -> dict[str, Any]:
    """What the library holds and shows: visible nodes, visible edges with their labels."""
    script = (
        _CY
        + """
    return {
      nodes: cy.nodes(':visible').map(n => n.id()).sort(),
      edges: cy.edges(':visible').map(e => [e.data('type'), e.style('label')]),
      hidden: cy.edges().filter(e => !e.visible()).map(e => e.data('type')),
      positions: Object.fromEntries(cy.nodes().map(n => [n.id(), [Math.round(n.position('x')),
                                                                  Math.round(n.position('y'))]])),
      selected: cy.nodes(':selected').map(n => n.id()),
      zoom: cy.zoom(), pan: cy.pan(),
    };"""
    )
    drawn: dict[str, Any] = browser.execute_script(script)
    return drawn


def _double_click(browser: Any, node: str) -> None:
    """A real double-click at the node's place on the canvas."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    canvas = browser.find_element(By.ID, "graph")
    x, y, w, hgt = browser.execute_script(
        _CY + "const p = cy.getElementById(arguments[0]).renderedPosition();"
        "const r = cy.container().getBoundingClientRect(); return [p.x, p.y, r.width, r.height];",
        node,
    )
    ActionChains(browser).move_to_element_with_offset(
        canvas, int(x - w / 2), int(y - hgt / 2)
    ).double_click().perform()


def test_edges_are_labelled_by_relation_and_the_legend_counts_kinds(
    browser: Any, site: Site
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    root = NodeRef("Error", site.story.shop, numpy_error_key()).id
    _open(browser, site, f"#/node/{root}", SHOP_TOKEN)
    around = _hood(site, root)
    assert _shown(browser) == {n["id"] for n in around["nodes"]}
    drawn = _drawn(browser)
    assert sorted(t for t, _ in drawn["edges"]) == sorted(e["type"] for e in around["edges"])
    assert all(label == kind for kind, label in drawn["edges"])  # each edge says its relation
    assert set(_attrs(browser, "#kind-filter input", "value")) == {
        n["kind"] for n in around["nodes"]
    }
    relations = set(_attrs(browser, "#relation-filter input", "value"))
    assert relations == {e["type"] for e in around["edges"]} and "HIT" in relations

    # Zoom with the wheel and pan with a drag on the canvas itself.
    canvas = browser.find_element(By.ID, "graph")
    before = _drawn(browser)
    ActionChains(browser).scroll_to_element(canvas).perform()
    browser.execute_script(
        "const c = document.querySelector('#graph canvas:last-of-type');"
        "const r = c.getBoundingClientRect();"
        "c.dispatchEvent(new WheelEvent('wheel', {deltaY: -400, clientX: r.x + 40,"
        " clientY: r.y + 40, bubbles: true}));"
    )
    _wait(browser, lambda: _drawn(browser)["zoom"] > before["zoom"])
    zoomed = _drawn(browser)
    corner = (10 - canvas.size["width"] // 2, 10 - canvas.size["height"] // 2)  # no node there
    drag = ActionChains(browser).move_to_element_with_offset(canvas, *corner).click_and_hold()
    for _ in range(6):  # in steps, as a hand moves: the library pans once a drag has begun
        drag.move_by_offset(15, 10)
    drag.release().perform()
    _wait(browser, lambda: _drawn(browser)["pan"] != zoomed["pan"])


def test_double_click_expands_a_filter_hides_and_the_link_reproduces_it(
    browser: Any, site: Site
) -> None:
    from selenium.webdriver.common.by import By

    root = NodeRef("Error", site.story.shop, numpy_error_key()).id
    _open(browser, site, f"#/node/{root}", SHOP_TOKEN)
    around = _hood(site, root)
    step = next(n["id"] for n in around["nodes"] if n["kind"] == "Episode")
    _double_click(browser, step)
    more = _hood(site, step)
    expected = {n["id"] for n in around["nodes"]} | {n["id"] for n in more["nodes"]}
    assert len(expected) > len(around["nodes"])
    _wait(browser, lambda: _shown(browser) == expected)
    assert _drawn(browser)["selected"] == [step]

    # Hide a relation, then a kind: gone from the canvas and from the table.
    browser.find_element(By.CSS_SELECTOR, "#relation-filter input[value='HIT']").click()
    _wait(browser, lambda: "HIT" not in _attrs(browser, "#graph-edges tbody tr", "data-type"))
    drawn = _drawn(browser)
    assert "HIT" in drawn["hidden"] and all(t != "HIT" for t, _ in drawn["edges"])
    kinds = {n["kind"] for n in more["nodes"]} - {"Error", "Episode"}
    hidden_kind = sorted(kinds)[0]
    browser.find_element(By.CSS_SELECTOR, f"#kind-filter input[value='{hidden_kind}']").click()
    _wait(browser, lambda: hidden_kind not in _attrs(browser, "#graph-nodes tbody tr", "data-kind"))
    _screenshot(browser, "explore-graph.png")

    # The link holds it all: a fresh page from it draws the same view, node for node.
    url = browser.current_url
    assert "hr=HIT" in url and f"hk={hidden_kind}" in url
    assert step in unquote(url.split("x=", 1)[1])
    seen = _drawn(browser)
    _open(browser, site, url.split("/explore", 1)[1], SHOP_TOKEN)
    _wait(browser, lambda: _shown(browser) == set(seen["nodes"]))
    again = _drawn(browser)
    assert again["nodes"] == seen["nodes"] and sorted(again["edges"]) == sorted(seen["edges"])
    assert again["positions"] == seen["positions"] and again["selected"] == [step]
    assert not browser.find_element(
        By.CSS_SELECTOR, "#relation-filter input[value='HIT']"
    ).is_selected()
    # The layout is part of it too.
    browser.find_element(By.CSS_SELECTOR, "#layout option[value='tree']").click()
    _wait(browser, lambda: "layout=tree" in browser.current_url)
    _open(browser, site, browser.current_url.split("/explore", 1)[1], SHOP_TOKEN)
    assert browser.find_element(By.ID, "layout").get_attribute("value") == "tree"


def test_a_large_neighbourhood_is_laid_out_without_overlaps(browser: Any, site: Site) -> None:
    _open(browser, site, f"#/node/{site.locked_id}?depth=2", SHOP_TOKEN)
    around = _hood(site, site.locked_id, depth=2)
    assert len(around["nodes"]) > 100  # the 100-sighting error, its steps, tasks, environments
    assert _shown(browser) == {n["id"] for n in around["nodes"]}
    places = list(_drawn(browser)["positions"].values())
    closest = min(math.dist(a, b) for i, a in enumerate(places) for b in places[i + 1 :])
    assert closest >= 24, closest  # nodes are 16 px across: none touches another
    inside = browser.execute_script(
        _CY + "const e = cy.extent(); return cy.nodes().every(n => { const p = n.position();"
        " return p.x >= e.x1 && p.x <= e.x2 && p.y >= e.y1 && p.y <= e.y2; });"
    )
    assert inside  # fitted: the whole neighbourhood is on screen
