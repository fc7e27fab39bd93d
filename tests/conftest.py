"""Fixtures shared by every suite. Database fixtures live in tests/db_fixtures.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _shared_root() -> Path:
    return Path(os.environ.get("METISGRAPH_SHARED_DIR", ROOT.parent / "shared"))


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """../shared beside the project (evaluation data, trajectories); skip when absent."""
    root = _shared_root()
    if not root.is_dir():
        pytest.skip(f"{root} is absent: tests that read shared data are skipped")
    return root


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES
