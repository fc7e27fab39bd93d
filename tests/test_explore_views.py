"""The explorer's analyst views in a real chromium against the real app: search (a pasted trace
finds its error), trends (the chart's numbers are counts worked out by hand), compare (the
errors two projects share, worked out by hand), each one's link reproducing it."""

from __future__ import annotations

from typing import Any

import pytest
from explore_site import (  # noqa: F401  (fixtures)
    ALL_TOKEN,
    SHOP_TOKEN,
    TIMEOUT,
    TREND_WEEKS,
    Site,
    _after,
    _attrs,
    _ids,
    _open,
    _screenshot,
    _texts,
    browser_fixture,
    site_fixture,
)
from story import numpy_error_key

from metisgraph.graph import NodeRef
from metisgraph.ingest.errors import extract_errors

pytestmark = pytest.mark.browser

# The flaky project's error as another machine prints it: another path, another line.
PASTED = (
    "Traceback (most recent call last):\n"
    '  File "/home/dev/checkout/etl/load.py", line 73, in load_rows\n'
    "    conn.execute(sql)\n"
    "sqlite3.OperationalError: database is locked"
)
SEARCH = """query($t: String!) { search(text: $t) {
  errors { id sightings fixes open matched } } }"""
COMPARE = """query($p: [String!]!) { compare(projects: $p) {
  shared { key sides { project fixedBy { episode { episodeId } } } } } }"""


def test_a_pasted_trace_finds_its_error_and_the_link_keeps_the_search(
    browser: Any, site: Site
) -> None:
    from selenium.webdriver.common.by import By

    _open(browser, site, "#/search", SHOP_TOKEN)
    box = browser.find_element(By.ID, "search-text")
    box.send_keys(PASTED)
    _after(browser, browser.find_element(By.CSS_SELECTOR, "#search-form button").click)
    shown = _ids(_attrs(browser, "#search-errors .error-link", "href"))
    assert shown and shown[0] == site.locked_id
    expected = site.ask(SHOP_TOKEN, SEARCH, t=PASTED)["search"]["errors"][0]
    assert expected["id"] == site.locked_id and expected["sightings"] == 100
    row = browser.find_element(By.CSS_SELECTOR, "#search-errors tbody tr").text
    state = "open" if expected["open"] else "closed"
    assert f"signature 100 25 {expected['fixes']} {state}" in row, row
    assert _texts(browser, "#search-episodes tbody tr")  # the failing loads, by their words
    _screenshot(browser, "explore-search.png")

    # The link holds the text: opened afresh, the same results.
    url = browser.current_url
    assert "q=" in url
    _open(browser, site, url.split("/explore", 1)[1], SHOP_TOKEN)
    assert browser.find_element(By.ID, "search-text").get_attribute("value") == PASTED
    assert _ids(_attrs(browser, "#search-errors .error-link", "href")) == shown
    # A token that may read every project finds no more of this error than its project holds.
    _open(browser, site, url.split("/explore", 1)[1], ALL_TOKEN)
    assert _ids(_attrs(browser, "#search-errors .error-link", "href"))[0] == site.locked_id


def test_the_trend_chart_and_its_table_hold_the_weekly_counts_worked_out_by_hand(
    browser: Any, site: Site
) -> None:
    from selenium.webdriver.common.by import By

    story = site.story
    roles = {story.shop: "shop", story.billing: "billing"}
    error = NodeRef("Error", story.shop, extract_errors(TIMEOUT)[0].key).id
    window = "since=2026-03-01&until=2026-03-31"
    _open(
        browser, site, f"#/trends?p={story.shop},{story.billing}&error={error}&{window}", ALL_TOKEN
    )
    bars = browser.execute_script(
        "return Array.from(document.querySelectorAll('#trend-chart .bar'), b => ["
        "b.dataset.project, b.dataset.week, Number(b.dataset.count), b.getBBox().height]);"
    )
    drawn = {(roles[p], week): count for p, week, count, _ in bars}
    by_hand = {(role, w): n for role, weeks in TREND_WEEKS.items() for w, n in weeks.items()}
    assert drawn == by_hand
    # Heights in proportion: the tallest bar is the most sightings, an empty week draws nothing.
    tallest = max(height for *_, height in bars)
    for _, _, count, height in bars:
        assert abs(height - tallest * count / 3) < 0.5, (count, height)
    # The table beside the chart holds the same numbers, and the axes say what they count.
    header = _texts(browser, "#trend-table thead th")
    assert header == ["Week of", story.shop, story.billing, "All"]
    cells = [row.split() for row in _texts(browser, "#trend-table tbody tr")]
    assert cells == [
        [w, str(TREND_WEEKS["shop"][w]), str(TREND_WEEKS["billing"][w]),
         str(TREND_WEEKS["shop"][w] + TREND_WEEKS["billing"][w])]
        for w in ("2026-03-02", "2026-03-09", "2026-03-16")
    ]  # fmt: skip
    labels = _texts(browser, "#trend-chart .axis-label")
    assert labels[0].startswith("Week") and labels[1] == "Sightings"
    assert browser.find_element(By.ID, "trend-chart").get_attribute("role") == "img"
    # New to the window: the timeout, in both projects.
    new = set(_ids(_attrs(browser, "#newly-appearing .error-link", "href")))
    assert {error, NodeRef("Error", story.billing, extract_errors(TIMEOUT)[0].key).id} <= new
    _screenshot(browser, "explore-trends.png")

    # The link reproduces it; a token for the shop alone counts the shop's weeks only.
    url = browser.current_url
    _open(browser, site, url.split("/explore", 1)[1], ALL_TOKEN)
    again = browser.execute_script(
        "return Array.from(document.querySelectorAll('#trend-chart .bar'), b => ["
        "b.dataset.project, b.dataset.week, Number(b.dataset.count), b.getBBox().height]);"
    )
    assert again == bars
    _open(browser, site, f"#/trends?p={story.shop}&error={error}&{window}", SHOP_TOKEN)
    cells = [row.split() for row in _texts(browser, "#trend-table tbody tr")]
    assert [c[1] for c in cells] == ["3", "0", "3"]


def _sides(browser: Any) -> list[list[Any]]:
    return list(
        browser.execute_script(
            "return Array.from(document.querySelectorAll('#compare-shared tbody tr'), r => ["
            "r.querySelector('.shared-error').dataset.key, Array.from(r.querySelectorAll('.side'),"
            " s => [s.dataset.project, s.querySelector('.count').textContent,"
            " s.querySelector('.badge').textContent])]);"
        )
    )


def test_compare_lists_the_errors_two_projects_share_and_the_link_keeps_the_one_opened(
    browser: Any, site: Site
) -> None:
    from selenium.webdriver.common.by import By

    story = site.story
    numpy, timeout = numpy_error_key(), extract_errors(TIMEOUT)[0].key
    _open(browser, site, f"#/compare?p={story.shop},{story.billing}", ALL_TOKEN)
    # By hand: both met the rates timeout (shop 6, billing 3) and the numpy error (2 and 2);
    # nothing else is in both. Shop fixed the numpy error (March), billing never did.
    rows = _sides(browser)
    assert [key for key, _ in rows] == [timeout, numpy]
    sides = {key: {p: (count, state) for p, count, state in cells} for key, cells in rows}
    assert sides[timeout] == {story.shop: ("6 sightings", "open"),
                              story.billing: ("3 sightings", "open")}  # fmt: skip
    assert {p: c for p, (c, _) in sides[numpy].items()} == {
        story.shop: "2 sightings",
        story.billing: "2 sightings",
    }
    assert sides[numpy][story.billing][1] == "open"
    answer = site.ask(ALL_TOKEN, COMPARE, p=story.projects)["compare"]
    assert [x["key"] for x in answer["shared"]] == [timeout, numpy]
    shop_fixes = next(s for s in answer["shared"][1]["sides"] if s["project"] == story.shop)
    assert shop_fixes["fixedBy"], shop_fixes  # the fix the detail lists

    # Opening the numpy error puts it in the link; each project's card says where it was
    # fixed (shop: the steps lineage credits, on evidence) and what was tried (billing).
    opener = browser.find_element(By.CSS_SELECTOR, f".shared-error[data-key='{numpy}']")
    _after(browser, opener.click)
    assert f"sel={numpy}" in browser.current_url
    shop = f".compare-card[data-project='{story.shop}']"
    fixed = _texts(browser, f"{shop} .fixed-by tbody tr")
    assert [row.split()[2] for row in fixed] == [  # When (2 words), Step, …
        f["episode"]["episodeId"] for f in shop_fixes["fixedBy"]
    ]
    billing = f".compare-card[data-project='{story.billing}']"
    assert browser.find_elements(By.CSS_SELECTOR, f"{billing} .attempts tbody tr")
    assert not browser.find_elements(By.CSS_SELECTOR, f"{billing} .fixed-by")
    _screenshot(browser, "explore-compare.png")

    # The copied link reproduces the view, the opened error too.
    url = browser.current_url
    _open(browser, site, url.split("/explore", 1)[1], ALL_TOKEN)
    assert _sides(browser) == rows
    assert _texts(browser, f"{shop} .fixed-by tbody tr") == fixed
    # A token for the shop alone is refused the comparison, and shown nothing of billing.
    _open(browser, site, url.split("/explore", 1)[1], SHOP_TOKEN)
    assert f"not allowed to read project(s): {story.billing}" in _texts(browser, "#problems")[0]
    assert not browser.find_elements(By.CSS_SELECTOR, "#compare-shared")
