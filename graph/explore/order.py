"""How a list of errors is ordered: the one choice a browser makes before the first page."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["ErrorOrder"]


class ErrorOrder(StrEnum):
    COUNT = "COUNT"  # most sightings in the window first
    RECENT = "RECENT"  # latest sighting first
    UNRESOLVED = "UNRESOLVED"  # open errors only (never fixed, or seen after the last fix)
