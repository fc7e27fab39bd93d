"""An embedded Neo4j Community DBMS, started from Neo4j's own Java artifacts.

Used when no ``NEO4J_URI`` is configured. Maven resolves ``org.neo4j:neo4j`` and
``org.neo4j:neo4j-bolt`` into a cache once; a small Java launcher (shipped with
this package) starts the DBMS in-process with the Bolt connector on 127.0.0.1.
The process is detached and tracked by a pid file in the data directory, so
``metisgraph neo4j start|stop|status`` work across commands.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from metisgraph.graph.settings import EmbeddedNeo4jSettings

__all__ = [
    "MIN_JAVA",
    "EmbeddedNeo4j",
    "EmbeddedNeo4jError",
    "EmbeddedNeo4jSettings",
    "EmbeddedStatus",
    "find_java",
]

MIN_JAVA = 21
_LAUNCHER = "Launcher"
# What Neo4j's own start script passes, less what only a packaged server needs. The vector
# module lets Lucene compute vector distances with SIMD: without it every vector index
# insert and search runs the scalar fallback (Lucene warns "Java vector incubator module
# is not readable" in logs/launcher.log).
_JVM_OPTIONS = (
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


class EmbeddedNeo4jError(RuntimeError):
    """The embedded Neo4j could not be prepared, started or stopped."""


@dataclass(frozen=True)
class EmbeddedStatus:
    running: bool
    pid: int | None
    uri: str
    version: str
    home: Path
    log: Path


def _java_major(java: Path) -> int | None:
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
        major = _java_major(java)
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


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    cmdline = Path(f"/proc/{pid}/cmdline")
    if cmdline.exists():
        # Guard against a recycled pid: it must still be our launcher.
        return _LAUNCHER.encode() in cmdline.read_bytes()
    return True


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
        stamp = self.artifacts / "ready"
        if stamp.exists():
            return self.artifacts
        java = find_java(self.settings.java_home)
        with _file_lock(self.artifacts.parent / f".{self.settings.version}.lock"):
            if stamp.exists():
                return self.artifacts
            self._fetch_jars(java)
            self._compile_launcher(java)
            stamp.write_text(self.settings.version + "\n")
        return self.artifacts

    def _fetch_jars(self, java: Path) -> None:
        mvn = shutil.which("mvn")
        if mvn is None:
            raise EmbeddedNeo4jError("Maven (mvn) is needed once to fetch Neo4j's artifacts")
        self.artifacts.mkdir(parents=True, exist_ok=True)
        pom = self.artifacts / "pom.xml"
        pom.write_bytes(resources.files(__package__).joinpath("pom.xml").read_bytes())
        lib = self.artifacts / "lib"
        shutil.rmtree(lib, ignore_errors=True)
        env = {**os.environ, "JAVA_HOME": str(java.parent.parent)}
        cmd = [
            mvn,
            "-B",
            "-q",
            "-f",
            str(pom),
            "dependency:copy-dependencies",
            f"-Dneo4j.version={self.settings.version}",
            f"-DoutputDirectory={lib}",
            "-DincludeScope=runtime",
        ]
        result = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        if result.returncode != 0 or not any(lib.glob("neo4j-*.jar")):
            tail = (result.stdout + result.stderr)[-3000:]
            raise EmbeddedNeo4jError(
                f"Maven could not fetch org.neo4j:neo4j:{self.settings.version}:\n{tail}"
            )

    def _compile_launcher(self, java: Path) -> None:
        javac = java.parent / "javac"
        source_dir = self.artifacts / "src"
        classes = self.artifacts / "classes"
        source_dir.mkdir(parents=True, exist_ok=True)
        source = source_dir / f"{_LAUNCHER}.java"
        source.write_bytes(resources.files(__package__).joinpath(f"{_LAUNCHER}.java").read_bytes())
        cmd = [
            str(javac),
            "-cp",
            str(self.artifacts / "lib" / "*"),
            "-d",
            str(classes),
            str(source),
        ]
        result = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise EmbeddedNeo4jError(f"could not compile the launcher:\n{result.stderr[-3000:]}")

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
        return pid if _pid_alive(pid) else None

    def status(self) -> EmbeddedStatus:
        pid = self._pid()
        running = pid is not None and _port_open(self.settings.port)
        return EmbeddedStatus(
            running=running,
            pid=pid,
            uri=self.uri,
            version=self.settings.version,
            home=self.home,
            log=self.log_file,
        )

    def _write_config(self) -> None:
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
            "server.directories.logs": str(self.home / "logs"),
        }
        text = "".join(f"{key}={value}\n" for key, value in lines.items())
        (self.home / "neo4j.conf").write_text(text)

    def start(self) -> bool:
        """Start the DBMS unless it is already running. Returns True if this call started it."""
        with _file_lock(self.home / ".lifecycle.lock"):
            if self.status().running:
                return False
            if _port_open(self.settings.port):
                raise EmbeddedNeo4jError(
                    f"port {self.settings.port} is taken by another process; "
                    "set METISGRAPH_NEO4J_PORT or NEO4J_URI"
                )
            artifacts = self.prepare()
            java = find_java(self.settings.java_home)
            self.home.mkdir(parents=True, exist_ok=True)
            self.log_file.parent.mkdir(parents=True, exist_ok=True)
            self._write_config()
            classpath = f"{artifacts / 'classes'}:{artifacts / 'lib' / '*'}"
            cmd = [
                str(java),
                f"-Xms{self.settings.heap}",
                f"-Xmx{self.settings.heap_max}",
                *_JVM_OPTIONS,
                "-cp",
                classpath,
                _LAUNCHER,
                str(self.home),
            ]
            env = {**os.environ, "METISGRAPH_NEO4J_PASSWORD": self.password()}
            offset = self.log_file.stat().st_size if self.log_file.exists() else 0
            pid = self._spawn(cmd, env)
            self.pid_file.write_text(f"{pid}\n")
            self._wait_ready(pid, offset)
            return True

    def _spawn(self, cmd: list[str], env: dict[str, str]) -> int:
        # Detached (own session), output to the log: it outlives this command on purpose.
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (
                os.POSIX_SPAWN_OPEN,
                1,
                str(self.log_file),
                os.O_WRONLY | os.O_CREAT | os.O_APPEND,
                0o600,
            ),
            (os.POSIX_SPAWN_DUP2, 1, 2),
        ]
        return os.posix_spawn(cmd[0], cmd, env, file_actions=actions, setsid=True)

    def _exit_code(self, pid: int) -> int | None:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return None if _pid_alive(pid) else -1
        return os.waitstatus_to_exitcode(status) if done else None

    def _wait_ready(self, pid: int, offset: int) -> None:
        deadline = time.monotonic() + self.settings.start_timeout
        while time.monotonic() < deadline:
            code = self._exit_code(pid)
            if code is not None:
                self.pid_file.unlink(missing_ok=True)
                raise EmbeddedNeo4jError(
                    f"Neo4j exited with code {code}; log {self.log_file}:\n" + self._log_tail()
                )
            if _port_open(self.settings.port) and self._log_says_ready(offset):
                return
            time.sleep(0.2)
        self.stop()
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
        with _file_lock(self.home / ".lifecycle.lock"):
            pid = self._pid()
            if pid is None:
                self.pid_file.unlink(missing_ok=True)
                return False
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and _pid_alive(pid):
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)
                time.sleep(0.2)
            if _pid_alive(pid):
                os.kill(pid, signal.SIGKILL)
            # When this process started it, reap it: an exited child left unreaped is a zombie.
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
            self.pid_file.unlink(missing_ok=True)
            return True
