"""`metisgraph lineage | analytics | export | import` as a person runs them, on the real Neo4j."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from story import Story, module_story

from metisgraph.graph.digest import digest_export, digest_project
from metisgraph.graph.settings import Neo4jSettings

CLI = str(Path(sys.executable).parent / "metisgraph")
# The first command of each test runs as a process of its own (the entry point, as
# installed); the others in this process with the session's model (``cli_in_process``).
pytestmark = [pytest.mark.anyio, pytest.mark.slow(8)]

NUMPY_ERROR = "AttributeError: module 'numpy' has no attribute 'float'"


def _run(neo4j: Neo4jSettings, *args: str) -> subprocess.CompletedProcess[str]:
    assert neo4j.uri and neo4j.password
    env = {**os.environ, "NEO4J_URI": neo4j.uri, "NEO4J_USERNAME": neo4j.username,
           "NEO4J_PASSWORD": neo4j.password.get_secret_value(), "COLUMNS": "200"}  # fmt: skip
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=env, timeout=600)


def _here(cli_in_process: Any, *args: str) -> subprocess.CompletedProcess[str]:
    completed: subprocess.CompletedProcess[str] = cli_in_process(*args, env={"COLUMNS": "200"})
    return completed


@pytest.fixture(scope="module")
def story(neo4j_settings: Neo4jSettings, embedder: Any) -> Story:
    """One story for both tests: they read it (an import writes to projects of its own)."""
    return module_story(neo4j_settings, embedder, "lc")


async def test_lineage_and_analytics_read_like_a_report(
    neo4j_settings: Neo4jSettings, story: Story, cli_in_process: Any
) -> None:
    trace = (
        'Traceback (most recent call last):\n  File "/x/shop/report.py", line 41, in '
        "build_totals\n    return np.float(sum(rows)) / len(rows)\n" + NUMPY_ERROR
    )
    both = ["--project", story.shop, "--project", story.billing]
    shown = _run(neo4j_settings, "lineage", trace, *both)
    assert shown.returncode == 0, shown.stderr
    assert "4 sightings" in shown.stdout and "python:AttributeError" in shown.stdout
    assert "numpy 1.24.2 → 1.26.4" in shown.stdout and "legacy-stats - → 0.3.1" in shown.stdout
    assert "use builtin float in build_totals" in shown.stdout  # the fix
    assert "attempted" in shown.stdout and "module: installs numpy" in shown.stdout

    as_json = _here(cli_in_process, "lineage", trace, *both, "--json")
    found = json.loads(as_json.stdout)
    assert found["sightings"][0]["episode"]["id"] == "shop-report-march-s2"
    assert found["recurrence_count"] == 3

    nothing = _here(cli_in_process, "lineage", "all went well", "--project", story.shop)
    assert nothing.returncode == 2 and "no error found" in nothing.stderr

    report = _here(cli_in_process, "analytics", *both)
    assert report.returncode == 0, report.stderr
    for title in ("clusters of related errors", "root-cause candidates", "hubs",
                  "error → fix paths"):  # fmt: skip
        assert title in report.stdout
    measured = json.loads(_here(cli_in_process, "analytics", *both, "--json").stdout)
    assert measured["episodes"] == 10


async def test_export_then_import_under_another_name(
    neo4j_settings: Neo4jSettings, story: Story, store: Any, tmp_path: Path, cli_in_process: Any
) -> None:
    exported = tmp_path / "shop.json"
    made = _run(neo4j_settings, "export", "--project", story.shop, "--output", str(exported))
    assert made.returncode == 0, made.stderr
    before = await digest_project(store, story.shop)
    with exported.open() as handle:
        assert digest_export(handle) == before

    copy = f"{story.shop}-restored"
    restored = _here(cli_in_process, "import", str(exported), "--project", copy)
    assert restored.returncode == 0, restored.stderr
    assert "refused=0" in restored.stdout
    assert await digest_project(store, copy) == before

    graphml = _here(cli_in_process, "export", "--project", copy, "--format", "graphml")
    graph = nx.read_graphml(io.StringIO(graphml.stdout))
    assert graph.number_of_nodes() == int(before.split(":")[1])
    tables = _here(cli_in_process, "export", "--project", copy, "--format", "csv",
                  "--output", str(tmp_path))  # fmt: skip
    assert tables.returncode == 0, tables.stderr
    assert {p.name for p in tmp_path.glob("*.csv")} == {f"{copy}-nodes.csv", f"{copy}-edges.csv"}

    broken = tmp_path / "broken.json"
    broken.write_text('{"graph": {"format": "something else"}, "nodes": []}')
    refused = _here(cli_in_process, "import", str(broken), "--project", f"{copy}-2")
    assert refused.returncode == 2 and "not a metisgraph export" in refused.stderr
