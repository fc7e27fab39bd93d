"""Code analysis on real agent trajectories in ../shared (skipped when it is absent)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from metisgraph.ingest.code import analyze_snippet, extract_snippets, parse_patch

pytestmark = pytest.mark.shared


def _mini_swe_runs(shared_dir: Path) -> list[dict]:  # type: ignore[type-arg]
    folder = shared_dir / "trajectories" / "mini-swe-agent-v1_gemini-3-pro_verified" / "trajs"
    runs = [json.loads(p.read_text()) for p in sorted(folder.glob("*.traj.json"))]
    if not runs:
        pytest.skip(f"no mini-swe-agent trajectories in {folder}")
    return runs


def test_every_submission_parses_with_counts_that_match_its_lines(shared_dir: Path) -> None:
    for run in _mini_swe_runs(shared_dir):
        diff = run["info"]["submission"]
        files = parse_patch(diff)
        headers = re.findall(r"^diff --git ", diff, re.M)
        assert len(files) == len(headers), run["instance_id"]
        body = [line for line in diff.splitlines() if not line.startswith(("+++ ", "--- "))]
        added = sum(1 for line in body if line.startswith("+"))
        removed = sum(1 for line in body if line.startswith("-"))
        assert sum(f.added for f in files) == added, run["instance_id"]
        assert sum(f.removed for f in files) == removed, run["instance_id"]
        assert all(f.hunks >= 1 for f in files), run["instance_id"]


def test_python_files_touched_by_submissions_name_their_symbols(shared_dir: Path) -> None:
    touched = [
        f
        for run in _mini_swe_runs(shared_dir)
        for f in parse_patch(run["info"]["submission"])
        if f.path.endswith(".py")
    ]
    assert touched
    named = [f for f in touched if f.symbols]
    # Hunks in Python files almost always sit in a def or class git names in the header.
    assert len(named) >= 0.9 * len(touched)


def test_assistant_messages_yield_snippets_that_all_analyse(shared_dir: Path) -> None:
    snippets = [
        snippet
        for run in _mini_swe_runs(shared_dir)
        for message in run["messages"]
        if message["role"] == "assistant"
        for snippet in extract_snippets(message["content"])
    ]
    origins = {s.origin for s in snippets}
    assert {"command", "heredoc", "sed"} <= origins
    for snippet in snippets:
        if snippet.origin == "heredoc" and (snippet.path or "").endswith(".py"):
            assert snippet.language == "python"
        analysis = analyze_snippet(snippet.code, snippet.language)
        assert analysis.content_key and analysis.size >= 1
