"""The Java that runs the embedded Neo4j, and the options it gets."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from metisgraph.graph.embedded.errors import EmbeddedNeo4jError

__all__ = ["AOT_JAVA", "JVM_OPTIONS", "MIN_JAVA", "find_java", "java_major"]

MIN_JAVA = 21
AOT_JAVA = 25  # an ahead-of-time cache with the JIT's method profiles (JEP 514, 515)
# What Neo4j's own start script passes, less what only a packaged server needs. The vector
# module lets Lucene compute vector distances with SIMD: without it every vector index
# insert and search runs the scalar fallback (Lucene warns "Java vector incubator module
# is not readable" in logs/launcher.log).
JVM_OPTIONS = (
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-XX:+ExitOnOutOfMemoryError",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dlog4j2.disable.jmx=true",
    "-Djava.awt.headless=true",
    "--add-modules=jdk.incubator.vector",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
)


def java_major(java: Path) -> int | None:
    try:
        out = subprocess.run(
            [str(java), "-version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


def find_java(java_home: Path | None = None) -> Path:
    """The newest Java >= 21 we can find: the setting, JAVA_HOME, /usr/lib/jvm, PATH."""
    candidates: list[Path] = []
    if java_home:
        candidates.append(java_home / "bin" / "java")
    if os.environ.get("JAVA_HOME"):
        candidates.append(Path(os.environ["JAVA_HOME"]) / "bin" / "java")
    jvm = Path("/usr/lib/jvm")
    if jvm.is_dir():
        candidates.extend(sorted(jvm.glob("*/bin/java"), reverse=True))
    on_path = shutil.which("java")
    if on_path:
        candidates.append(Path(on_path))
    best: tuple[int, Path] | None = None
    for java in candidates:
        if not java.is_file():
            continue
        major = java_major(java)
        if major is not None and major >= MIN_JAVA and (best is None or major > best[0]):
            best = (major, java)
        if java_home and best and java.is_relative_to(java_home):
            return best[1]  # an explicit setting wins when it is recent enough
    if best is None:
        looked = ", ".join(str(c) for c in candidates) or "nowhere"
        raise EmbeddedNeo4jError(
            f"Neo4j needs Java {MIN_JAVA} or newer; none found (looked at {looked}). "
            "Set METISGRAPH_NEO4J_JAVA_HOME."
        )
    return best[1]
