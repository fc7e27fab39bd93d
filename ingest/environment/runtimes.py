"""Runtimes and their versions: interpreter banners, ``--version`` lines, build tools,
site-packages paths, Dockerfile base images.
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

__all__ = ["RUNTIME_PARSERS", "node_version"]


@each(r"^[ \t]*Python (\d+\.\d+(?:\.\d+)?(?:(?:a|b|rc)\d+)?\+?)(?=[\s(]|$)")
def _python_version(found: Evidence, version: str) -> None:
    """``python --version`` and the interpreter banner: ``Python 3.11.7``."""
    found.runtime("python", version, DIRECT)


@each(r"^platform (\w+) -- Python (\d+\.\d+\.\d+\S*?),? pytest-([^\s,]+)(?:, pluggy-([^\s,]+))?")
def _pytest_header(
    found: Evidence, system: str, python: str, pytest: str, pluggy: str | None
) -> None:
    """pytest's session header: ``platform linux -- Python 3.9.20, pytest-7.4.0, pluggy-1.5.0``."""
    found.fact("os", os_name(system), INFERRED)
    found.runtime("python", python, DIRECT)
    found.package("pytest", pytest, DIRECT)
    if pluggy:
        found.package("pluggy", pluggy, DIRECT)


@each(r"python(\d\.\d{1,2})/(?:site|dist)-packages")
def _python_from_paths(found: Evidence, version: str) -> None:
    """Tracebacks name the interpreter in their paths: ``lib/python3.9/site-packages``."""
    found.runtime("python", version, INFERRED)


@each(r"\b(?:openjdk|java) version \"([^\"]+)\"")
def _java_version(found: Evidence, version: str) -> None:
    """``java -version``: ``openjdk version "17.0.15" 2025-04-15``."""
    found.runtime("java", version, DIRECT)


@each(r"^(?:openjdk|java) (\d+(?:\.\d+)*(?:_\d+)?)\b")
def _java_dash_dash_version(found: Evidence, version: str) -> None:
    """``java --version``: ``openjdk 17.0.15 2025-04-15``."""
    found.runtime("java", version, DIRECT)


@each(r"^Java version: ([\w.+-]+)|^JVM:[ \t]+([\w.+-]+)")
def _java_from_build_tool(found: Evidence, maven: str | None, gradle: str | None) -> None:
    """``mvn -v`` and ``gradle -v`` name the JVM they run on."""
    found.runtime("java", maven or gradle or "", SECONDARY)


@each(r"\bNode\.js (v?\d+\.\d+\.\d+)|^node (v\d+\.\d+\.\d+)")
def _node_banner(found: Evidence, banner: str | None, line: str | None) -> None:
    """``Welcome to Node.js v20.11.1.`` and ``node v20.11.1``."""
    found.runtime("node", (banner or line or "").lstrip("v"), DIRECT)


@each(r"\bgo version go(\d+\.\d+(?:\.\d+)?)(?:[ \t]+(\w+)/(\w+))?")
def _go_version(found: Evidence, version: str, os: str | None, arch: str | None) -> None:
    """``go version go1.22.1 linux/amd64``."""
    found.runtime("go", version, DIRECT)
    found.fact("os", os_name(os) if os else None, INFERRED)
    found.fact("arch", arch_name(arch) if arch else None, SECONDARY)


@each(r"\brustc (\d+\.\d+\.\d+)")
def _rust_version(found: Evidence, version: str) -> None:
    """``rustc 1.76.0 (07dca489a 2024-02-04)``."""
    found.runtime("rust", version, DIRECT)


@each(r"^ruby (\d+\.\d+\.\d+)(?:p\d+)? ")
def _ruby_version(found: Evidence, version: str) -> None:
    """``ruby 3.2.2 (2023-03-30 revision e51014f9c0) [x86_64-linux]``."""
    found.runtime("ruby", version, DIRECT)


@each(
    r"^FROM[ \t]+(?:\S+/)?(python|node|openjdk|eclipse-temurin|amazoncorretto|golang|rust|ruby)"
    r":(\d+(?:\.\d+)*)"
)
def _dockerfile_base(found: Evidence, image: str, version: str) -> None:
    """A Dockerfile's base image: ``FROM python:3.11-slim``."""
    found.runtime(image, version, INFERRED)


_NODE_COMMAND = re.compile(r"\bnode[ \t]+(?:-v|--version)\b")
_BARE_VERSION = re.compile(r"^v(\d+\.\d+\.\d+)[ \t]*$", re.MULTILINE)


def node_version(texts: list[str], found: Evidence) -> None:
    """``node -v`` prints a bare ``v20.11.1``: trusted only next to that command."""
    if any(_NODE_COMMAND.search(text) for text in texts):
        for text in texts:
            for match in _BARE_VERSION.finditer(text):
                found.runtime("node", match.group(1), DIRECT)


RUNTIME_PARSERS: tuple[Parser, ...] = (
    _python_version, _pytest_header, _python_from_paths, _java_version, _java_dash_dash_version,
    _java_from_build_tool, _node_banner, _go_version, _rust_version, _ruby_version,
    _dockerfile_base,
)  # fmt: skip
