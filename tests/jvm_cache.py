"""One AOT cache for every test Neo4j of this machine (tests/conftest.py's servers).

A test server's JVM starts from a new home each session (the store is thrown away), so the
product's cache (HOME/aot, recorded by a home's first run) never served it: every worker
and every scratch server started cold. Side by side on this machine (JDK 25, fresh homes,
load ~8.7): 13.6 / 16.1 / 17.5 s cold, 8.4 / 10.0 / 8.8 s from the cache. The cache lives
with Neo4j's jars under the machine's cache folder (~/.cache/metisgraph/neo4j/VERSION), named
by what makes a JVM accept it (the java binary, the JVM options, the launcher): a server
with other options or another JDK records its own.

Recording one costs its run ~15 s at the start and ~30 s at the stop, so ONE server records
at a time on the machine (an exclusive lock held while its JVM runs and writes), and only
a server this session stops (not one kept running, METISGRAPH_TEST_KEEP_NEO4J): the JVM
writes to a file of its own, renamed into place once whole. The others start cold meanwhile.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from pathlib import Path
from typing import IO

from metisgraph.graph.embedded import EmbeddedNeo4j
from metisgraph.graph.embedded.artifacts import launcher_jar
from metisgraph.graph.embedded.java import AOT_JAVA, JVM_OPTIONS, java_major
from metisgraph.graph.settings import EmbeddedNeo4jSettings


class SharedAotNeo4j(EmbeddedNeo4j):
    """A test Neo4j that starts from the machine's shared AOT cache (records it when absent,
    one recorder at a time, when ``record``)."""

    def __init__(self, settings: EmbeddedNeo4jSettings, record: bool = True) -> None:
        super().__init__(settings.model_copy(update={"aot_cache": True}))
        self.record = record
        self._recording: Path | None = None
        self._lock: IO[str] | None = None
        self._cache: Path | None = None

    @property
    def aot_cache(self) -> Path:
        if self._cache is None:
            raise RuntimeError("the cache is named when the server starts (its java is known)")
        return self._cache

    def _aot_options(self, java: Path) -> list[str]:
        major = java_major(java)
        if major is None or major < AOT_JAVA:
            return []
        self._cache = shared_cache(self.artifacts, java, self._jvm_flags())
        if self._cache.exists():
            return [f"-XX:AOTCache={self._cache}"]
        if self._recording is None:  # (a restart after a kill records again, same file)
            if not self.record or not self._take_lock():
                return []  # another server records it: this one starts cold
            for stray in self._cache.parent.glob("tests-*.rec*"):  # a recorder that died
                stray.unlink(missing_ok=True)
            self._recording = self._cache.with_name(f"{self._cache.stem}.{os.getpid()}.rec")
        return [f"-XX:AOTCacheOutput={self._recording}"]

    def _jvm_flags(self) -> list[str]:
        s = self.settings
        return [f"-Xms{s.heap}", f"-Xmx{s.heap_max}", *JVM_OPTIONS, *s.jvm_options]

    def _take_lock(self) -> bool:
        """Whether this server is the recorder: False when another one is, or when the
        machine's cache folder cannot be written (a read-only cache: start cold)."""
        assert self._cache is not None
        try:
            self._cache.parent.mkdir(parents=True, exist_ok=True)
            handle = (self._cache.parent / "tests.lock").open("a")
        except OSError:
            return False
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # BlockingIOError: another server records
            handle.close()
            return False
        self._lock = handle
        return True

    def stop(self, timeout: float = 90.0) -> bool:
        """Stop; a cache this server recorded (written as its JVM exits) goes into place."""
        try:
            return super().stop(timeout)
        finally:
            self._finish_recording()

    def _finish_recording(self) -> None:
        recording, self._recording = self._recording, None
        if recording is not None and self._cache is not None:
            with contextlib.suppress(OSError):  # no cache is a cold start, never a failure
                if recording.exists() and recording.stat().st_size > 0:
                    os.replace(recording, self._cache)
                recording.unlink(missing_ok=True)
        if self._lock is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None


def shared_cache(artifacts: Path, java: Path, flags: list[str]) -> Path:
    """The cache of test JVMs started by ``java`` with ``flags`` on these artifacts."""
    real = java.resolve()
    jar = launcher_jar(artifacts)
    identity = [str(real), str(real.stat().st_mtime_ns), str(jar.stat().st_mtime_ns), *flags]
    digest = hashlib.sha256("\n".join(identity).encode()).hexdigest()[:16]
    return artifacts / "aot" / f"tests-{digest}.aot"
