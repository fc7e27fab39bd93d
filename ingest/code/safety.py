"""The static safety scan: findings with rule id, line and severity, and the risk they add up to."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from metisgraph.ingest.code.credentials import credential_lifts
from metisgraph.ingest.code.lexical import line_of, without_comments
from metisgraph.ingest.code.lifting import Source
from metisgraph.ingest.code.model import RISKS, Finding
from metisgraph.ingest.code.python_analysis import parse_python
from metisgraph.ingest.code.python_safety import Hit, python_findings
from metisgraph.ingest.code.safety_rules import (
    LINE_RULES,
    PYTHON_FALLBACK_RULES,
    SHELL_WRITES,
    SYSTEM_PREFIXES,
    LineRule,
)

__all__ = ["RULES", "risk_of", "scan"]

_SHELL_LIKE = frozenset({"bash", "text", "dockerfile", "make", "diff"})
# Scratch space: writing there is what a careful snippet does.
_SCRATCH = (
    "/tmp/",  # noqa: S108
    "/var/tmp/",  # noqa: S108
    "/dev/null",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/fd/",
    "/proc/self/fd/",
)
_HOME_CONFIG = ("~/.ssh", "~/.bashrc", "~/.profile", "~/.bash_profile", "~/.zshrc", "~/.config/")
_PYTHON_ONLY = {
    "os-system": ("high", "runs a command line through a shell"),
    "recursive-delete": ("medium", "deletes a directory tree"),
}
_OWN = {
    "write-outside-workdir": ("medium", "writes outside the work directory"),
    "hardcoded-credential": (
        "medium",
        "a credential was written into the code (lifted, not stored)",
    ),
}
RULES: dict[str, tuple[str, str]] = {
    **{r.rule: (r.severity, r.message) for r in (*LINE_RULES, *PYTHON_FALLBACK_RULES)},
    **_PYTHON_ONLY,
    **_OWN,
}


def scan(code: str, language: str, *, workdir: str | None = None) -> tuple[Finding, ...]:
    """Every finding in `code`, one per rule and line, in line order.

    For a diff only the added lines are scanned: removed lines no longer run.
    """
    text = _added_only(code) if language == "diff" else code
    hits = list(_line_hits(text, language))
    hits += _credential_hits(text, language)
    tree = parse_python(text) if language == "python" else None
    if tree is not None:
        hits += python_findings(tree)
    else:
        rules = PYTHON_FALLBACK_RULES if language in {"python", "diff"} else ()
        hits += _pattern_hits(without_comments(text, language), rules)
    return _findings(hits, workdir)


def risk_of(findings: Iterable[Finding]) -> str:
    """The highest severity among the findings, or `none`."""
    return max((f.severity for f in findings), key=RISKS.index, default="none")


def _added_only(diff: str) -> str:
    """Blank every diff line but the added ones, keeping line numbers."""
    lines = diff.split("\n")
    kept = [
        line[1:] if line.startswith("+") and not line.startswith("+++ ") else "" for line in lines
    ]
    return "\n".join(kept)


def _line_hits(code: str, language: str) -> Iterator[Hit]:
    visible = without_comments(code, language)
    rules = [r for r in LINE_RULES if r.languages is None or language in r.languages]
    yield from _pattern_hits(visible, rules)
    if language in _SHELL_LIKE:
        for match in SHELL_WRITES.finditer(visible):
            target = next(value for value in match.groupdict().values() if value)
            yield Hit("write-outside-workdir", line_of(visible, match.start()), target=target)


def _pattern_hits(code: str, rules: Iterable[LineRule]) -> Iterator[Hit]:
    for rule in rules:
        for match in rule.pattern.finditer(code):
            severity = rule.escalate(match) if rule.escalate else None
            yield Hit(rule.rule, line_of(code, match.start()), severity)


def _credential_hits(code: str, language: str) -> list[Hit]:
    source = Source.of(code, language if language != "diff" else "text")
    return [
        Hit("hardcoded-credential", line_of(code, lift.start)) for lift in credential_lifts(source)
    ]


def _findings(hits: Iterable[Hit], workdir: str | None) -> tuple[Finding, ...]:
    best: dict[tuple[str, int], Finding] = {}
    for hit in hits:
        severity, message = RULES[hit.rule]
        if hit.target is not None:
            judged = _write_severity(hit.target, workdir)
            if judged is None:
                continue
            severity, message = judged, f"{message}: {hit.target}"
        severity = hit.severity or severity
        key = (hit.rule, hit.line)
        if key not in best or RISKS.index(severity) > RISKS.index(best[key].severity):
            best[key] = Finding(hit.rule, hit.line, severity, message)
    return tuple(sorted(best.values(), key=lambda f: (f.line, f.rule)))


def _write_severity(target: str, workdir: str | None) -> str | None:
    """None for writes inside the work directory or to scratch space; else how bad it is."""
    if (
        not target.startswith(("/", "~"))
        or target.startswith(_SCRATCH)
        or target in {"/tmp", "/dev/null"}  # noqa: S108
    ):
        return None
    if workdir and (target == workdir or target.startswith(workdir.rstrip("/") + "/")):
        return None
    return "high" if target.startswith(SYSTEM_PREFIXES + _HOME_CONFIG) else "medium"
