"""The explorer page (/explore) in a real chromium, against the real app over real HTTP:
the frame, the errors list and the lineage (the graph view: test_explore_graph_view)."""

from __future__ import annotations

from typing import Any

import pytest
from explore_site import (  # noqa: F401  (fixtures)
    ALL_TOKEN,
    SHOP_TOKEN,
    Site,
    _after,
    _attrs,
    _ids,
    _open,
    _screenshot,
    _state,
    _texts,
    browser_fixture,
    site_fixture,
)
from story import numpy_error_key

from metisgraph.graph import NodeRef

pytestmark = pytest.mark.browser


# --- the tests -------------------------------------------------------------------------


def test_a_token_is_asked_for_and_picks_the_readable_projects(browser: Any, site: Site) -> None:
    from selenium.webdriver.common.by import By

    _open(browser, site, "#/errors", None)
    assert "needs a valid token" in browser.find_element(By.ID, "problems").text
    field = browser.find_element(By.ID, "token")
    field.send_keys(SHOP_TOKEN)
    _after(browser, lambda: browser.find_element(By.CSS_SELECTOR, "#token-form button").click())
    assert browser.find_element(By.ID, "problems").get_attribute("hidden") is not None
    listed = set(_attrs(browser, "#projects input", "value"))
    assert {site.story.shop, site.flaky} <= listed and site.story.billing not in listed
    box = browser.find_element(By.CSS_SELECTOR, f"#projects input[value='{site.flaky}']")
    _after(browser, box.click)
    assert _ids(_attrs(browser, "#errors .error-link", "href")) == [site.locked_id]


ERRORS = """query($p: [String!]!, $order: ErrorOrder!, $first: Int!, $after: String) {
  errors(projects: $p, orderBy: $order, first: $first, after: $after) {
    totalCount items { id } pageInfo { endCursor hasNextPage } } }"""


def test_the_errors_list_follows_the_api_in_each_order_and_page(browser: Any, site: Site) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    projects = [site.story.shop, site.story.billing]
    _open(browser, site, f"#/errors?p={','.join(projects)}&n=2", ALL_TOKEN)

    def api_page(order: str, after: str | None) -> dict[str, Any]:
        page: dict[str, Any] = site.ask(
            ALL_TOKEN, ERRORS, p=projects, order=order, first=2, after=after
        )["errors"]
        return page

    first = api_page("COUNT", None)
    assert first["totalCount"] > 2  # the story holds enough errors to page
    assert _ids(_attrs(browser, "#errors .error-link", "href")) == [i["id"] for i in first["items"]]
    assert browser.find_element(By.CSS_SELECTOR, ".paging").text.startswith(
        f"{first['totalCount']} errors"
    )
    _after(browser, browser.find_element(By.ID, "next-page").click)
    second = api_page("COUNT", first["pageInfo"]["endCursor"])
    shown = _ids(_attrs(browser, "#errors .error-link", "href"))
    assert shown == [i["id"] for i in second["items"]]
    assert not set(shown) & {i["id"] for i in first["items"]}

    _after(browser, lambda: Select(browser.find_element(By.ID, "order")).select_by_value("RECENT"))
    recent = api_page("RECENT", None)
    shown = _ids(_attrs(browser, "#errors .error-link", "href"))
    assert shown == [i["id"] for i in recent["items"]]
    assert "order=RECENT" in browser.current_url and "after=" not in browser.current_url


def test_a_lineage_of_100_sightings_is_drawn_whole(browser: Any, site: Site) -> None:
    # How long it takes is measured by the benchmark (bench/explore_bench.py), not here.
    _open(browser, site, f"#/error/{site.locked_id}", SHOP_TOKEN)
    assert _state(browser, "view") == "error"
    assert len(_texts(browser, "#timeline .sighting")) == 100
    assert len(_texts(browser, "#sightings tbody tr")) == 100
    assert browser.find_elements("css selector", "#more-sightings") == []
    assert "100 sightings" in _texts(browser, "#lineage-summary")[0]


def test_a_lineage_across_projects_shows_fixes_and_the_regression(browser: Any, site: Site) -> None:
    error_id = NodeRef("Error", site.story.shop, numpy_error_key()).id
    _open(browser, site, f"#/error/{error_id}", ALL_TOKEN)
    lanes = _texts(browser, "#timeline .lane-name")
    assert lanes == [site.story.shop, site.story.billing]
    assert len(_texts(browser, "#timeline .sighting")) == 4
    assert _texts(browser, "#timeline .fix") and _texts(browser, "#timeline .recurrence")
    regression = " ".join(_texts(browser, "#recurrences li"))
    assert "numpy 1.24.2 → 1.26.4" in regression and "legacy-stats ∅ → 0.3.1" in regression
    # Each fix with its evidence (rule, file) and confidence; attempts with what they did.
    fixes = " ".join(_texts(browser, "#fixes li"))
    assert "frame: edits shop/report.py" in fixes and "confidence 0.80" in fixes
    assert "module: installs numpy" in " ".join(_texts(browser, "#attempts li"))
    _screenshot(browser, "explore.png")
    # With the shop token, billing is not read: its sightings are not drawn.
    _open(browser, site, f"#/error/{error_id}", SHOP_TOKEN)
    assert _texts(browser, "#timeline .lane-name") == [site.story.shop]


def test_another_tenant_reads_as_not_found_and_its_names_are_refused(
    browser: Any, site: Site
) -> None:
    from selenium.webdriver.common.by import By

    theirs = NodeRef("Error", site.story.billing, numpy_error_key()).id
    unknown = NodeRef("Error", site.story.shop, "0" * 16).id
    seen = []
    for error_id in (theirs, unknown):
        for view in ("error", "node"):
            _open(browser, site, f"#/{view}/{error_id}", SHOP_TOKEN)
            seen.append(browser.find_element(By.CSS_SELECTOR, ".not-found").text)
    assert seen[0] == seen[2] and seen[1] == seen[3] and "Not found" in seen[0]
    _open(browser, site, f"#/errors?p={site.story.billing}", SHOP_TOKEN)
    message = browser.find_element(By.ID, "problems").text
    assert f"not allowed to read project(s): {site.story.billing}" in message
    _open(browser, site, "#/errors", "not-a-token-at-all")
    assert "needs a valid token" in browser.find_element(By.ID, "problems").text
