"""Every test Neo4j of the machine starts from one AOT cache (tests/jvm_cache.py): recorded
by one server at a time, only by a server the session stops, put in place once whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from jvm_cache import SharedAotNeo4j, shared_cache

from metisgraph.graph.embedded import find_java
from metisgraph.graph.embedded.java import AOT_JAVA, java_major
from metisgraph.graph.settings import EmbeddedNeo4jSettings


@pytest.fixture(scope="module")
def java() -> Path:
    found = find_java()
    if (java_major(found) or 0) < AOT_JAVA:
        pytest.skip(f"an AOT cache needs Java {AOT_JAVA}+")
    return found


def _server(tmp_path: Path, name: str, record: bool = True, **jvm: object) -> SharedAotNeo4j:
    settings = EmbeddedNeo4jSettings(
        home=tmp_path / name, port=1, cache_dir=tmp_path / "machine", aot_cache=False, **jvm
    )
    server = SharedAotNeo4j(settings, record=record)
    _launcher(server.artifacts)
    return server


def _launcher(artifacts: Path) -> None:
    """The compiled launcher the cache is named by (a jar of nothing, here)."""
    artifacts.mkdir(parents=True, exist_ok=True)
    jar = artifacts / "launcher.jar"
    if not jar.exists():  # made once: its time is part of the cache's name
        jar.touch()


def test_one_server_records_the_shared_cache_the_others_then_start_from(
    tmp_path: Path, java: Path
) -> None:
    first, second = _server(tmp_path, "a"), _server(tmp_path, "b")
    (recording,) = first._aot_options(java)
    assert recording.startswith("-XX:AOTCacheOutput=") and recording.endswith(".rec")
    assert second._aot_options(java) == []  # one recorder at a time: this one starts cold
    assert first.aot_cache == second.aot_cache  # one cache for both homes
    assert first.aot_cache.parent == first.artifacts / "aot"  # the machine's, not a home's
    assert not first.aot_cache.is_relative_to(tmp_path / "a")
    assert first._aot_options(java) == [recording]  # restarted after a kill: records again

    Path(recording.split("=", 1)[1]).write_bytes(b"cache")  # what the JVM writes as it exits
    assert first.stop() is False  # (nothing ran) the recording goes into place all the same
    assert first.aot_cache.read_bytes() == b"cache"
    assert list(first.aot_cache.parent.glob("*.rec")) == []
    for server in (second, _server(tmp_path, "c"), _server(tmp_path, "d", record=False)):
        assert server._aot_options(java) == [f"-XX:AOTCache={first.aot_cache}"]


def test_a_kept_server_never_records_and_a_lost_recording_leaves_no_cache(
    tmp_path: Path, java: Path
) -> None:
    kept = _server(tmp_path, "kept", record=False)  # METISGRAPH_TEST_KEEP_NEO4J: never stopped
    assert kept._aot_options(java) == []
    killed = _server(tmp_path, "killed")
    assert killed._aot_options(java)[0].startswith("-XX:AOTCacheOutput=")
    killed.stop()  # SIGKILLed before its exit: no file written
    assert not killed.aot_cache.exists()
    following = _server(tmp_path, "next")  # the lock was let go: the next one records
    assert following._aot_options(java)[0].startswith("-XX:AOTCacheOutput=")
    following.stop()


def test_the_cache_is_named_by_what_the_jvm_checks(tmp_path: Path, java: Path) -> None:
    artifacts = tmp_path / "artifacts"
    _launcher(artifacts)
    one = shared_cache(artifacts, java, ["-Xmx1g", "-XX:TieredStopAtLevel=1"])
    assert one == shared_cache(artifacts, java, ["-Xmx1g", "-XX:TieredStopAtLevel=1"])
    assert one != shared_cache(artifacts, java, ["-Xmx2g", "-XX:TieredStopAtLevel=1"])
    small = _server(tmp_path, "small", heap_max="768m")
    small._aot_options(java)
    big = _server(tmp_path, "big", heap_max="1g")
    big._aot_options(java)
    assert small.aot_cache != big.aot_cache
    small.stop()


def test_a_cache_folder_that_cannot_be_written_means_a_cold_start(
    tmp_path: Path, java: Path
) -> None:
    server = _server(tmp_path, "read-only")
    (server.artifacts / "aot").write_text("a file where the folder would be")
    assert server._aot_options(java) == []  # no recording, and no error: the JVM starts cold
    assert server.stop() is False
