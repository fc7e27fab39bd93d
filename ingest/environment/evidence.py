"""Evidence of an environment: values per field with a rank (direct, secondary, inferred),
and the canonical names of packages, operating systems, architectures and runtimes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = [
    "DIRECT",
    "INFERRED",
    "RUNTIMES",
    "SECONDARY",
    "Evidence",
    "Parser",
    "arch_name",
    "each",
    "normalize_package",
    "os_name",
]

_LONGEST = 256  # characters of a package name or version: more is no package

DIRECT, SECONDARY, INFERRED = 3, 2, 1


def normalize_package(name: str, ecosystem: str = "python") -> str:
    """The canonical name of a package: PEP 503 for Python, lower case elsewhere."""
    name = name.strip()
    if ecosystem == "python":
        return re.sub(r"[-_.]+", "-", name).lower()
    return name.lower()


_ARCHES = {
    "x86_64": "x86_64", "amd64": "x86_64", "x64": "x86_64", "aarch64": "arm64",
    "arm64": "arm64", "i386": "x86", "i486": "x86", "i586": "x86", "i686": "x86",
    "x86": "x86", "armv7l": "armv7", "armv7": "armv7", "armv6l": "armv6",
    "ppc64le": "ppc64le", "s390x": "s390x", "riscv64": "riscv64",
}  # fmt: skip
_OS_NAMES = {
    "darwin": "macos", "mac os x": "macos", "macos": "macos", "osx": "macos",
    "windows": "windows", "windows_nt": "windows", "win32": "windows", "linux": "linux",
    "red hat enterprise linux": "rhel", "red hat enterprise linux server": "rhel",
    "centos linux": "centos", "centos stream": "centos", "rocky linux": "rocky",
}  # fmt: skip
RUNTIMES = {
    "python": "python", "cpython": "python", "python3": "python", "java": "java",
    "openjdk": "java", "jdk": "java", "node": "node", "nodejs": "node", "go": "go",
    "golang": "go", "rust": "rust", "rustc": "rust", "ruby": "ruby",
    "eclipse-temurin": "java", "amazoncorretto": "java",
}  # fmt: skip


def arch_name(value: str) -> str:
    return _ARCHES.get(value.lower(), value.lower())


def os_name(value: str) -> str:
    lowered = value.strip().strip('"').lower()
    return _OS_NAMES.get(lowered, lowered.replace(" ", "-"))


@dataclass
class Evidence:
    """Values per field with their rank; the best (then latest) wins."""

    fields: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    runtimes: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    packages: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    seen: int = 0

    def _put(self, table: dict[str, tuple[int, int, str]], key: str, value: str, rank: int) -> None:
        self.seen += 1
        held = table.get(key)
        if held is None or rank >= held[0]:
            # a runtime keeps its first sighting as its place in line
            order = held[1] if held is not None and table is self.runtimes else self.seen
            table[key] = (rank, order, value.strip())

    def fact(self, name: str, value: str | None, rank: int) -> None:
        if value and value.strip():
            self._put(self.fields, name, value, rank)

    def runtime(self, name: str, version: str, rank: int) -> None:
        self._put(self.runtimes, RUNTIMES.get(name.lower(), name.lower()), version, rank)

    def package(self, name: str, version: str, rank: int, ecosystem: str = "python") -> None:
        if name and version and len(name) <= _LONGEST and len(version) <= _LONGEST:
            self._put(self.packages, normalize_package(name, ecosystem), version, rank)


Parser = Callable[[str, Evidence], None]


def each(pattern: str, flags: int = re.MULTILINE) -> Callable[[Callable[..., None]], Parser]:
    """Run the decorated handler on every match of ``pattern`` (groups as arguments)."""
    compiled = re.compile(pattern, flags)

    def wrap(handler: Callable[..., None]) -> Parser:
        def parse(text: str, found: Evidence) -> None:
            for match in compiled.finditer(text):
                handler(found, *match.groups())

        parse.__doc__ = handler.__doc__
        return parse

    return wrap
