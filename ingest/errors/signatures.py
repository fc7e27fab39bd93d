"""Error signatures: find errors in text and give each a stable, normalised key.

``extract_errors`` reads a block of text (an observation, a message, a log) and
returns every distinct error in it; ``line_signature`` gives the grouping key of
one log or error line. Both are pure functions of their input: the same text
always yields the same signatures, whatever was read before, so signatures can
key ``Error`` nodes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from metisgraph.ingest.errors.codes import CODE_DETECTORS
from metisgraph.ingest.errors.crashes import find_go_panics, find_native_crashes, find_rust_panics
from metisgraph.ingest.errors.families import FamilyShape
from metisgraph.ingest.errors.lines import (
    compiler_error,
    exception_line,
    level_error,
    looks_like_code,
    pytest_failure,
)
from metisgraph.ingest.errors.logtemplate import log_template, template_key
from metisgraph.ingest.errors.sightings import Sighting
from metisgraph.ingest.errors.tool_errors import tool_error
from metisgraph.ingest.errors.tracebacks import find_exception_traces, find_python_tracebacks
from metisgraph.ingest.errors.triggers import candidate_lines

__all__ = [
    "ErrorSignature",
    "error_ref_keys",
    "extract_errors",
    "line_signature",
    "resign",
    "signature_key",
]

MAX_FRAMES = 3
_MAX_LINE = 2000  # longer lines (minified code, data dumps) are read up to here
_MAX_SAMPLE = 2000
_MAX_TEMPLATE = 500


@dataclass(frozen=True)
class ErrorSignature:
    """One error, normalised: what it is, its message template and where in own code it arose."""

    kind: str
    category: str
    template: str
    frames: tuple[str, ...]
    symbols: tuple[str, ...]
    signature: str
    key: str
    sample: str
    chain: tuple[str, ...] = ()  # kinds from the outermost wrapper to the root cause

    def family_shape(self) -> FamilyShape:
        """What families compare of this error (``ingest.errors.families``)."""
        return FamilyShape.of(self.kind, self.template, self.frames)

    def node_properties(self) -> dict[str, Any]:
        """What an ``Error`` node keeps of the signature (its key among them), and what its
        family is found from."""
        shape = self.family_shape()
        return {
            "key": self.key,
            "kind": self.kind,
            "category": self.category,
            "signature": self.signature,
            "template": self.template,
            "frames": list(self.frames),
            "symbols": list(self.symbols),
            "frames_text": " ".join(self.frames + self.symbols),
            "sample": self.sample,
            "family_bucket": shape.bucket,
            "family_tokens": list(shape.tokens),
        }


def signature_key(signature: str) -> str:
    """The short stable hash of a signature text (16 hex characters)."""
    return hashlib.sha256(signature.encode("utf-8")).hexdigest()[:16]


_KEY = re.compile(r"[0-9a-f]{16}")


def error_ref_keys(
    *, key: str | None = None, signature: str | None = None, text: str | None = None
) -> list[str]:
    """The Error keys one reference to an error stands for; give exactly one of:

    ``key`` — an Error node's key (16 hex characters); ``signature`` — a stored signature
    text; ``text`` — raw error text, signed as ingest signs it (every error found in it).
    """
    given = [name for name, value in (("key", key), ("signature", signature), ("text", text))
             if value is not None]  # fmt: skip
    if len(given) != 1:
        raise ValueError(f"give exactly one of key, signature, text (got {given or 'none'})")
    if key is not None:
        if not _KEY.fullmatch(key):
            raise ValueError(f"key: expected 16 hexadecimal characters, got {key[:40]!r}")
        return [key]
    if signature is not None:
        if not signature.strip():
            raise ValueError("signature: empty")
        return [signature_key(signature)]
    return [error.key for error in extract_errors(text or "")]


def line_signature(line: str, rules: frozenset[str] | None = None) -> str:
    """The grouping key of one log or error line: its template with untyped placeholders.

    ``rules`` picks the template rules (default: those the product signs with); only the
    evaluation asks for others.
    """
    return template_key(log_template(line[:_MAX_LINE], rules))


# Detectors that read one line; the first that fires on a line wins.
_LINE_DETECTORS: tuple[Callable[[str, int], Sighting | None], ...] = (
    pytest_failure,
    compiler_error,
    tool_error,
    exception_line,
)
_TRACE_FINDERS: tuple[Callable[[list[str], Iterable[int]], list[Sighting]], ...] = (
    find_python_tracebacks,
    find_exception_traces,
    find_go_panics,
    find_rust_panics,
)
# Log prefixes that vary between runs of the same program: timestamps, levels, [fields].
_LOG_PREFIX = re.compile(
    r"^(?:\s*(?:\[[^\]\n]{0,64}\]"
    r"|\d{4}[-/]\d{2}[-/]\d{2}(?:[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
    r"|\d{2}:\d{2}:\d{2}(?:[.,]\d+)?|[A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}:\d{2}"
    r"|(?:INFO|WARN|WARNING|ERROR|FATAL|CRITICAL|SEVERE|DEBUG|TRACE|PANIC)\b:?)(?=\s|$))+\s*"
)


def _trace_sightings(lines: list[str], candidates: list[int]) -> tuple[list[Sighting], set[int]]:
    """Multi-line traces and the lines they cover."""
    found = [s for finder in _TRACE_FINDERS for s in finder(lines, candidates)]
    covered = {i for s in found for i in range(s.start, s.end)}
    for crash in find_native_crashes(lines, candidates):
        if crash.start not in covered:
            found.append(crash)
            covered.update(range(crash.start, crash.end))
    return found, covered


def _code_sightings(lines: list[str], candidates: list[int]) -> list[Sighting]:
    """Errors named by a code, on any line: inside traces too (a driver's message holds one)."""
    return [
        Sighting(category, kind, message, i, i + 1, chain=[kind])
        for i in candidates
        if not looks_like_code(lines[i])
        for detect in CODE_DETECTORS
        for category, kind, message in detect(lines[i])
    ]


def _one_line_sightings(
    lines: list[str], candidates: list[int], covered: set[int], coded: set[int]
) -> list[Sighting]:
    """Exceptions, failed tests and diagnostics outside traces; else a line at an error level.

    A line already named by a code (``coded``) needs no second, vaguer error from its level.
    """
    found: list[Sighting] = []
    for i in candidates:
        if i in covered or looks_like_code(lines[i]):
            continue
        sighting = next((s for d in _LINE_DETECTORS if (s := d(lines[i], i)) is not None), None)
        if sighting is None and i not in coded:
            sighting = level_error(lines[i], i)
        if sighting is not None:
            found.append(sighting)
    return found


def _collapse_level_runs(sightings: list[Sighting]) -> list[Sighting]:
    """A run of error-level lines (npm ERR!, a multi-line log message) is one failure."""
    kept: list[Sighting] = []
    last_level_line = -2
    for s in sightings:
        if s.kind.startswith("log:"):
            follows = s.start == last_level_line + 1
            last_level_line = s.start
            if follows:
                continue
        kept.append(s)
    return kept


_SEPARATOR = re.compile(r"^\s*(?:[=_*#~-]{3,}\s*)?$")


def _next_content(lines: list[str], i: int) -> int:
    """The first line from ``i`` on that is neither blank nor a rule of ---- or ====."""
    while i < len(lines) and _SEPARATOR.match(lines[i]):
        i += 1
    return i


def _drop_announcements(
    sightings: list[Sighting], traces: list[Sighting], lines: list[str]
) -> list[Sighting]:
    """An error-level log line that introduces the error below it (a trace, or after a colon).

    unittest prints "ERROR: test_x (module.Case)", a rule, then the traceback.
    """
    trace_starts = {s.start for s in traces}
    starts = {s.start for s in sightings if not s.kind.startswith("log:")}

    def announces(s: Sighting) -> bool:
        ends_colon = s.message.rstrip().endswith(":")
        below = _next_content(lines, s.end)
        introduces = below in trace_starts or (ends_colon and s.end in starts)
        return s.kind.startswith("log:") and introduces

    return [s for s in sightings if not announces(s)]


def _merge_repeats(sightings: list[Sighting]) -> list[Sighting]:
    """One per (line, kind); a native crash announced twice ("double free…", "Aborted") once."""
    kept: list[Sighting] = []
    seen: set[tuple[int, str]] = set()
    for s in sorted(sightings, key=lambda s: (s.start, s.end)):
        if (s.start, s.kind) in seen:
            continue
        last = kept[-1] if kept else None
        if (
            last
            and s.category == last.category == "native"
            and s.kind == last.kind
            and s.start - last.end <= 2
        ):
            continue
        seen.add((s.start, s.kind))
        kept.append(s)
    return kept


def _dedupe(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item for item in items if item))


def _signature(sighting: Sighting, lines: list[str]) -> ErrorSignature:
    message = _LOG_PREFIX.sub("", sighting.message.strip(), count=1)
    template = log_template(message)[:_MAX_TEMPLATE]
    frames = _dedupe(f.name for f in sighting.frames if f.own)[:MAX_FRAMES]
    parts = [sighting.kind, template_key(template)]
    if frames:
        parts.append(", ".join(frames))
    signature = " | ".join(parts)
    sample = "\n".join(lines[sighting.start : sighting.end]).strip()[:_MAX_SAMPLE]
    return ErrorSignature(
        kind=sighting.kind,
        category=sighting.category,
        template=template,
        frames=frames,
        symbols=_dedupe(sighting.symbols),
        signature=signature,
        key=signature_key(signature),
        sample=sample,
        chain=tuple(sighting.chain),
    )


def extract_errors(text: str) -> list[ErrorSignature]:
    """All distinct errors in a block of text, in the order they appear; [] when there are none."""
    lines = [line[:_MAX_LINE] for line in text.splitlines()]
    candidates = candidate_lines(lines)
    if not candidates:
        return []
    traces, covered = _trace_sightings(lines, candidates)
    codes = _code_sightings(lines, candidates)
    single = _one_line_sightings(lines, candidates, covered, {s.start for s in codes})
    single = _collapse_level_runs(single)
    sightings = _merge_repeats(_drop_announcements(traces + codes + single, traces, lines))
    distinct: dict[str, ErrorSignature] = {}
    for sighting in sightings:
        error = _signature(sighting, lines)
        distinct.setdefault(error.key, error)
    return list(distinct.values())


def resign(kind: str, sample: str) -> ErrorSignature | None:
    """An error signed again from the sample an ``Error`` node kept: the first error of the
    same kind found in it, or None when the sample alone no longer shows one."""
    return next((e for e in extract_errors(sample) if e.kind == kind), None)
