"""The embedded Neo4j as one object: prepare, start, stop and inspect it."""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from metisgraph.graph.embedded.artifacts import (
    LAUNCHER,
    file_lock,
    launcher_jar,
    prepare_artifacts,
)
from metisgraph.graph.embedded.errors import EmbeddedNeo4jError
from metisgraph.graph.embedded.java import AOT_JAVA, JVM_OPTIONS, find_java, java_major
from metisgraph.graph.embedded.process import exit_code, pid_alive, port_open, spawn_detached
from metisgraph.graph.settings import EmbeddedNeo4jSettings

__all__ = ["VECTOR_SEGMENTS", "EmbeddedNeo4j", "EmbeddedStatus"]

# How Lucene keeps the vector indexes in segments (Neo4j's internal settings; a version that
# does not know one refuses to start, so a change of version is caught by every test). A
# vector search walks each segment's graph in turn: with Neo4j's defaults episode_vectors
# held 17 segments at 10k episodes and 56 at 1M, and one search of it at 10k took p50 4.5 ms
# against 2.6 ms once it was one segment (docs/benchmarks.md). So a populated index is merged
# into one segment (FULL: forceMerge(1) when population ends), and population flushes 64 MiB
# at a time (the default scales with RAM: 1 MiB here, hundreds of tiny segments merged again
# and again). The merge runs inside the index flip and writes wait for it (minutes at 1M:
# docs/scaling.md). Writes keep Neo4j's merge factor: a merge of a written segment was not
# measured here, and Neo4j may run it on the committing thread.
VECTOR_SEGMENTS = {
    "internal.dbms.index.vector.post_population_compaction": "FULL",
    "internal.dbms.index.vector.population_ram_buffer_size": "64",
}


@dataclass(frozen=True)
class EmbeddedStatus:
    running: bool
    pid: int | None
    uri: str
    version: str
    home: Path
    log: Path


class EmbeddedNeo4j:
    """Prepare, start, stop and inspect the embedded Neo4j. The constructor does no I/O."""

    def __init__(self, settings: EmbeddedNeo4jSettings) -> None:
        self.settings = settings
        self.home = settings.home.expanduser().resolve()
        self.artifacts = settings.cache_dir.expanduser().resolve() / settings.version

    # -- paths -----------------------------------------------------------------
    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.settings.port}"

    @property
    def pid_file(self) -> Path:
        return self.home / "metisgraph-neo4j.pid"

    @property
    def password_file(self) -> Path:
        return self.home / "password"

    @property
    def log_file(self) -> Path:
        return self.home / "logs" / "launcher.log"

    # -- artifacts -------------------------------------------------------------
    def prepare(self) -> Path:
        """Fetch Neo4j's jars with Maven and compile the launcher, once per version."""
        return prepare_artifacts(self.artifacts, self.settings.version, self.settings.java_home)

    # -- lifecycle -------------------------------------------------------------
    def password(self) -> str:
        """The password of the embedded server's neo4j user, created on first use."""
        if not self.password_file.exists():
            self.home.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.password_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_urlsafe(24))
        return self.password_file.read_text().strip()

    def _pid(self) -> int | None:
        try:
            pid = int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None
        return pid if pid_alive(pid) else None

    def status(self) -> EmbeddedStatus:
        pid = self._pid()
        running = pid is not None and port_open(self.settings.port)
        return EmbeddedStatus(
            running=running,
            pid=pid,
            uri=self.uri,
            version=self.settings.version,
            home=self.home,
            log=self.log_file,
        )

    def write_config(self) -> None:
        """HOME/neo4j.conf from the settings (the launcher and the import tool read it)."""
        s = self.settings
        lines = {
            "server.bolt.enabled": "true",
            "server.bolt.listen_address": f"127.0.0.1:{s.port}",
            "server.bolt.advertised_address": f"127.0.0.1:{s.port}",
            "server.http.enabled": "false",
            "server.https.enabled": "false",
            "dbms.security.auth_enabled": "true",
            "server.memory.pagecache.size": s.pagecache,
            "db.tx_log.rotation.retention_policy": "2 files",
            "db.logs.query.parameter_logging_enabled": "false",
            "dbms.usage_report.enabled": "false",
            # Bolt waits this long twice for a quiet network after the databases have
            # stopped (default 5s): nothing is left to answer, so a stop took 10s more.
            "internal.dbms.bolt.netty_server_shutdown_quiet_period_duration": "0s",
            "server.directories.logs": str(self.home / "logs"),
            **VECTOR_SEGMENTS,
            **s.config,
        }
        text = "".join(f"{key}={value}\n" for key, value in lines.items())
        (self.home / "neo4j.conf").write_text(text)

    def start(self) -> bool:
        """Start the DBMS unless it is already running. Returns True if this call started it."""
        with file_lock(self.home / ".lifecycle.lock"):
            if self.status().running:
                return False
            if port_open(self.settings.port):
                raise EmbeddedNeo4jError(
                    f"port {self.settings.port} is taken by another process; "
                    "set METISGRAPH_NEO4J_PORT or NEO4J_URI"
                )
            artifacts = self.prepare()
            java = find_java(self.settings.java_home)
            self.home.mkdir(parents=True, exist_ok=True)
            self.log_file.parent.mkdir(parents=True, exist_ok=True)
            self.write_config()
            classpath = f"{launcher_jar(artifacts)}:{artifacts / 'lib' / '*'}"
            cmd = [
                str(java),
                f"-Xms{self.settings.heap}",
                f"-Xmx{self.settings.heap_max}",
                *JVM_OPTIONS,
                *self.settings.jvm_options,
                *self._aot_options(java),
                "-cp",
                classpath,
                LAUNCHER,
                str(self.home),
            ]
            setting = self._password_to_set()
            env = {**os.environ, "METISGRAPH_NEO4J_PASSWORD": setting}
            offset = self.log_file.stat().st_size if self.log_file.exists() else 0
            pid = spawn_detached(cmd, env, self.log_file)
            self.pid_file.write_text(f"{pid}\n")
            self._wait_ready(pid, offset)
            digest = self._password_digest(setting) if setting else None
            if digest:  # set, and Neo4j ready with it: later starts need not set it again
                self._password_mark.write_text(digest + "\n")
            return True

    # -- the password, set once per store -----------------------------------------
    @property
    def _password_mark(self) -> Path:
        return self.home / "data" / "metisgraph-password-set"

    def _password_digest(self, password: str) -> str | None:
        """The password and the system database it was set in (its folder's identity: a
        store made anew is a new folder), digested; None before there is one."""
        try:
            folder = (self.home / "data" / "databases" / "system").stat()
        except FileNotFoundError:
            return None
        seed = f"{folder.st_dev}:{folder.st_ino}:{password}"
        return hashlib.sha256(seed.encode()).hexdigest()

    def _password_to_set(self) -> str:
        """The password the launcher is to set, or "" when this store holds it already.

        Setting it is the launcher's first Cypher statement, run before Bolt is announced
        ready: ~4 s of every start on our machine, most of a restart after the JVM's own
        start (issue 30). Set on the first start, again when the password file or the store
        changed (the mark written after that start says which password in which store).
        """
        password = self.password()
        try:
            mark = self._password_mark.read_text().strip()
        except FileNotFoundError:
            return password
        return "" if mark == self._password_digest(password) else password

    @property
    def aot_cache(self) -> Path:
        """The JVM's ahead-of-time cache for this Neo4j version (Java 25+)."""
        return self.home / "aot" / f"neo4j-{self.settings.version}.aot"

    def _aot_options(self, java: Path) -> list[str]:
        """Start from the AOT cache when there is one (classes loaded and linked, the JIT's
        method profiles: the read path compiles early); else record one, written when this
        run stops. A cache the JVM cannot use (another JDK build) is ignored with a warning
        in the launcher's log, and made again by deleting it."""
        major = java_major(java)
        if not self.settings.aot_cache or major is None or major < AOT_JAVA:
            return []
        if self.aot_cache.exists():
            return [f"-XX:AOTCache={self.aot_cache}"]
        self.aot_cache.parent.mkdir(parents=True, exist_ok=True)
        return [f"-XX:AOTCacheOutput={self.aot_cache}"]

    def _wait_ready(self, pid: int, offset: int) -> None:
        deadline = time.monotonic() + self.settings.start_timeout
        while time.monotonic() < deadline:
            code = exit_code(pid)
            if code is not None:
                self.pid_file.unlink(missing_ok=True)
                raise EmbeddedNeo4jError(
                    f"Neo4j exited with code {code}; log {self.log_file}:\n" + self._log_tail()
                )
            if port_open(self.settings.port) and self._log_says_ready(offset):
                return
            time.sleep(0.2)
        self._stop()  # the lifecycle lock is held already: stop() would wait for it forever
        raise EmbeddedNeo4jError(
            f"Neo4j did not answer within {self.settings.start_timeout:.0f}s; "
            f"log {self.log_file}:\n{self._log_tail()}"
        )

    def _log_says_ready(self, offset: int) -> bool:
        # The launcher prints this after the password is set, so Bolt logins work.
        try:
            with self.log_file.open("rb") as log:
                log.seek(offset)
                return b"metisgraph-neo4j: ready" in log.read()
        except FileNotFoundError:
            return False

    def _log_tail(self, size: int = 3000) -> str:
        try:
            data = self.log_file.read_bytes()
        except FileNotFoundError:
            return ""
        return data[-size:].decode(errors="replace")

    def stop(self, timeout: float = 90.0) -> bool:
        """Stop the DBMS cleanly (SIGTERM runs Neo4j's shutdown). Returns True if it was running."""
        with file_lock(self.home / ".lifecycle.lock"):
            return self._stop(timeout)

    def _stop(self, timeout: float = 90.0) -> bool:
        """stop() with the lifecycle lock held by the caller."""
        pid = self._pid()
        if pid is None:
            self.pid_file.unlink(missing_ok=True)
            return False
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and pid_alive(pid):
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
            time.sleep(0.2)
        if pid_alive(pid):
            os.kill(pid, signal.SIGKILL)
        # When this process started it, reap it: an exited child left unreaped is a zombie.
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        self.pid_file.unlink(missing_ok=True)
        return True
