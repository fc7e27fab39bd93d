"""Packages and their versions: ``pip freeze``, ``pip list`` and ``pip install`` output,
Maven, Gradle and npm trees, lock files and manifests.
"""

from __future__ import annotations

import json
import re

from metisgraph.ingest.environment.evidence import (
    DIRECT,
    INFERRED,
    SECONDARY,
    Evidence,
    Parser,
    each,
)

__all__ = ["PACKAGE_PARSERS"]

_NAME = r"([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]\n]*\])?"


@each(r"^" + _NAME + r"===?([0-9][^\s;#\\,]*)[ \t]*(?:(?:;|#|\\|--hash)[^\n]*)?$")
def _pinned(found: Evidence, name: str, version: str) -> None:
    """``pip freeze`` and pinned requirements: ``numpy==1.26.4``."""
    found.package(name, version, DIRECT)


_SPEC = r"(?:~=|!=|>=|<=|>|<)[ \t]*[0-9*][^\s;#,]*"


@each(r"^" + _NAME + r"(" + _SPEC + r"(?:[ \t]*,[ \t]*" + _SPEC + r")*)[ \t]*(?:[;#][^\n]*)?$")
def _ranged(found: Evidence, name: str, spec: str) -> None:
    """A requirement with a range states less than an install: ``requests>=2.28,<3``."""
    found.package(name, spec.replace(" ", ""), INFERRED)


@each(r"^-e[ \t]+\S*?#egg=([A-Za-z0-9._-]+)")
def _editable(found: Evidence, name: str) -> None:
    """``pip freeze`` editable lines: ``-e git+https://…#egg=mypkg``."""
    found.package(name, "editable", DIRECT)


@each(r"^# Editable (?:Git )?install[^\n(]*\(([A-Za-z0-9._-]+)==([^\s)]+)\)")
def _editable_comment(found: Evidence, name: str, version: str) -> None:
    """Newer ``pip freeze``: ``# Editable install with no version control (mypkg==0.1)``."""
    found.package(name, version, DIRECT)


_WHEEL_VERSION = re.compile(r"[A-Za-z0-9_.]+-(\d[\w.+!]*?)(?:-[^/\s]*\.whl|\.tar\.gz|\.zip)$")


@each(r"^" + _NAME + r"[ \t]+@[ \t]+(\S+)[ \t]*$")
def _direct_reference(found: Evidence, name: str, url: str) -> None:
    """``pip freeze`` direct references: ``mypkg @ file:///…/mypkg-1.2.0-py3-none-any.whl``."""
    version = _WHEEL_VERSION.search(url)
    found.package(name, version.group(1) if version else "direct", DIRECT)


@each(r"^Successfully installed ([^\n]+)")
def _pip_installed(found: Evidence, installed: str) -> None:
    """``pip install`` output: ``Successfully installed numpy-1.26.4 scikit-learn-1.3.0``."""
    for item in installed.split():
        name, _, version = item.rpartition("-")
        if name and version[:1].isdigit():
            found.package(name, version, DIRECT)


@each(r"^Requirement already satisfied: " + _NAME + r"[^\s]* in [^\n]*\((\d[^()\s]*)\)[ \t]*$")
def _pip_satisfied(found: Evidence, name: str, version: str) -> None:
    """``Requirement already satisfied: numpy in ./venv/… (1.26.4)``."""
    found.package(name, version, DIRECT)


@each(r"^Name: ([A-Za-z0-9._-]+)[ \t]*\nVersion: (\S+)")
def _pip_show(found: Evidence, name: str, version: str) -> None:
    """``pip show numpy``."""
    found.package(name, version, DIRECT)


_TABLE_HEADER = re.compile(
    r"^(?:Package[ \t]+Version\b[^\n]*\n[- \t]+|#[ \t]*Name[ \t]+Version[ \t]+Build\b[^\n]*)$",
    re.MULTILINE,
)
_TABLE_ROW = re.compile(r"[ \t]*([A-Za-z0-9][A-Za-z0-9._-]*)[ \t]+(\d[^\s]*)")


def _package_tables(text: str, found: Evidence) -> None:
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


@each(r"^Apache Maven (\d+\.\d+(?:\.\d+)?)")
def _maven(found: Evidence, version: str) -> None:
    """``mvn -v``: ``Apache Maven 3.9.0 (…)``; the build tool is part of the environment."""
    found.package("maven", version, DIRECT)


@each(r"^Gradle (\d+\.\d+(?:\.\d+)?)[ \t]*$")
def _gradle(found: Evidence, version: str) -> None:
    """``gradle -v``: ``Gradle 8.5``."""
    found.package("gradle", version, DIRECT)


@each(
    r"<dependency>\s*<groupId>([^<\s]+)</groupId>\s*<artifactId>([^<\s]+)</artifactId>"
    r"\s*<version>([^<$\s]+)</version>"
)
def _pom(found: Evidence, group: str, artifact: str, version: str) -> None:
    """``pom.xml`` dependencies with a literal version."""
    found.package(f"{group}:{artifact}", version, SECONDARY, "maven")


@each(
    r"([\w.-]+):([\w.-]+):(?:jar|pom|war|aar|bundle|test-jar):(?:[\w.-]+:)?([\w.-]+)"
    r":(?:compile|test|runtime|provided|system|import)\b"
)
def _maven_tree(found: Evidence, group: str, artifact: str, version: str) -> None:
    """``mvn dependency:tree``: ``+- org.slf4j:slf4j-api:jar:2.0.9:compile``."""
    found.package(f"{group}:{artifact}", version, DIRECT, "maven")


@each(r"[+\\]--- ([\w.-]+):([\w.-]+):([\w.+-]+)(?: -> ([\w.+-]+))?")
def _gradle_tree(
    found: Evidence, group: str, artifact: str, asked: str, resolved: str | None
) -> None:
    """``gradle dependencies``: ``+--- org.slf4j:slf4j-api:1.7.36 -> 2.0.9``."""
    found.package(f"{group}:{artifact}", resolved or asked, DIRECT, "maven")


@each(r"^[│├└─┬ |`+\\-]+ ((?:@[\w.-]+/)?[\w.-]+)@(\d[\w.+-]*)")
def _npm_ls(found: Evidence, name: str, version: str) -> None:
    """``npm ls``: ``├── express@4.18.2``."""
    found.package(name, version, DIRECT, "npm")


@each(r'"(?:[^"\n]*node_modules/)?((?:@[\w.-]+/)?[\w.-]+)"\s*:\s*\{\s*"version"\s*:\s*"(\d[^"]*)"')
def _package_lock(found: Evidence, name: str, version: str) -> None:
    """``package-lock.json`` entries, whole or excerpted."""
    found.package(name, version, DIRECT, "npm")


_JSON_DEPENDENCIES = re.compile(
    r'"(?:dependencies|devDependencies|peerDependencies|optionalDependencies)"\s*:\s*\{([^{}]*)\}'
)
_JSON_PAIR = re.compile(r'"((?:@[\w.-]+/)?[\w.-]+)"\s*:\s*"([^"]+)"')


def _package_json(text: str, found: Evidence) -> None:
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


def _toml_locks(text: str, found: Evidence) -> None:
    """``poetry.lock``, ``uv.lock`` and ``Cargo.lock`` entries (a checksum marks Cargo)."""
    for match in _TOML_PACKAGE.finditer(text):
        cargo = 'checksum = "' in match.group("rest") or "registry+" in match.group("rest")
        found.package(match.group(1), match.group(2), DIRECT, "cargo" if cargo else "python")


def _pipfile_lock(text: str, found: Evidence) -> None:
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


PACKAGE_PARSERS: tuple[Parser, ...] = (
    _pinned, _ranged, _editable, _editable_comment, _direct_reference, _pip_installed,
    _pip_satisfied, _pip_show, _package_tables, _maven, _gradle, _pom, _maven_tree,
    _gradle_tree, _npm_ls, _package_lock, _package_json, _toml_locks, _pipfile_lock,
)  # fmt: skip
