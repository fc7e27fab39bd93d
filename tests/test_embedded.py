"""The embedded Neo4j: started from Neo4j's own artifacts, on loopback, with a password."""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import AuthError

from metisgraph.graph.embedded import VECTOR_SEGMENTS, EmbeddedNeo4j, find_java
from metisgraph.graph.settings import EmbeddedNeo4jSettings, Neo4jSettings

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("NEO4J_URI")), reason="NEO4J_URI is set: nothing embedded is started"
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_java_found_is_recent_enough() -> None:
    java = find_java()
    out = subprocess.run([str(java), "-version"], capture_output=True, text=True).stderr
    assert "version" in out


def test_a_detached_server_keeps_none_of_its_callers_descriptors(tmp_path: Path) -> None:
    """A lock the caller holds through an inherited descriptor (a CPU queue's, taken by
    the shell that started the tests) is not held on by the server it starts."""
    from metisgraph.graph.embedded.process import spawn_detached

    lock = tmp_path / "queue.lock"
    held = os.open(lock, os.O_RDWR | os.O_CREAT)
    os.set_inheritable(held, True)
    fcntl.flock(held, fcntl.LOCK_SH)
    pid = spawn_detached(["/bin/sleep", "30"], dict(os.environ), tmp_path / "sleep.log")
    try:
        os.close(held)
        again = os.open(lock, os.O_RDWR)
        try:
            fcntl.flock(again, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError: still held
        finally:
            os.close(again)
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def test_the_test_server_answers_with_a_password(neo4j_settings: Neo4jSettings) -> None:
    assert neo4j_settings.uri and neo4j_settings.uri.startswith("bolt://127.0.0.1:")
    assert neo4j_settings.password is not None
    good = ("neo4j", neo4j_settings.password.get_secret_value())
    with GraphDatabase.driver(neo4j_settings.uri, auth=good) as driver:
        records = driver.execute_query(
            "CALL dbms.components() YIELD edition RETURN edition"
        ).records
        assert records[0]["edition"] == "community"
    wrong = ("neo4j", "not-the-password")
    with GraphDatabase.driver(neo4j_settings.uri, auth=wrong) as driver, pytest.raises(AuthError):
        driver.verify_connectivity()


@pytest.mark.slow(50)
@pytest.mark.own_server
def test_start_status_stop_lifecycle_and_the_aot_cache_of_the_first_run(tmp_path: Path) -> None:
    """Start, status, stop of the embedded server as the product runs it. Issue 23 (warm
    from the first minute): on Java 25+ that first run records an AOT cache (classes, the
    JIT's method profiles), written when it stops; the next start uses it. One server for
    both: every JVM start is seconds of the suite."""
    from metisgraph.graph.embedded.java import AOT_JAVA, java_major

    java = find_java()
    aot = (java_major(java) or 0) >= AOT_JAVA
    settings = EmbeddedNeo4jSettings(
        home=tmp_path / "neo4j", port=_free_port(), heap="256m", heap_max="512m", pagecache="64m"
    )
    embedded = EmbeddedNeo4j(settings)
    assert not embedded.status().running
    assert not embedded.aot_cache.exists()
    assert embedded.start() is True
    try:
        status = embedded.status()
        assert status.running and status.pid
        assert embedded.start() is False  # already running: reused, not started twice
        mode = stat.S_IMODE(embedded.password_file.stat().st_mode)
        assert mode == 0o600
        conf = (settings.home / "neo4j.conf").read_text()
        assert f"server.bolt.listen_address=127.0.0.1:{settings.port}" in conf
        assert "db.logs.query.parameter_logging_enabled=false" in conf
        # the vector indexes' segment settings, accepted by this version (it started)
        assert all(f"{k}={v}\n" in conf for k, v in VECTOR_SEGMENTS.items())
        # Bolt listens on loopback only.
        with socket.socket() as sock:
            sock.settimeout(1)
            assert sock.connect_ex(("127.0.0.1", settings.port)) == 0
    finally:
        assert embedded.stop() is True
    assert not embedded.status().running
    assert "metisgraph-neo4j: stopping" in embedded.log_file.read_text()
    off = EmbeddedNeo4j(settings.model_copy(update={"aot_cache": False}))
    assert off._aot_options(java) == []
    if not aot:
        pytest.skip(f"Java {java_major(java)}: no AOT cache before Java {AOT_JAVA}")

    assert embedded.aot_cache.exists() and embedded.aot_cache.stat().st_size > 1_000_000
    offset = embedded.log_file.stat().st_size
    embedded.start()
    try:
        pid = embedded.status().pid
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        assert f"-XX:AOTCache={embedded.aot_cache}".encode() in cmdline
        # Issue 30: the password the first start set is not set again (its Cypher statement
        # was ~4 s of a restart), and it still opens the door.
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        assert b"METISGRAPH_NEO4J_PASSWORD=" in environ
        with GraphDatabase.driver(embedded.uri, auth=("neo4j", embedded.password())) as driver:
            driver.verify_connectivity()
    finally:
        embedded.stop()
    with embedded.log_file.open("rb") as log:
        log.seek(offset)
        assert b"[error][aot]" not in log.read().replace(b" ", b"")  # the cache was taken


def test_the_password_is_set_once_per_password_and_store(tmp_path: Path) -> None:
    """Issue 30: a restart skips setting the password the store holds already; a new
    password file, or a store made anew (another system database folder), sets it again."""
    embedded = EmbeddedNeo4j(EmbeddedNeo4jSettings(home=tmp_path / "neo4j"))
    password = embedded.password()
    assert embedded._password_to_set() == password  # a first start
    system = embedded.home / "data" / "databases" / "system"
    system.mkdir(parents=True)
    digest = embedded._password_digest(password)
    assert digest is not None and password not in digest
    embedded._password_mark.write_text(digest + "\n")  # what a start that set it writes
    assert embedded._password_to_set() == ""
    embedded.password_file.unlink()  # a new password: set again
    assert embedded._password_to_set() == embedded.password() != password
    embedded._password_mark.write_text(f"{embedded._password_digest(embedded.password())}\n")
    assert embedded._password_to_set() == ""
    system.rename(system.with_name("old"))  # the store made anew
    system.mkdir()
    assert embedded._password_to_set() == embedded.password()


@pytest.mark.slow
def test_cli_reports_status(neo4j_settings: Neo4jSettings, tmp_path: Path) -> None:
    env: dict[str, Any] = {
        **os.environ,
        "METISGRAPH_NEO4J_HOME": str(tmp_path / "none"),
        "METISGRAPH_NEO4J_PORT": str(_free_port()),
    }
    cli = str(Path(sys.executable).parent / "metisgraph")
    result = subprocess.run(
        [cli, "neo4j", "status", "--json"], capture_output=True, text=True, env=env
    )
    assert result.returncode == 1  # not running there
    assert '"running": false' in result.stdout


def test_config_lines_are_added_after_ours_and_replace_them(tmp_path: Path) -> None:
    """METISGRAPH_NEO4J_CONFIG: more neo4j.conf lines; one of ours named there is replaced,
    not written twice (Neo4j would refuse a setting given twice)."""
    merge = "internal.dbms.index.vector.post_population_compaction"
    settings = EmbeddedNeo4jSettings(
        home=tmp_path / "neo4j", config={merge: "PARTIAL", "db.transaction.timeout": "30s"}
    )
    settings.home.mkdir()
    EmbeddedNeo4j(settings).write_config()
    lines = (settings.home / "neo4j.conf").read_text().splitlines()
    assert [line for line in lines if line.startswith(merge)] == [f"{merge}=PARTIAL"]
    assert "db.transaction.timeout=30s" in lines
    assert f"{merge}={VECTOR_SEGMENTS[merge]}" not in lines
