"""Timestamps: ISO, SQL, syslog, ``date``, RFC 2822, common log format, Java logging."""

from __future__ import annotations

import re

from metisgraph.ingest.sanitize.passes import TextPass
from metisgraph.ingest.sanitize.placeholders import Details, put

__all__ = ["TIMESTAMPS"]

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]{0,6}\.?"
_DAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]{0,6},?"
_TIME = r"(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:[.,]\d{1,9})?)?"
_ZONE_NAME = r"(?:UTC|GMT|Z|[ECMP][SD]T|CES?T|BST|IST|JST|KST|HKT|SGT|AES?T|AEDT)"
_ZONE = r"(?:Z|[+-]\d{2}:?\d{2}|[ \t]" + _ZONE_NAME + r"\b)?"

_NAMED_MONTH: TextPass[Details] = TextPass(
    re.compile(
        r"\b(?:"
        + _DAY
        + r"[ \t]+)?(?:"
        + _MONTH
        + r"[ \t]+\d{1,2}(?:,?[ \t]+\d{4})?,?[ \t]+"
        + _TIME
        + r"(?:[ \t]?[AP]M)?"
        + r"(?:[ \t]+(?:"
        + _ZONE_NAME
        + r"|[+-]\d{4}))?(?:[ \t]+\d{4}\b)?"
        + r"|\d{1,2}[ \t]+"
        + _MONTH
        + r"[ \t]+\d{4}(?:[ \t]+"
        + _TIME
        + r"(?:[ \t]+(?:"
        + _ZONE_NAME
        + r"|[+-]\d{4}))?)?"
        + r")(?![\w:])"
    ),
    put("TIMESTAMP"),
    anchor=re.compile(
        r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun|Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
    ),
    needs_digit=True,
)
_NUMERIC: TextPass[Details] = TextPass(
    re.compile(
        r"\d(?<![\w.:/-]\d)(?:"
        + r"\d{3}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?:[T ]"
        + _TIME
        + _ZONE
        + r")?"
        + r"|\d{3}/(?:0[1-9]|1[0-2])/(?:0[1-9]|[12]\d|3[01])(?:[ T]"
        + _TIME
        + r")?"
        + r"|\d?/"
        + _MONTH
        + r"/\d{4}:"
        + _TIME
        + r"(?:[ \t][+-]\d{4})?"
        + r"|\d?[/.-]\d{1,2}[/.-]\d{2,4}[ ,T]+"
        + _TIME
        + r"|(?<=[01])\d:[0-5]\d:[0-5]\d(?:[.,]\d{1,9})?"
        + r"|(?<=2)[0-3]:[0-5]\d:[0-5]\d(?:[.,]\d{1,9})?"
        + r")(?![\w:])"
    ),
    put("TIMESTAMP"),
    needs_digit=True,
)

# A month or a day by name (Mon Oct 6, 6 Oct 2025), then dates and times in digits.
TIMESTAMPS = (_NAMED_MONTH, _NUMERIC)
