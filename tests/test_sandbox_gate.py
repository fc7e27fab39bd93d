"""The verification gate with the real sandbox and the real Neo4j.

Each containment test runs hostile tests of a snippet and then looks at the host: a
listener that nothing reached, a file that nothing changed, no process left behind. Every
run has a uid of its own, so "no process left" means no process of that run.
"""

from __future__ import annotations

import json
import os
import random
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from metisgraph.graph.store import GraphStore
from metisgraph.ingest.adapters.base import Parsed, SourceRef, validate_record
from metisgraph.ingest.pipeline import Ingestor
from metisgraph.ingest.records import EnvironmentInput
from metisgraph.ingest.sandbox import (
    Sandbox,
    SandboxSettings,
    Verification,
    verify_snippet,
)
from metisgraph.ingest.sandbox.support import probe

pytestmark = [pytest.mark.anyio, pytest.mark.sandbox]

ADD = "def add(a, b):\n    return a + b\n"
FIRST_UNOWNED_UID = 0x70000000


@pytest.fixture
def settings() -> SandboxSettings:
    """Sandbox settings with a uid no other run shares; skip where the host cannot confine."""
    uid = FIRST_UNOWNED_UID + 1 + random.randrange(1_000_000)
    chosen = SandboxSettings(uid=uid, gid=uid, timeout_s=10, processes=16)
    support = probe(chosen)
    if not support.ready:
        pytest.skip(support.reason())
    return chosen


async def _snippet(
    store: GraphStore, embedder: Any, project: str, code: str, tests: list[str]
) -> str:
    raw = {"record_type": "snippet", "project": project, "code": code, "tests": tests,
           "language": "python"}  # fmt: skip
    item = validate_record(raw, SourceRef("test", 1))
    assert isinstance(item, Parsed), item
    summary = await Ingestor(store, embedder).ingest([item], keep_results=True)
    (done,) = [r for r in summary.results if r.kind == "snippet"]
    assert done.id is not None, done
    return done.id


async def _verify(
    store: GraphStore, settings: SandboxSettings, project: str, snippet_id: str, **more: Any
) -> Verification:
    return await verify_snippet(
        store, Sandbox(settings), project=project, snippet_id=snippet_id, **more
    )


async def _state(store: GraphStore, project: str, snippet_id: str) -> dict[str, Any]:
    rows = await store.run_text(
        """MATCH (s:Snippet {project: $project, id: $id})
           RETURN s.uses AS uses, s.successes AS successes, s.failures AS failures,
                  s.last_failure AS last_failure,
                  [(s)-[r:VERIFIED_IN]->(v) WHERE r.verified_at IS NOT NULL
                   | {command: r.command, exit_code: r.exit_code, duration_ms: r.duration_ms,
                      output_tail: r.output_tail, verified_at: r.verified_at, os: v.os,
                      arch: v.arch, runtime: v.runtime, runtime_version: v.runtime_version,
                      packages: [(v)-[h:HAS_PACKAGE]->(k) | k.name + '==' + h.version]}]
                  AS verified""",
        {"project": project, "id": snippet_id},
        read=True,
    )
    return rows[0]


def _processes_of(uid: int) -> list[int]:
    """Processes on the host whose real uid is `uid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        uids = next(line for line in status.splitlines() if line.startswith("Uid:"))
        if int(uids.split()[1]) == uid:
            found.append(int(entry.name))
    return found


async def test_a_passing_snippet_is_verified_in_the_callers_environment(
    store: GraphStore, embedder: Any, project: str, settings: SandboxSettings
) -> None:
    snippet_id = await _snippet(store, embedder, project, ADD,
                                ["assert add(2, 3) == 5\nprint('add works')"])  # fmt: skip
    stated = EnvironmentInput(runtime="python", packages={"requests": "2.31.0"})
    verdict = await _verify(store, settings, project, snippet_id, environment=stated)
    assert (verdict.status, verdict.exit_code, verdict.reason) == ("passed", 0, None)
    assert verdict.command == "python3 -B test_1.py"
    assert "add works" in (verdict.output_tail or "")
    state = await _state(store, project, snippet_id)
    assert (state["uses"], state["successes"], state["failures"]) == (1, 1, 0)
    (edge,) = state["verified"]
    assert edge["command"] == "python3 -B test_1.py" and edge["exit_code"] == 0
    assert edge["output_tail"].strip() == "add works"
    assert edge["duration_ms"] >= 0 and edge["verified_at"] is not None
    # The environment is the sandbox's own, read like ingest reads one, with what the caller
    # stated on top: the package only the caller could know.
    assert edge["runtime"] == "python" and edge["runtime_version"].startswith("3.")
    assert edge["os"] and edge["arch"] == verdict.environment.arch  # type: ignore[union-attr]
    assert edge["packages"] == ["requests==2.31.0"]


async def test_a_failing_snippet_counts_against_it(
    store: GraphStore, embedder: Any, project: str, settings: SandboxSettings
) -> None:
    snippet_id = await _snippet(store, embedder, project, ADD, ["assert add(2, 2) == 5"])
    verdict = await _verify(store, settings, project, snippet_id)
    assert (verdict.status, verdict.exit_code) == ("failed", 1)
    assert verdict.reason == "the check exited with 1"
    assert "AssertionError" in (verdict.output_tail or "")
    state = await _state(store, project, snippet_id)
    assert (state["uses"], state["successes"], state["failures"]) == (1, 0, 1)
    assert state["verified"] == []
    last = json.loads(state["last_failure"])
    assert last["exit_code"] == 1 and "AssertionError" in last["output_tail"]
    assert last["command"] == "python3 -B test_1.py" and last["environment"]


async def test_risky_code_runs_only_once_approved(
    store: GraphStore, embedder: Any, project: str, settings: SandboxSettings
) -> None:
    code = "def calculate(expression):\n    return eval(expression)\n"
    snippet_id = await _snippet(store, embedder, project, code,
                                ["assert calculate('6 * 7') == 42"])  # fmt: skip
    verdict = await _verify(store, settings, project, snippet_id)
    assert verdict.status == "refused"
    assert "high risk" in (verdict.reason or "") and "approve" in (verdict.reason or "")
    state = await _state(store, project, snippet_id)
    assert (state["uses"], state["verified"]) == (0, [])  # nothing ran, nothing written
    await store.run("review_memory", project=project, id=snippet_id, status="approved",
                    note=None, reviewer="test")  # fmt: skip
    assert (await _verify(store, settings, project, snippet_id)).status == "passed"


async def test_the_network_is_unreachable(
    store: GraphStore, embedder: Any, project: str, settings: SandboxSettings
) -> None:
    # Addresses go in by the command line (the port is only known once listening).
    test = (
        "import socket, sys\n"
        "try:\n"
        "    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3)\n"
        "    print('connected')\n"
        "except OSError as error:\n"
        "    print('no connection:', error.strerror)\n"
        "    raise SystemExit(1)\n"
    )
    snippet_id = await _snippet(store, embedder, project, ADD, [test])
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        verdict = await _verify(store, settings, project, snippet_id,
                                command=f"python3 -B test_1.py 127.0.0.1 {port}")  # fmt: skip
        listener.settimeout(0.5)
        with pytest.raises(TimeoutError):
            listener.accept()  # nothing reached the host
    assert verdict.status == "failed"
    assert "no connection: Network is unreachable" in (verdict.output_tail or "")


async def test_a_fork_bomb_is_held_by_the_process_limit(
    store: GraphStore, embedder: Any, project: str, settings: SandboxSettings
) -> None:
    test = (
        "import os, time\n"
        "children = 0\n"
        "try:\n"
        "    while True:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(600)\n"
        "            os._exit(0)\n"
        "        children += 1\n"
        "except OSError as error:\n"
        "    print('fork refused after', children, 'children:', error.strerror)\n"
        "    raise SystemExit(1)\n"
    )
    snippet_id = await _snippet(store, embedder, project, ADD, [test])
    started = time.monotonic()
    verdict = await _verify(store, settings, project, snippet_id)
    elapsed = time.monotonic() - started
    assert verdict.status == "failed" and not verdict.timed_out
    tail = verdict.output_tail or ""
    assert "Resource temporarily unavailable" in tail, tail
    children = int(tail.split("fork refused after ")[1].split()[0])
    assert 0 < children < settings.processes
    assert elapsed < settings.timeout_s  # the limit held; the clock did not have to
    assert _processes_of(settings.uid) == []  # the sleeping children died with the run


async def test_a_write_outside_the_work_dir_leaves_the_host_untouched(
    store: GraphStore, embedder: Any, project: str, settings: SandboxSettings, tmp_path: Path
) -> None:
    target = tmp_path / "host-file.txt"
    target.write_text("the host's\n")
    before = target.stat()
    test = (
        "import sys\n"
        "for path in (sys.argv[1], '/usr/lib/metisgraph-escape', '/etc/passwd',\n"
        "             '../../etc/hosts', '/work/inside.txt'):\n"
        "    try:\n"
        "        with open(path, 'a') as out:\n"
        "            out.write('escaped\\n')\n"
        "        print('wrote', path)\n"
        "    except OSError as error:\n"
        "        print('refused', path, error.strerror)\n"
    )
    snippet_id = await _snippet(store, embedder, project, ADD, [test])
    verdict = await _verify(store, settings, project, snippet_id,
                            command=f"python3 -B test_1.py {target}")  # fmt: skip
    tail = verdict.output_tail or ""
    assert f"refused {target} No such file or directory" in tail  # the host's /tmp is not there
    assert "refused /usr/lib/metisgraph-escape Read-only file system" in tail
    assert "refused /etc/passwd Read-only file system" in tail
    assert "refused ../../etc/hosts Read-only file system" in tail
    assert "wrote /work/inside.txt" in tail  # its own directory is writable
    assert target.read_text() == "the host's\n"
    assert target.stat().st_mtime_ns == before.st_mtime_ns
    assert not Path("/usr/lib/metisgraph-escape").exists()


async def test_an_over_long_run_is_killed_at_the_time_limit(
    store: GraphStore, embedder: Any, project: str, settings: SandboxSettings
) -> None:
    settings = settings.model_copy(update={"timeout_s": 2.0})
    test = "import os, time\nos.fork()\nos.fork()\nprint('sleeping', flush=True)\ntime.sleep(600)\n"
    snippet_id = await _snippet(store, embedder, project, ADD, [test])
    started = time.monotonic()
    verdict = await _verify(store, settings, project, snippet_id)
    elapsed = time.monotonic() - started
    assert (verdict.status, verdict.timed_out, verdict.exit_code) == ("failed", True, None)
    assert (verdict.reason or "").startswith("killed at the time limit after")
    assert 2000 <= (verdict.duration_ms or 0) < 4000 and elapsed < 8
    assert "sleeping" in (verdict.output_tail or "")  # what it printed before is kept
    assert _processes_of(settings.uid) == []  # all four processes were killed
    state = await _state(store, project, snippet_id)
    assert state["failures"] == 1 and json.loads(state["last_failure"])["exit_code"] is None


async def test_closing_its_output_does_not_stop_the_clock(settings: SandboxSettings) -> None:
    quick = settings.model_copy(update={"timeout_s": 1.5})
    started = time.monotonic()
    run = await Sandbox(quick).run({}, "echo going quiet; exec >/dev/null 2>&1; sleep 600")
    assert run.timed_out and run.exit_code is None and run.output == "going quiet\n"
    assert time.monotonic() - started < 6
    assert _processes_of(quick.uid) == []


async def test_memory_over_the_limit_is_refused_to_the_process(
    store: GraphStore, embedder: Any, project: str, settings: SandboxSettings
) -> None:
    settings = settings.model_copy(update={"memory_mb": 256})
    test = (
        "small = bytearray(64 << 20)\n"
        "print('64 MiB allocated', flush=True)\n"
        "large = bytearray(1 << 30)\n"
        "print('1 GiB allocated')\n"
    )
    snippet_id = await _snippet(store, embedder, project, ADD, [test])
    verdict = await _verify(store, settings, project, snippet_id)
    tail = verdict.output_tail or ""
    assert verdict.status == "failed"
    assert "64 MiB allocated" in tail and "MemoryError" in tail
    assert "1 GiB allocated" not in tail


async def test_the_run_sees_nothing_of_the_host(
    store: GraphStore,
    embedder: Any,
    project: str,
    settings: SandboxSettings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("METISGRAPH_TEST_HOST_SECRET", "host-only")
    # Asserted inside the sandbox: the run passes only if every one of them holds there.
    test = (
        "import os, subprocess\n"
        "assert os.getcwd() == '/work' and os.environ['HOME'] == '/work'\n"
        "assert 'METISGRAPH_TEST_HOST_SECRET' not in os.environ, os.environ\n"
        "assert set(os.environ) <= {'HOME', 'PATH', 'LANG', 'TMPDIR', 'USER', 'PWD', 'SHLVL',\n"
        "                           '_'}, sorted(os.environ)\n"
        "assert os.getuid() == 1000 and os.getgid() == 1000\n"
        "assert set(os.listdir('/')) <= {'bin', 'dev', 'etc', 'lib', 'lib32', 'lib64', 'libx32',\n"
        "                                'proc', 'sbin', 'tmp', 'usr', 'work'}, os.listdir('/')\n"
        "assert not os.path.exists('/root') and not os.path.exists('/home')\n"
        "assert len([p for p in os.listdir('/proc') if p.isdigit()]) <= 3  # its own pids\n"
        "nested = subprocess.run(['unshare', '--user', '--map-root-user', 'true'],\n"
        "                        capture_output=True, text=True)\n"
        "assert nested.returncode != 0, 'made a user namespace of its own'\n"
        "print('contained')\n"
    )
    snippet_id = await _snippet(store, embedder, project, ADD, [test])
    verdict = await _verify(store, settings, project, snippet_id)
    assert verdict.status == "passed", verdict.output_tail
    assert "contained" in (verdict.output_tail or "")


async def test_a_missing_namespace_is_a_refusal_not_a_weaker_run(
    store: GraphStore, embedder: Any, project: str, settings: SandboxSettings
) -> None:
    lacking = settings.model_copy(update={"unavailable": "net,processes"})
    snippet_id = await _snippet(store, embedder, project, ADD, ["assert add(1, 1) == 2"])
    verdict = await _verify(store, lacking, project, snippet_id)
    assert verdict.status == "refused"
    assert "net: declared unavailable" in (verdict.reason or "")
    assert "processes: declared unavailable" in (verdict.reason or "")
    state = await _state(store, project, snippet_id)
    assert (state["uses"], state["verified"]) == (0, [])


async def test_what_a_run_needs_is_asked_for_by_name(
    store: GraphStore, embedder: Any, project: str, settings: SandboxSettings
) -> None:
    snippet_id = await _snippet(store, embedder, project, ADD, [])
    no_tests = await _verify(store, settings, project, snippet_id)
    assert (no_tests.status, no_tests.reason) == (
        "refused", "the snippet has no tests: give a check command",
    )  # fmt: skip
    older = EnvironmentInput(runtime="python", runtime_version="2.7")
    mismatch = await _verify(store, settings, project, snippet_id, environment=older,
                             command="python3 -c 'import snippet'")  # fmt: skip
    assert mismatch.status == "refused"
    assert (mismatch.reason or "").startswith("environment.runtimeVersion: '2.7' was given")
    checked = await _verify(
        store,
        settings,
        project,
        snippet_id,
        command="python3 -c 'from snippet import add; assert add(1, 2) == 3'",
    )
    assert checked.status == "passed"


async def test_placeholders_are_filled_from_parameters(
    store: GraphStore, embedder: Any, project: str, settings: SandboxSettings
) -> None:
    code = 'PASSWORD = "Hunter2-Sekret-99"\n\ndef credentials():\n    return ("svc", PASSWORD)\n'
    snippet_id = await _snippet(
        store, embedder, project, code, ["user, password = credentials()\nprint(len(password))"]
    )
    # Without a value the lifted credential's dummy default runs (never the real one).
    dummy = await _verify(store, settings, project, snippet_id)
    assert dummy.status == "passed" and (dummy.output_tail or "").strip() == "14", dummy
    filled = await _verify(store, settings, project, snippet_id,
                           parameters={"password": "abcdefgh"})  # fmt: skip
    assert filled.status == "passed" and (filled.output_tail or "").strip() == "8"


async def test_output_is_redacted_before_it_is_kept(
    store: GraphStore, embedder: Any, project: str, settings: SandboxSettings
) -> None:
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    snippet_id = await _snippet(store, embedder, project, ADD, ["assert add(1, 1) == 2"])
    verdict = await _verify(store, settings, project, snippet_id,
                            command=f"echo token={secret}; exit 3")  # fmt: skip
    assert verdict.status == "failed" and verdict.exit_code == 3
    state = await _state(store, project, snippet_id)
    assert secret not in state["last_failure"] and secret not in (verdict.output_tail or "")
    assert secret not in (verdict.command or "")


def test_unknown_names_in_the_unavailable_setting_are_an_error() -> None:
    with pytest.raises(ValueError, match="unknown ipc"):
        SandboxSettings(unavailable="net,ipc")


def test_the_default_uid_is_not_root_and_owns_nothing_in_the_usual_places() -> None:
    uid = SandboxSettings().uid
    assert uid >= FIRST_UNOWNED_UID
    for place in ("/usr", "/etc", "/root", "/home", "/tmp", "/var"):
        if os.path.isdir(place):
            assert os.stat(place).st_uid != uid


async def test_stored_tests_keep_their_values_and_run_without_a_command(
    store: GraphStore, embedder: Any, project: str, settings: SandboxSettings
) -> None:
    """A test is code that must run: its numbers and timestamps stay as written (only
    secrets go), and verify runs it when no command is given."""
    code = (
        "def order_total(order_id, created='2026-03-01T09:30:00Z'):\n"
        "    return order_id % 1000 + int(created[:4])\n"
    )
    tests = [
        "assert order_total(1234567) == 567 + 2026\n"
        "assert order_total(1234567, '2025-01-01T00:00:00Z') == 567 + 2025\n"
        "API_KEY = 'sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0'\n"
    ]
    snippet_id = await _snippet(store, embedder, project, code, tests)
    rows = await store.run_text(
        "MATCH (s:Snippet {project: $p, id: $id}) RETURN s.tests AS tests",
        {"p": project, "id": snippet_id},
        read=True,
    )
    (stored,) = rows[0]["tests"]
    assert "order_total(1234567)" in stored and "2025-01-01T00:00:00Z" in stored
    assert "sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0" not in stored  # the secret is not kept
    assert "{{api_key}}" in stored  # lifted: a credential has no stored value
    dummy = await _verify(store, settings, project, snippet_id)  # its dummy default runs
    assert dummy.status == "passed", dummy
    verdict = await _verify(store, settings, project, snippet_id, parameters={"api_key": "k"})
    assert verdict.status == "passed", verdict
