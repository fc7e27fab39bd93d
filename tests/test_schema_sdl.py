"""The published schema: schema.graphql is what the server serves, and a breaking change
(a type, field or argument removed or retyped) fails unless schema.breaking accepts it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from metisgraph.api.graphql.sdl import (
    BREAKING_FILE,
    SCHEMA_FILE,
    accepted_changes,
    breaking_changes,
    current_sdl,
    update_schema_file,
)

ROOT = Path(__file__).resolve().parents[1]
REGENERATE = f"metisgraph schema graphql --write {SCHEMA_FILE} (or make schema)"


def test_committed_schema_is_what_the_server_serves() -> None:
    committed = (ROOT / SCHEMA_FILE).read_text(encoding="utf-8")
    assert committed == current_sdl(), f"{SCHEMA_FILE} is stale: run {REGENERATE}"


def _baseline() -> str | None:
    """schema.graphql where this branch left main (or at HEAD); None without git history."""
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        return None
    for base in (["merge-base", "HEAD", "main"], ["merge-base", "HEAD", "origin/main"]):
        found = subprocess.run([git, *base], cwd=ROOT, capture_output=True, text=True)
        if found.returncode == 0:
            revision = found.stdout.strip()
            break
    else:
        revision = "HEAD"
    shown = subprocess.run(
        [git, "show", f"{revision}:{SCHEMA_FILE}"], cwd=ROOT, capture_output=True, text=True
    )
    return shown.stdout if shown.returncode == 0 else None


def test_no_breaking_change_unless_marked_deliberate() -> None:
    baseline = _baseline()
    if baseline is None:
        pytest.skip("no git history of schema.graphql to compare with")
    accepted = accepted_changes(ROOT / BREAKING_FILE)
    refused = [c for c in breaking_changes(baseline, current_sdl()) if c not in accepted]
    assert refused == [], (
        f"breaking changes to the published schema; if deliberate, add these lines to "
        f"{BREAKING_FILE}: {refused}"
    )


OLD = """
type Query { lineage(projects: [String!]!, limit: Int): Lineage }
type Lineage { sightings: Int!, fixes: [String!]! }
"""


def test_removed_or_retyped_fields_and_arguments_are_breaking_added_ones_not() -> None:
    added = OLD.replace("fixes: [String!]!", "fixes: [String!]!, warnings: [String!]!")
    assert breaking_changes(OLD, added) == []
    removed = OLD.replace(", fixes: [String!]!", "")
    assert breaking_changes(OLD, removed) == ["FIELD_REMOVED: Field Lineage.fixes was removed."]
    retyped = OLD.replace("limit: Int", "limit: String")
    assert [c.split(":")[0] for c in breaking_changes(OLD, retyped)] == ["ARG_CHANGED_KIND"]
    gone = OLD.replace("projects: [String!]!, ", "")
    assert [c.split(":")[0] for c in breaking_changes(OLD, gone)] == ["ARG_REMOVED"]


@pytest.mark.slow
def test_regeneration_refuses_a_breaking_change_until_it_is_accepted(tmp_path: Path) -> None:
    from metisgraph.api.cli import app

    target = tmp_path / SCHEMA_FILE
    target.write_text(current_sdl().replace("type Query {", "type Query {\n  gone: Int"))
    runner = CliRunner()
    refused = runner.invoke(app, ["schema", "graphql", "--write", str(target)])
    assert refused.exit_code == 1 and "Query.gone was removed" in refused.output
    assert "gone: Int" in target.read_text()  # untouched

    change = "FIELD_REMOVED: Field Query.gone was removed."
    (tmp_path / BREAKING_FILE).write_text(f"# deliberate\n{change}\n")
    assert update_schema_file(target).breaking == [change]
    assert target.read_text() == current_sdl()
    printed = runner.invoke(app, ["schema", "graphql"])
    assert printed.exit_code == 0 and printed.output == current_sdl()
