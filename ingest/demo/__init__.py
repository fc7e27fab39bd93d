"""A small demo set of episodes written for the project (loaded by `make run`)."""

from __future__ import annotations

from importlib import resources
from importlib.abc import Traversable

__all__ = ["DEMO_PROJECT", "demo_file"]

DEMO_PROJECT = "demo"


def demo_file() -> Traversable:
    """The demo records (JSONL in the native format) shipped with the package."""
    return resources.files(__package__).joinpath("episodes.jsonl")
