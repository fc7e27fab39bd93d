"""Neo4j's Java artifacts, fetched with Maven, and the launcher compiled against them."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import zipfile
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

from metisgraph.graph.embedded.errors import EmbeddedNeo4jError
from metisgraph.graph.embedded.java import find_java

__all__ = ["LAUNCHER", "file_lock", "launcher_jar", "prepare_artifacts"]

LAUNCHER = "Launcher"


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def prepare_artifacts(artifacts: Path, version: str, java_home: Path | None) -> Path:
    """Fetch Neo4j's jars into ``artifacts`` and compile the launcher, once per version."""
    stamp = artifacts / "ready"
    if stamp.exists():
        return artifacts
    java = find_java(java_home)
    with file_lock(artifacts.parent / f".{version}.lock"):
        if stamp.exists():
            return artifacts
        _fetch_jars(artifacts, version, java)
        _compile_launcher(artifacts, java)
        stamp.write_text(version + "\n")
    return artifacts


def _fetch_jars(artifacts: Path, version: str, java: Path) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise EmbeddedNeo4jError("Maven (mvn) is needed once to fetch Neo4j's artifacts")
    artifacts.mkdir(parents=True, exist_ok=True)
    pom = artifacts / "pom.xml"
    pom.write_bytes(resources.files(__package__).joinpath("pom.xml").read_bytes())
    lib = artifacts / "lib"
    shutil.rmtree(lib, ignore_errors=True)
    env = {**os.environ, "JAVA_HOME": str(java.parent.parent)}
    cmd = [
        mvn,
        "-B",
        "-q",
        "-f",
        str(pom),
        "dependency:copy-dependencies",
        f"-Dneo4j.version={version}",
        f"-DoutputDirectory={lib}",
        "-DincludeScope=runtime",
    ]
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if result.returncode != 0 or not any(lib.glob("neo4j-*.jar")):
        tail = (result.stdout + result.stderr)[-3000:]
        raise EmbeddedNeo4jError(f"Maven could not fetch org.neo4j:neo4j:{version}:\n{tail}")


def _compile_launcher(artifacts: Path, java: Path) -> None:
    javac = java.parent / "javac"
    source_dir = artifacts / "src"
    classes = artifacts / "classes"
    source_dir.mkdir(parents=True, exist_ok=True)
    source = source_dir / f"{LAUNCHER}.java"
    source.write_bytes(resources.files(__package__).joinpath(f"{LAUNCHER}.java").read_bytes())
    cmd = [str(javac), "-cp", str(artifacts / "lib" / "*"), "-d", str(classes), str(source)]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise EmbeddedNeo4jError(f"could not compile the launcher:\n{result.stderr[-3000:]}")


def launcher_jar(artifacts: Path) -> Path:
    """The compiled launcher as a jar (made once): a JDK 25 AOT cache archives classes from
    jars only, and refuses a class path that holds a non-empty directory."""
    jar = artifacts / "launcher.jar"
    if jar.exists():
        return jar
    classes = artifacts / "classes"
    partial = jar.with_suffix(f".{os.getpid()}.tmp")
    with zipfile.ZipFile(partial, "w") as out:
        out.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
        for path in sorted(classes.rglob("*.class")):
            out.write(path, path.relative_to(classes).as_posix())
    partial.replace(jar)
    return jar
