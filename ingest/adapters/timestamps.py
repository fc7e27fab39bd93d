"""Reading the times that sources write: ISO 8601, Unix epochs and common free forms.

Every result is timezone-aware; a time written without a zone is taken as UTC, so
that times from different sources compare without surprises.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

__all__ = ["from_epoch", "parse_datetime"]

# Free forms seen in exported conversations, issue trackers and logs. Order matters
# only where two forms could both match, which none of these can.
_FREE_FORMS = (
    "%I:%M %p on %d %B, %Y",  # 1:56 pm on 8 May, 2023
    "%I:%M %p on %d %b, %Y",  # 1:56 pm on 8 Jan, 2023
    "%I:%M %p, %d %B %Y",
    "%d %B %Y, %I:%M %p",
    "%d %B, %Y",
    "%d %B %Y",
    "%d %b %Y",
    "%B %d, %Y",
    "%b %d, %Y",
    "%B %d %Y",
    "%Y/%m/%d %H:%M:%S",
    "%Y/%m/%d %H:%M",
    "%Y/%m/%d",
    "%d.%m.%Y %H:%M",
    "%d.%m.%Y",
    "%Y%m%dT%H%M%S",
)

_EPOCH = re.compile(r"^\d{9,11}(\.\d+)?$")
_EPOCH_MILLIS = re.compile(r"^\d{12,14}$")


def parse_datetime(text: str | None) -> datetime | None:
    """The moment ``text`` names, or None when it is empty or in no form we know."""
    if text is None:
        return None
    value = " ".join(text.split())
    if not value:
        return None
    parsed = _parse_iso(value) or _parse_epoch(value) or _parse_free(value)
    return _aware(parsed) if parsed else None


def from_epoch(seconds: float) -> datetime:
    """A Unix time in seconds as an aware UTC datetime."""
    return datetime.fromtimestamp(seconds, UTC)


def _parse_iso(value: str) -> datetime | None:
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _parse_epoch(value: str) -> datetime | None:
    if _EPOCH.match(value):
        return from_epoch(float(value))
    if _EPOCH_MILLIS.match(value):
        return from_epoch(int(value) / 1000)
    return None


def _parse_free(value: str) -> datetime | None:
    for form in _FREE_FORMS:
        try:
            return datetime.strptime(value, form)
        except ValueError:
            continue
    try:  # RFC 2822, as in mail headers and HTTP dates
        return parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
