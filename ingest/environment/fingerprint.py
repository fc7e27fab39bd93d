"""Environments: the OS, runtime and packages an episode ran in, as a stable fingerprint.

Evidence comes from what an agent saw (``python --version``, ``pip freeze``, ``pip
list``, ``uname -a``, ``/etc/os-release``, ``java -version``, ``mvn -v``, ``node -v``,
``go version``, ``rustc --version``, lock files and manifests) and from fields the
caller states. Each piece of evidence has a rank: a direct statement (a version
printed by the tool, a lock file) beats a secondary one (``mvn -v`` naming the JVM)
beats an inference (a ``python3.9/site-packages`` path, a version range in a
manifest). For one field the highest rank wins, and among equals the latest, since
a later ``pip freeze`` follows an upgrade. Explicit fields win over all of it.

The same environment gives the same ``key`` (a hash over every field and package),
which is the identity of its ``Environment`` node.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from metisgraph.ingest.records import EnvironmentInput
from metisgraph.ingest.sanitize.redaction import redact

__all__ = [
    "EnvironmentFingerprint",
    "environment_row",
    "extract_environment",
    "fingerprint",
    "normalize_package",
]

DIRECT, SECONDARY, INFERRED = 3, 2, 1


@dataclass(frozen=True)
class EnvironmentFingerprint:
    """A runtime context: OS, architecture, runtime and packages, with its identity hash."""

    os: str | None
    os_version: str | None
    arch: str | None
    runtime: str | None
    runtime_version: str | None
    packages: dict[str, str]
    key: str


def normalize_package(name: str, ecosystem: str = "python") -> str:
    """The canonical name of a package: PEP 503 for Python, lower case elsewhere."""
    name = name.strip()
    if ecosystem == "python":
        return re.sub(r"[-_.]+", "-", name).lower()
    return name.lower()


def _normalize_stated(name: str) -> str:
    """A package named by a caller, ecosystem unknown: Maven and npm names keep their dots."""
    if ":" in name or name.startswith("@") or "/" in name:
        return normalize_package(name, "other")
    return normalize_package(name)


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
_RUNTIMES = {
    "python": "python", "cpython": "python", "python3": "python", "java": "java",
    "openjdk": "java", "jdk": "java", "node": "node", "nodejs": "node", "go": "go",
    "golang": "go", "rust": "rust", "rustc": "rust", "ruby": "ruby",
    "eclipse-temurin": "java", "amazoncorretto": "java",
}  # fmt: skip


def _arch(value: str) -> str:
    return _ARCHES.get(value.lower(), value.lower())


def _os(value: str) -> str:
    lowered = value.strip().strip('"').lower()
    return _OS_NAMES.get(lowered, lowered.replace(" ", "-"))


# --- collected evidence -------------------------------------------------------------------


@dataclass
class _Evidence:
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
        self._put(self.runtimes, _RUNTIMES.get(name.lower(), name.lower()), version, rank)

    def package(self, name: str, version: str, rank: int, ecosystem: str = "python") -> None:
        if name and version:
            self._put(self.packages, normalize_package(name, ecosystem), version, rank)


Parser = Callable[[str, _Evidence], None]


def _each(pattern: str, flags: int = re.MULTILINE) -> Callable[[Callable[..., None]], Parser]:
    """Run the decorated handler on every match of ``pattern`` (groups as arguments)."""
    compiled = re.compile(pattern, flags)

    def wrap(handler: Callable[..., None]) -> Parser:
        def parse(text: str, found: _Evidence) -> None:
            for match in compiled.finditer(text):
                handler(found, *match.groups())

        parse.__doc__ = handler.__doc__
        return parse

    return wrap


# --- runtimes -----------------------------------------------------------------------------


@_each(r"^[ \t]*Python (\d+\.\d+(?:\.\d+)?(?:(?:a|b|rc)\d+)?\+?)(?=[\s(]|$)")
def _python_version(found: _Evidence, version: str) -> None:
    """``python --version`` and the interpreter banner: ``Python 3.11.7``."""
    found.runtime("python", version, DIRECT)


@_each(r"^platform (\w+) -- Python (\d+\.\d+\.\d+\S*?),? pytest-([^\s,]+)(?:, pluggy-([^\s,]+))?")
def _pytest_header(
    found: _Evidence, system: str, python: str, pytest: str, pluggy: str | None
) -> None:
    """pytest's session header: ``platform linux -- Python 3.9.20, pytest-7.4.0, pluggy-1.5.0``."""
    found.fact("os", _os(system), INFERRED)
    found.runtime("python", python, DIRECT)
    found.package("pytest", pytest, DIRECT)
    if pluggy:
        found.package("pluggy", pluggy, DIRECT)


@_each(r"python(\d\.\d{1,2})/(?:site|dist)-packages")
def _python_from_paths(found: _Evidence, version: str) -> None:
    """Tracebacks name the interpreter in their paths: ``lib/python3.9/site-packages``."""
    found.runtime("python", version, INFERRED)


@_each(r"\b(?:openjdk|java) version \"([^\"]+)\"")
def _java_version(found: _Evidence, version: str) -> None:
    """``java -version``: ``openjdk version "17.0.15" 2025-04-15``."""
    found.runtime("java", version, DIRECT)


@_each(r"^(?:openjdk|java) (\d+(?:\.\d+)*(?:_\d+)?)\b")
def _java_dash_dash_version(found: _Evidence, version: str) -> None:
    """``java --version``: ``openjdk 17.0.15 2025-04-15``."""
    found.runtime("java", version, DIRECT)


@_each(r"^Java version: ([\w.+-]+)|^JVM:[ \t]+([\w.+-]+)")
def _java_from_build_tool(found: _Evidence, maven: str | None, gradle: str | None) -> None:
    """``mvn -v`` and ``gradle -v`` name the JVM they run on."""
    found.runtime("java", maven or gradle or "", SECONDARY)


@_each(r"\bNode\.js (v?\d+\.\d+\.\d+)|^node (v\d+\.\d+\.\d+)")
def _node_banner(found: _Evidence, banner: str | None, line: str | None) -> None:
    """``Welcome to Node.js v20.11.1.`` and ``node v20.11.1``."""
    found.runtime("node", (banner or line or "").lstrip("v"), DIRECT)


@_each(r"\bgo version go(\d+\.\d+(?:\.\d+)?)(?:[ \t]+(\w+)/(\w+))?")
def _go_version(found: _Evidence, version: str, os: str | None, arch: str | None) -> None:
    """``go version go1.22.1 linux/amd64``."""
    found.runtime("go", version, DIRECT)
    found.fact("os", _os(os) if os else None, INFERRED)
    found.fact("arch", _arch(arch) if arch else None, SECONDARY)


@_each(r"\brustc (\d+\.\d+\.\d+)")
def _rust_version(found: _Evidence, version: str) -> None:
    """``rustc 1.76.0 (07dca489a 2024-02-04)``."""
    found.runtime("rust", version, DIRECT)


@_each(r"^ruby (\d+\.\d+\.\d+)(?:p\d+)? ")
def _ruby_version(found: _Evidence, version: str) -> None:
    """``ruby 3.2.2 (2023-03-30 revision e51014f9c0) [x86_64-linux]``."""
    found.runtime("ruby", version, DIRECT)


@_each(
    r"^FROM[ \t]+(?:\S+/)?(python|node|openjdk|eclipse-temurin|amazoncorretto|golang|rust|ruby)"
    r":(\d+(?:\.\d+)*)"
)
def _dockerfile_base(found: _Evidence, image: str, version: str) -> None:
    """A Dockerfile's base image: ``FROM python:3.11-slim``."""
    found.runtime(image, version, INFERRED)


_NODE_COMMAND = re.compile(r"\bnode[ \t]+(?:-v|--version)\b")
_BARE_VERSION = re.compile(r"^v(\d+\.\d+\.\d+)[ \t]*$", re.MULTILINE)


def _node_version(texts: list[str], found: _Evidence) -> None:
    """``node -v`` prints a bare ``v20.11.1``: trusted only next to that command."""
    if any(_NODE_COMMAND.search(text) for text in texts):
        for text in texts:
            for match in _BARE_VERSION.finditer(text):
                found.runtime("node", match.group(1), DIRECT)


# --- operating system and architecture ----------------------------------------------------

_ARCH_WORDS = r"(x86_64|amd64|aarch64|arm64|i[3-6]86|armv\d+l?|ppc64le|s390x|riscv64)"


@_each(
    r"^(Linux|Darwin|FreeBSD|OpenBSD|NetBSD|SunOS)[ \t]+\S+[ \t]+(\d+\.\d+[\w.+~-]*)"
    r"(?:[^\n]*?\b" + _ARCH_WORDS + r"\b)?"
)
def _uname(found: _Evidence, system: str, release: str, arch: str | None) -> None:
    """``uname -a``: kernel name, node name, kernel release, ..., machine."""
    os = _os(system)
    found.fact("os", os, SECONDARY if os == "macos" else INFERRED)
    if os != "macos":  # Darwin's kernel release is not the macOS version
        found.fact("os_version", release, INFERRED)
    found.fact("arch", _arch(arch) if arch else None, DIRECT)


@_each(r"^" + _ARCH_WORDS + r"[ \t]*$")
def _uname_machine(found: _Evidence, arch: str) -> None:
    """``uname -m`` alone: ``x86_64``."""
    found.fact("arch", _arch(arch), SECONDARY)


_OS_RELEASE_FIELD = re.compile(r'^(NAME|ID|VERSION_ID|PRETTY_NAME)="?([^"\n]*)"?[ \t]*$', re.M)


def _os_release(text: str, found: _Evidence) -> None:
    """``/etc/os-release``: trusted when at least two of its fields are there."""
    fields = {match.group(1): match.group(2) for match in _OS_RELEASE_FIELD.finditer(text)}
    if len(fields) < 2:
        return
    if "ID" in fields:
        found.fact("os", _os(fields["ID"]), DIRECT)
        found.fact("os_version", fields.get("VERSION_ID"), DIRECT)
    elif pretty := re.match(r"([A-Za-z][A-Za-z ]*?)\s+(\d[\d.]*)", fields.get("PRETTY_NAME", "")):
        found.fact("os", _os(pretty.group(1)), DIRECT)
        found.fact("os_version", pretty.group(2), DIRECT)


@_each(r"^Distributor ID:[ \t]*(\S+)[ \t]*\n(?:.*\n)??Release:[ \t]*(\S+)")
def _lsb_release(found: _Evidence, distributor: str, release: str) -> None:
    """``lsb_release -a``."""
    found.fact("os", _os(distributor), DIRECT)
    found.fact("os_version", release, DIRECT)


@_each(
    r"^(CentOS Linux|CentOS Stream|Red Hat Enterprise Linux(?: Server)?|Rocky Linux|AlmaLinux"
    r"|Fedora) release (\d[\d.]*)"
)
def _redhat_release(found: _Evidence, name: str, version: str) -> None:
    """``/etc/redhat-release``: ``Rocky Linux release 9.3 (Blue Onyx)``."""
    found.fact("os", _os(name), DIRECT)
    found.fact("os_version", version, DIRECT)


@_each(r"^ProductName:[ \t]*(macOS|Mac OS X)[ \t]*\nProductVersion:[ \t]*(\S+)")
def _sw_vers(found: _Evidence, name: str, version: str) -> None:
    """``sw_vers`` on macOS."""
    found.fact("os", _os(name), DIRECT)
    found.fact("os_version", version, DIRECT)


@_each(r"Microsoft Windows \[Version (\d+\.\d+\.\d+(?:\.\d+)?)\]")
def _windows_ver(found: _Evidence, version: str) -> None:
    """``ver`` or the ``cmd.exe`` banner."""
    found.fact("os", "windows", DIRECT)
    found.fact("os_version", version, DIRECT)


@_each(r"\b(Linux|macOS|Darwin|Windows)-(\d[\w.]*?)-" + _ARCH_WORDS + r"(?:-with-\S+|-\d+bit)?")
def _python_platform(found: _Evidence, system: str, release: str, arch: str) -> None:
    """``platform.platform()``: ``Linux-5.15.0-91-generic-x86_64-with-glibc2.35``."""
    found.fact("os", _os(system), INFERRED)
    found.fact("os_version", release, INFERRED)
    found.fact("arch", _arch(arch), SECONDARY)


@_each(r'^OS name: "([^"]+)", version: "([^"]+)", arch: "([^"]+)"')
def _maven_os(found: _Evidence, system: str, release: str, arch: str) -> None:
    """``mvn -v``: ``OS name: "linux", version: "5.15.0-91-generic", arch: "amd64"``."""
    found.fact("os", _os(system), INFERRED)
    found.fact("os_version", release, INFERRED)
    found.fact("arch", _arch(arch), SECONDARY)


# --- packages -----------------------------------------------------------------------------

_NAME = r"([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]\n]*\])?"


@_each(r"^" + _NAME + r"===?([0-9][^\s;#\\,]*)[ \t]*(?:(?:;|#|\\|--hash)[^\n]*)?$")
def _pinned(found: _Evidence, name: str, version: str) -> None:
    """``pip freeze`` and pinned requirements: ``numpy==1.26.4``."""
    found.package(name, version, DIRECT)


_SPEC = r"(?:~=|!=|>=|<=|>|<)[ \t]*[0-9*][^\s;#,]*"


@_each(r"^" + _NAME + r"(" + _SPEC + r"(?:[ \t]*,[ \t]*" + _SPEC + r")*)[ \t]*(?:[;#][^\n]*)?$")
def _ranged(found: _Evidence, name: str, spec: str) -> None:
    """A requirement with a range states less than an install: ``requests>=2.28,<3``."""
    found.package(name, spec.replace(" ", ""), INFERRED)


@_each(r"^-e[ \t]+\S*?#egg=([A-Za-z0-9._-]+)")
def _editable(found: _Evidence, name: str) -> None:
    """``pip freeze`` editable lines: ``-e git+https://…#egg=mypkg``."""
    found.package(name, "editable", DIRECT)


@_each(r"^# Editable (?:Git )?install[^\n(]*\(([A-Za-z0-9._-]+)==([^\s)]+)\)")
def _editable_comment(found: _Evidence, name: str, version: str) -> None:
    """Newer ``pip freeze``: ``# Editable install with no version control (mypkg==0.1)``."""
    found.package(name, version, DIRECT)


_WHEEL_VERSION = re.compile(r"[A-Za-z0-9_.]+-(\d[\w.+!]*?)(?:-[^/\s]*\.whl|\.tar\.gz|\.zip)$")


@_each(r"^" + _NAME + r"[ \t]+@[ \t]+(\S+)[ \t]*$")
def _direct_reference(found: _Evidence, name: str, url: str) -> None:
    """``pip freeze`` direct references: ``mypkg @ file:///…/mypkg-1.2.0-py3-none-any.whl``."""
    version = _WHEEL_VERSION.search(url)
    found.package(name, version.group(1) if version else "direct", DIRECT)


@_each(r"^Successfully installed ([^\n]+)")
def _pip_installed(found: _Evidence, installed: str) -> None:
    """``pip install`` output: ``Successfully installed numpy-1.26.4 scikit-learn-1.3.0``."""
    for item in installed.split():
        name, _, version = item.rpartition("-")
        if name and version[:1].isdigit():
            found.package(name, version, DIRECT)


@_each(r"^Requirement already satisfied: " + _NAME + r"[^\s]* in [^\n]*\((\d[^()\s]*)\)[ \t]*$")
def _pip_satisfied(found: _Evidence, name: str, version: str) -> None:
    """``Requirement already satisfied: numpy in ./venv/… (1.26.4)``."""
    found.package(name, version, DIRECT)


@_each(r"^Name: ([A-Za-z0-9._-]+)[ \t]*\nVersion: (\S+)")
def _pip_show(found: _Evidence, name: str, version: str) -> None:
    """``pip show numpy``."""
    found.package(name, version, DIRECT)


_TABLE_HEADER = re.compile(
    r"^(?:Package[ \t]+Version\b[^\n]*\n[- \t]+|#[ \t]*Name[ \t]+Version[ \t]+Build\b[^\n]*)$",
    re.MULTILINE,
)
_TABLE_ROW = re.compile(r"[ \t]*([A-Za-z0-9][A-Za-z0-9._-]*)[ \t]+(\d[^\s]*)")


def _package_tables(text: str, found: _Evidence) -> None:
    """``pip list`` and ``conda list`` tables; conda's python row names the runtime."""
    for header in _TABLE_HEADER.finditer(text):
        for line in text[header.end() + 1 :].splitlines():
            row = _TABLE_ROW.match(line)
            if row is None:
                if line.strip():
                    break
                continue
            name, version = row.groups()
            if name.lower() == "python":
                found.runtime("python", version, DIRECT)
            else:
                found.package(name, version, DIRECT)


@_each(r"^Apache Maven (\d+\.\d+(?:\.\d+)?)")
def _maven(found: _Evidence, version: str) -> None:
    """``mvn -v``: ``Apache Maven 3.9.0 (…)``; the build tool is part of the environment."""
    found.package("maven", version, DIRECT)


@_each(r"^Gradle (\d+\.\d+(?:\.\d+)?)[ \t]*$")
def _gradle(found: _Evidence, version: str) -> None:
    """``gradle -v``: ``Gradle 8.5``."""
    found.package("gradle", version, DIRECT)


@_each(
    r"<dependency>\s*<groupId>([^<\s]+)</groupId>\s*<artifactId>([^<\s]+)</artifactId>"
    r"\s*<version>([^<$\s]+)</version>"
)
def _pom(found: _Evidence, group: str, artifact: str, version: str) -> None:
    """``pom.xml`` dependencies with a literal version."""
    found.package(f"{group}:{artifact}", version, SECONDARY, "maven")


@_each(
    r"([\w.-]+):([\w.-]+):(?:jar|pom|war|aar|bundle|test-jar):(?:[\w.-]+:)?([\w.-]+)"
    r":(?:compile|test|runtime|provided|system|import)\b"
)
def _maven_tree(found: _Evidence, group: str, artifact: str, version: str) -> None:
    """``mvn dependency:tree``: ``+- org.slf4j:slf4j-api:jar:2.0.9:compile``."""
    found.package(f"{group}:{artifact}", version, DIRECT, "maven")


@_each(r"[+\\]--- ([\w.-]+):([\w.-]+):([\w.+-]+)(?: -> ([\w.+-]+))?")
def _gradle_tree(
    found: _Evidence, group: str, artifact: str, asked: str, resolved: str | None
) -> None:
    """``gradle dependencies``: ``+--- org.slf4j:slf4j-api:1.7.36 -> 2.0.9``."""
    found.package(f"{group}:{artifact}", resolved or asked, DIRECT, "maven")


@_each(r"^[│├└─┬ |`+\\-]+ ((?:@[\w.-]+/)?[\w.-]+)@(\d[\w.+-]*)")
def _npm_ls(found: _Evidence, name: str, version: str) -> None:
    """``npm ls``: ``├── express@4.18.2``."""
    found.package(name, version, DIRECT, "npm")


@_each(r'"(?:[^"\n]*node_modules/)?((?:@[\w.-]+/)?[\w.-]+)"\s*:\s*\{\s*"version"\s*:\s*"(\d[^"]*)"')
def _package_lock(found: _Evidence, name: str, version: str) -> None:
    """``package-lock.json`` entries, whole or excerpted."""
    found.package(name, version, DIRECT, "npm")


_JSON_DEPENDENCIES = re.compile(
    r'"(?:dependencies|devDependencies|peerDependencies|optionalDependencies)"\s*:\s*\{([^{}]*)\}'
)
_JSON_PAIR = re.compile(r'"((?:@[\w.-]+/)?[\w.-]+)"\s*:\s*"([^"]+)"')


def _package_json(text: str, found: _Evidence) -> None:
    """``package.json`` dependency blocks; exact versions stated, ranges inferred."""
    for block in _JSON_DEPENDENCIES.finditer(text):
        for name, version in _JSON_PAIR.findall(block.group(1)):
            exact = re.fullmatch(r"=?v?(\d+\.\d+\.\d+[\w.+-]*)", version)
            rank = SECONDARY if exact else INFERRED
            found.package(name, exact.group(1) if exact else version, rank, "npm")


_TOML_PACKAGE = re.compile(
    r'^\[\[package\]\]\s*\nname\s*=\s*"([^"]+)"\s*\nversion\s*=\s*"([^"]+)"(?P<rest>(?:\n(?!\[).*)*)',
    re.MULTILINE,
)


def _toml_locks(text: str, found: _Evidence) -> None:
    """``poetry.lock``, ``uv.lock`` and ``Cargo.lock`` entries (a checksum marks Cargo)."""
    for match in _TOML_PACKAGE.finditer(text):
        cargo = 'checksum = "' in match.group("rest") or "registry+" in match.group("rest")
        found.package(match.group(1), match.group(2), DIRECT, "cargo" if cargo else "python")


def _pipfile_lock(text: str, found: _Evidence) -> None:
    """``Pipfile.lock`` (whole documents only: its versions sit after the hashes)."""
    if '"_meta"' not in text or '"pipfile-spec"' not in text:
        return
    try:
        document = json.loads(text)
    except ValueError:
        return
    for section in ("default", "develop"):
        for name, entry in (document.get(section) or {}).items():
            version = entry.get("version", "") if isinstance(entry, dict) else ""
            if version.startswith("=="):
                found.package(name, version[2:], DIRECT)


_PARSERS: tuple[Parser, ...] = (
    _python_version, _pytest_header, _python_from_paths, _java_version, _java_dash_dash_version,
    _java_from_build_tool, _node_banner, _go_version, _rust_version, _ruby_version,
    _dockerfile_base, _uname, _uname_machine, _os_release, _lsb_release, _redhat_release,
    _sw_vers, _windows_ver, _python_platform, _maven_os, _pinned, _ranged, _editable,
    _editable_comment, _direct_reference, _pip_installed, _pip_satisfied, _pip_show,
    _package_tables, _maven, _gradle, _pom, _maven_tree, _gradle_tree, _npm_ls,
    _package_lock, _package_json, _toml_locks, _pipfile_lock,
)  # fmt: skip


# --- the fingerprint ----------------------------------------------------------------------


def fingerprint(
    os: str | None = None,
    os_version: str | None = None,
    arch: str | None = None,
    runtime: str | None = None,
    runtime_version: str | None = None,
    packages: dict[str, str] | None = None,
) -> EnvironmentFingerprint:
    """A fingerprint from known fields; ``key`` hashes all of them, so equal means equal."""
    packages = dict(sorted((packages or {}).items()))
    canonical = json.dumps(
        [os, os_version, arch, runtime, runtime_version, packages], separators=(",", ":")
    )
    key = hashlib.sha256(canonical.encode()).hexdigest()
    return EnvironmentFingerprint(os, os_version, arch, runtime, runtime_version, packages, key)


def environment_row(
    project: str, env: EnvironmentFingerprint, episode_ids: list[str]
) -> dict[str, Any]:
    """The row `upsert_environments` (cypher/write.cypher) writes an environment from."""
    return {
        "project": project,
        "key": env.key,
        "os": env.os,
        "os_version": env.os_version,
        "arch": env.arch,
        "runtime": env.runtime,
        "runtime_version": env.runtime_version,
        "packages": [{"name": n, "version": v} for n, v in sorted(env.packages.items())],
        "episode_ids": episode_ids,
    }


@dataclass
class _Known:
    """The fields of an environment as they are settled."""

    os: str | None = None
    os_version: str | None = None
    arch: str | None = None
    runtime: str | None = None
    runtime_version: str | None = None
    packages: dict[str, str] = field(default_factory=dict)

    def empty(self) -> bool:
        fields = (self.os, self.os_version, self.arch, self.runtime, self.runtime_version)
        return not any(fields) and not self.packages


def _best(table: dict[str, tuple[int, int, str]], name: str) -> str | None:
    held = table.get(name)
    return held[2] if held else None


def _from_evidence(found: _Evidence) -> _Known:
    """The winning value of every field; runtimes after the first become packages."""
    runtimes = sorted(found.runtimes.items(), key=lambda item: (-item[1][0], item[1][1]))
    known = _Known(
        os=_best(found.fields, "os"),
        os_version=_best(found.fields, "os_version"),
        arch=_best(found.fields, "arch"),
        packages={name: value for name, (_, _, value) in found.packages.items()},
    )
    if runtimes:
        known.runtime, known.runtime_version = runtimes[0][0], runtimes[0][1][2]
    for name, (_, _, version) in runtimes[1:]:
        known.packages.setdefault(name, version)
    return known


def _stated(value: str) -> str:
    """A stated field as stored: stripped, secrets redacted (a caller's text, like any other)."""
    return redact(value.strip()).text


def _apply_stated(explicit: EnvironmentInput, known: _Known) -> None:
    """Explicit fields over extracted ones; another stated runtime drops the extracted version."""
    if explicit.runtime:
        runtime = _RUNTIMES.get(explicit.runtime.lower().strip(), explicit.runtime.lower().strip())
        if runtime != known.runtime:
            known.runtime_version = None
        known.runtime = runtime
    if explicit.os:
        if _os(explicit.os) != known.os:
            known.os_version = None  # an extracted version belongs to the extracted OS
        known.os = _os(explicit.os)
    if explicit.arch:
        known.arch = _arch(explicit.arch.strip())
    if explicit.os_version:
        known.os_version = _stated(explicit.os_version)
    if explicit.runtime_version:
        known.runtime_version = _stated(explicit.runtime_version)
    for name, version in explicit.packages.items():
        known.packages[_normalize_stated(_stated(name))] = _stated(version)


def extract_environment(
    texts: Iterable[str], explicit: EnvironmentInput | None = None
) -> EnvironmentFingerprint | None:
    """The environment the texts show, with explicit fields winning; None when nothing is known."""
    found = _Evidence()
    observed = [text for text in texts if text]
    for text in observed:
        for parse in _PARSERS:
            parse(text, found)
    _node_version(observed, found)
    known = _from_evidence(found)
    if explicit is not None:
        _apply_stated(explicit, known)
    if known.empty():
        return None
    return fingerprint(
        known.os, known.os_version, known.arch, known.runtime, known.runtime_version, known.packages
    )
