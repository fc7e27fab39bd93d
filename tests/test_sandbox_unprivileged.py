"""The sandbox without root: a service that is not root (the shipped image runs as uid
10001) confines a run with unprivileged user namespaces alone. Run here as uid 65534
(nobody): the run sees its own root and nothing of the host, has no network, and its
memory is bounded."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any

import pytest

from metisgraph.ingest.sandbox import SandboxSettings
from metisgraph.ingest.sandbox import support as sandbox_support
from metisgraph.ingest.sandbox.confine import MARKER, _tar, confined_argv
from metisgraph.ingest.sandbox.support import SYSTEM_PATH, probe

pytestmark = pytest.mark.sandbox
NOBODY = 65534
COMMAND = (
    "id -u; cat note.txt; ls -a /; "
    "python3 -c 'bytearray(400 * 1024 * 1024)' 2>/dev/null; echo alloc=$?; "
    "cat /proc/net/dev | tail -n +3 | cut -d: -f1; "
    "ls /root /home /work/../etc/shadow 2>&1 | head -3"
)


@pytest.fixture(scope="module")
def tools() -> dict[str, str]:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("becoming uid 65534 for the test needs root and setpriv")
    found = probe(SandboxSettings())
    if not found.ready:
        pytest.skip(found.reason())
    return dict(found.tools)


def _as_nobody(argv: list[str], files: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    become = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]
    return subprocess.run(
        [*become, *argv], input=_tar(files), capture_output=True,
        env={"PATH": SYSTEM_PATH}, timeout=120, check=False,
    )  # fmt: skip


def test_a_run_is_confined_by_a_service_that_is_not_root(tools: dict[str, str]) -> None:
    settings = SandboxSettings(memory_mb=256)
    argv = confined_argv(settings, tools, COMMAND, root=False)
    assert not any(a.startswith("--reuid") for a in argv)  # nothing to switch to
    done = _as_nobody(argv, {"note.txt": "handed in\n"})
    output = done.stdout.decode()
    assert done.returncode == 0, (output, done.stderr.decode())
    after = output.split(MARKER.decode() + "\n", 1)[1].splitlines()
    assert after[0] == "1000"  # uid 1000 of the nested namespace
    assert after[1] == "handed in"
    listing = set(after[2 : after.index("alloc=1")])
    assert {"usr", "work", "tmp", "proc"} <= listing and not {"root", "home"} & listing
    assert [line.strip() for line in after[after.index("alloc=1") + 1 :][:1]] == ["lo"]
    assert "No such file or directory" in output  # nothing of the host's /root or /home


def test_the_run_as_root_would_need_root(tools: dict[str, str]) -> None:
    """What the service does as root (switch to the sandbox's uid) is what a non-root
    service cannot: the unprivileged path is not that one with a flag."""
    done = _as_nobody(confined_argv(SandboxSettings(), tools, "true", root=True), {})
    assert done.returncode != 0 and b"setresuid" in done.stderr + done.stdout


def test_the_probe_asks_no_root(monkeypatch: Any, tools: dict[str, str]) -> None:
    monkeypatch.setattr(sandbox_support.os, "geteuid", lambda: 10001)
    found = probe(SandboxSettings())
    assert found.ready, found.reason()
