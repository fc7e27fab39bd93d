"""The environment a verification vouches for: the sandbox's own, read the way ingest reads
any (`uname`, os-release, the runtime's `--version`), with what the caller states on top.

Where the caller states something the sandbox can see (its OS, architecture, the runtime of
the snippet's language) the two must agree: a pass must not vouch for Python 3.9 when 3.11
ran it. What the sandbox cannot see (the caller's package versions) is recorded as stated.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
from functools import cache
from pathlib import Path

from metisgraph.ingest.environment import (
    EnvironmentFingerprint,
    extract_environment,
    fingerprint,
)
from metisgraph.ingest.records import EnvironmentInput
from metisgraph.ingest.sandbox.confine import INNER_PATH

__all__ = ["EnvironmentMismatch", "sandbox_evidence", "verified_environment"]

# language -> the runtime the sandbox runs its tests with, and how its banner is read
_RUNTIMES = {"python": ("python3", "{}"), "javascript": ("node", "node {}")}
_OBSERVED = ("os", "os_version", "arch", "runtime", "runtime_version")


class EnvironmentMismatch(ValueError):
    """The caller's environment contradicts the sandbox's; the message names the field."""


@cache
def sandbox_evidence(language: str) -> tuple[str, ...]:
    """What the sandbox runs on, as the texts a trajectory would show: uname, os-release,
    the runtime's banner. The sandbox sees the host's /usr, so the host's binaries answer."""
    uname = platform.uname()
    texts = [f"{uname.system} sandbox {uname.release} {uname.machine}"]
    for release in (Path("/etc/os-release"), Path("/usr/lib/os-release")):
        if release.is_file():
            texts.append(release.read_text(encoding="utf-8", errors="replace"))
            break
    runtime, banner = _RUNTIMES.get(language, (None, ""))
    binary = shutil.which(runtime, path=INNER_PATH) if runtime else None
    if binary:
        done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=20)
        texts.append(banner.format((done.stdout or done.stderr).strip()))
    return tuple(texts)


def verified_environment(
    language: str, stated: EnvironmentInput | None
) -> EnvironmentFingerprint | None:
    """The sandbox's environment with the caller's statement on top; refused on a conflict."""
    observed = extract_environment(sandbox_evidence(language))
    said = extract_environment((), stated) if stated is not None else None
    if observed is None or said is None:
        return observed or said
    fields: dict[str, str | None] = {}
    for name in _OBSERVED:
        seen, claimed = getattr(observed, name), getattr(said, name)
        if seen and claimed and not _agree(seen, claimed):
            raise EnvironmentMismatch(
                f"environment.{_camel(name)}: {claimed!r} was given, the sandbox has {seen!r}"
            )
        fields[name] = max((seen, claimed), key=lambda v: len(v or ""))  # the more precise
    return fingerprint(**fields, packages={**observed.packages, **said.packages})


def _agree(a: str, b: str) -> bool:
    """Equal, or one a more precise form of the other (`3.11` and `3.11.2`)."""
    a, b = a.lower(), b.lower()
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)
