"""Operating systems and architectures: ``uname -a``, ``/etc/os-release``, ``lsb_release``,
``sw_vers``, ``ver``, Python's and Maven's platform lines.
"""

from __future__ import annotations

import re

from metisgraph.ingest.environment.evidence import (
    DIRECT,
    INFERRED,
    SECONDARY,
    Evidence,
    Parser,
    arch_name,
    each,
    os_name,
)

__all__ = ["SYSTEM_PARSERS"]

_ARCH_WORDS = r"(x86_64|amd64|aarch64|arm64|i[3-6]86|armv\d+l?|ppc64le|s390x|riscv64)"


@each(
    r"^(Linux|Darwin|FreeBSD|OpenBSD|NetBSD|SunOS)[ \t]+\S+[ \t]+(\d+\.\d+[\w.+~-]*)"
    r"(?:[^\n]*?\b" + _ARCH_WORDS + r"\b)?"
)
def _uname(found: Evidence, system: str, release: str, arch: str | None) -> None:
    """``uname -a``: kernel name, node name, kernel release, ..., machine."""
    os = os_name(system)
    found.fact("os", os, SECONDARY if os == "macos" else INFERRED)
    if os != "macos":  # Darwin's kernel release is not the macOS version
        found.fact("os_version", release, INFERRED)
    found.fact("arch", arch_name(arch) if arch else None, DIRECT)


@each(r"^" + _ARCH_WORDS + r"[ \t]*$")
def _uname_machine(found: Evidence, arch: str) -> None:
    """``uname -m`` alone: ``x86_64``."""
    found.fact("arch", arch_name(arch), SECONDARY)


_OS_RELEASE_FIELD = re.compile(r'^(NAME|ID|VERSION_ID|PRETTY_NAME)="?([^"\n]*)"?[ \t]*$', re.M)


def _os_release(text: str, found: Evidence) -> None:
    """``/etc/os-release``: trusted when at least two of its fields are there."""
    fields = {match.group(1): match.group(2) for match in _OS_RELEASE_FIELD.finditer(text)}
    if len(fields) < 2:
        return
    if "ID" in fields:
        found.fact("os", os_name(fields["ID"]), DIRECT)
        found.fact("os_version", fields.get("VERSION_ID"), DIRECT)
    elif pretty := re.match(r"([A-Za-z][A-Za-z ]*?)\s+(\d[\d.]*)", fields.get("PRETTY_NAME", "")):
        found.fact("os", os_name(pretty.group(1)), DIRECT)
        found.fact("os_version", pretty.group(2), DIRECT)


@each(r"^Distributor ID:[ \t]*(\S+)[ \t]*\n(?:.*\n)??Release:[ \t]*(\S+)")
def _lsb_release(found: Evidence, distributor: str, release: str) -> None:
    """``lsb_release -a``."""
    found.fact("os", os_name(distributor), DIRECT)
    found.fact("os_version", release, DIRECT)


@each(
    r"^(CentOS Linux|CentOS Stream|Red Hat Enterprise Linux(?: Server)?|Rocky Linux|AlmaLinux"
    r"|Fedora) release (\d[\d.]*)"
)
def _redhat_release(found: Evidence, name: str, version: str) -> None:
    """``/etc/redhat-release``: ``Rocky Linux release 9.3 (Blue Onyx)``."""
    found.fact("os", os_name(name), DIRECT)
    found.fact("os_version", version, DIRECT)


@each(r"^ProductName:[ \t]*(macOS|Mac OS X)[ \t]*\nProductVersion:[ \t]*(\S+)")
def _sw_vers(found: Evidence, name: str, version: str) -> None:
    """``sw_vers`` on macOS."""
    found.fact("os", os_name(name), DIRECT)
    found.fact("os_version", version, DIRECT)


@each(r"Microsoft Windows \[Version (\d+\.\d+\.\d+(?:\.\d+)?)\]")
def _windows_ver(found: Evidence, version: str) -> None:
    """``ver`` or the ``cmd.exe`` banner."""
    found.fact("os", "windows", DIRECT)
    found.fact("os_version", version, DIRECT)


@each(r"\b(Linux|macOS|Darwin|Windows)-(\d[\w.]*?)-" + _ARCH_WORDS + r"(?:-with-\S+|-\d+bit)?")
def _python_platform(found: Evidence, system: str, release: str, arch: str) -> None:
    """``platform.platform()``: ``Linux-5.15.0-91-generic-x86_64-with-glibc2.35``."""
    found.fact("os", os_name(system), INFERRED)
    found.fact("os_version", release, INFERRED)
    found.fact("arch", arch_name(arch), SECONDARY)


@each(r'^OS name: "([^"]+)", version: "([^"]+)", arch: "([^"]+)"')
def _maven_os(found: Evidence, system: str, release: str, arch: str) -> None:
    """``mvn -v``: ``OS name: "linux", version: "5.15.0-91-generic", arch: "amd64"``."""
    found.fact("os", os_name(system), INFERRED)
    found.fact("os_version", release, INFERRED)
    found.fact("arch", arch_name(arch), SECONDARY)


SYSTEM_PARSERS: tuple[Parser, ...] = (
    _uname, _uname_machine, _os_release, _lsb_release, _redhat_release, _sw_vers, _windows_ver,
    _python_platform, _maven_os,
)  # fmt: skip
