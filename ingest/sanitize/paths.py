"""Paths that name one machine or one run: home directories and temporary directories
(their random parts dropped, the stable tail kept).
"""

from __future__ import annotations

import re

from metisgraph.ingest.sanitize.passes import PassGroup, TextPass
from metisgraph.ingest.sanitize.placeholders import Details, wordlike

__all__ = ["PATHS"]

# A path starts after a delimiter, never inside another path: the characters a segment may
# hold are exactly those that may not come before a root (so "/a+/tmp" is not a root).
_PATH_START = r"(?:(?<=//)|(?<![\w.~@%+$/-]))"
_SEGMENT = r"[\w.~@%+-]+"
_RANDOM_SEGMENT = re.compile(
    r"tmp(?=[a-z0-9_]*\d)[a-z0-9_]{6,12}|tmp\.[A-Za-z0-9]{6,}|pytest-of-.+|pytest-\d+|\d+"
    r"|[0-9a-f]{8,}|_MEI\w+"
    r"|(?=(?:[A-Za-z_]*\d){2})(?=(?:[\d_]*[A-Za-z]){2})[A-Za-z0-9_]{8,}"
)


def _stable_tail(rest: str) -> str:
    """Drop the random directories right under a temporary root; keep the stable tail."""
    segments = rest.split("/")[1:]
    while len(segments) > 1 and _RANDOM_SEGMENT.fullmatch(segments[0]):
        segments.pop(0)
    return "".join("/" + s for s in segments)


def _tmp(match: re.Match[str], details: Details) -> str:
    rest = match.group("rest") or ""
    tail = _stable_tail(rest)
    details.put(
        "TMP", match.group(0)[: len(match.group(0)) - len(tail)] if tail else match.group(0)
    )
    return wordlike("TMP") + tail


def _tmp_windows(match: re.Match[str], details: Details) -> str:
    rest = (match.group("rest") or "").replace("\\", "/")
    tail = _stable_tail(rest)
    sep = "\\" if "\\" in match.group(0) else "/"
    details.put(
        "TMP", match.group(0)[: len(match.group(0)) - len(tail)] if tail else match.group(0)
    )
    return wordlike("TMP") + tail.replace("/", sep)


def _home(match: re.Match[str], details: Details) -> str:
    return details.put("HOME", match.group(0))


_WINDOWS_USERS = re.compile(r":[\\/](?:Users|USERS|users|Documents and Settings)[\\/]")

PATHS: PassGroup[Details] = PassGroup(
    re.compile(r"/tmp|/var/|/private/|/dev/shm|/home/|/Users/|/root|:\\|:/"),  # noqa: S108
    (
        TextPass(
            re.compile(
                r"(?i)\b[A-Z]:[\\/]Users[\\/][^\\/\s'\"<>]+[\\/]AppData[\\/]Local[\\/]Temp"
                r"(?P<rest>(?:[\\/][^\\/\s'\"<>:;|&]+)*)"
            ),
            _tmp_windows,
            ("\\temp", "/temp"),
            fold_case=True,
            anchor=_WINDOWS_USERS,
            back=1,
        ),
        TextPass(
            re.compile(
                _PATH_START + r"(?:(?:/private)?/var/folders/[\w.+-]+/[\w.+-]+/[TC]"
                r"|/(?:private/)?(?:var/)?tmp|/dev/shm)(?![\w.-])(?P<rest>(?:/" + _SEGMENT + r")*)"
            ),
            _tmp,
            ("/tmp", "/var/folders", "/dev/shm"),  # noqa: S108 (patterns, not files)
            anchor=re.compile(r"/tmp|/var/|/private/|/dev/shm"),  # noqa: S108
        ),
        TextPass(
            # A user directory has more path after it or is a bare name: /home/run.sh is a file.
            re.compile(
                _PATH_START + r"(?:/home|/Users)/(?:" + _SEGMENT + r"(?=/)|[\w-]+(?![\w.-]))"
                r"|" + _PATH_START + r"/root(?![\w.-])"
            ),
            _home,
            ("/home/", "/Users/", "/root"),
            anchor=re.compile(r"/home/|/Users/|/root"),
        ),
        TextPass(
            re.compile(r"(?i)\b[A-Z]:[\\/](?:Users|Documents and Settings)[\\/][^\\/\s'\"<>]+"),
            _home,
            (":\\users", ":/users", "documents and settings"),
            fold_case=True,
            anchor=_WINDOWS_USERS,
            back=1,
        ),
    ),
)
