"""Run one command confined, and keep the tail of what it printed.

The host side of enter.sh: the command line that drops to the sandbox's uid and makes the
namespaces, the limits every process of the run gets, the files handed in as a tar on
standard input, and the wall-time limit — at which the whole pid namespace is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import resource
import signal
import tarfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from metisgraph.ingest.sandbox.settings import SandboxSettings
from metisgraph.ingest.sandbox.support import (
    RLIMITS,
    SYSTEM_PATH,
    as_sandbox_user,
    namespace_flags,
)

__all__ = ["INNER_PATH", "RunResult", "confined_argv", "run_confined"]

MARKER = b"metisgraph-sandbox: view ready"
INNER_PATH = "/usr/local/bin:/usr/bin:/bin"
_SETUP_TIMEOUT_S = 30.0
_GRACE_S = 10.0  # for a killed namespace to empty
_CHUNK = 65536


@dataclass(frozen=True)
class RunResult:
    """What a confined run did. When the view could not be built, `started` is False and
    `output` is the setup's complaint: nothing of the command ran."""

    started: bool
    exit_code: int | None  # negative: killed by that signal; None: killed at the time limit
    duration_ms: int
    output: str
    timed_out: bool


def _setup_script() -> str:
    return resources.files("metisgraph.ingest.sandbox").joinpath("enter.sh").read_text("utf-8")


def _limits(settings: SandboxSettings) -> list[str]:
    """prlimit options, each at most the host's own hard limit (a limit can only go down)."""
    wanted = {
        "cpu": settings.cpu_s,
        "memory": settings.memory_mb << 20,
        "file_size": settings.file_mb << 20,
        "open_files": settings.open_files,
        "processes": settings.processes,
    }
    options = []
    for name, value in wanted.items():
        constant, option = RLIMITS[name]
        hard = resource.getrlimit(getattr(resource, constant))[1]
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        options.append(f"{option}={value}")
    return [*options, "--core=0"]


def confined_argv(
    settings: SandboxSettings,
    tools: Mapping[str, str],
    command: str,
    *,
    root: bool | None = None,
) -> list[str]:
    """host root → sandbox uid (a service that is not root keeps its own) → new namespaces
    → enter.sh → uid 1000, limits, empty env. ``root``: as the service is (None: ask)."""
    inner = [
        "setpriv", "--no-new-privs", "--inh-caps=-all", "--",
        "prlimit", *_limits(settings), "--",
        "env", "-i", "HOME=/work", f"PATH={INNER_PATH}", "LANG=C.UTF-8", "TMPDIR=/tmp",
        "USER=sandbox", "sh", "-c", command,
    ]  # fmt: skip
    return [
        *as_sandbox_user(settings, tools, root=root),
        tools["unshare"], *namespace_flags(), "--kill-child", "--propagation", "private", "--",
        tools["sh"], "-c", _setup_script(), "metisgraph-sandbox",
        str(settings.disk_mb << 20), MARKER.decode(), *inner,
    ]  # fmt: skip


def _tar(files: Mapping[str, str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, text in files.items():
            data = text.encode("utf-8")
            entry = tarfile.TarInfo(name)
            entry.size, entry.mode, entry.mtime = len(data), 0o644, int(time.time())
            archive.addfile(entry, io.BytesIO(data))
    return buffer.getvalue()


class _Tail:
    """The last `limit` bytes of a stream, without ever holding much more."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        if len(self.data) > 2 * self.limit:
            del self.data[: -self.limit]

    def text(self, chars: int) -> str:
        return bytes(self.data[-self.limit :]).decode("utf-8", "replace")[-chars:]


async def run_confined(
    settings: SandboxSettings, tools: Mapping[str, str], files: Mapping[str, str], command: str
) -> RunResult:
    """Run `command` with `files` in /work, confined; kill everything at the time limit."""
    process = await asyncio.create_subprocess_exec(
        *confined_argv(settings, tools, command),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT, env={"PATH": SYSTEM_PATH}, start_new_session=True,
    )  # fmt: skip
    try:
        await _feed(process, _tar(files))
        return await _watch(process, settings)
    finally:
        if process.returncode is None:
            await _stop(process)


async def _feed(process: asyncio.subprocess.Process, payload: bytes) -> None:
    assert process.stdin is not None
    try:
        process.stdin.write(payload)
        await process.stdin.drain()
        process.stdin.close()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the setup failed before reading: its output says why


async def _watch(process: asyncio.subprocess.Process, settings: SandboxSettings) -> RunResult:
    assert process.stdout is not None
    head = bytearray()
    deadline = time.monotonic() + _SETUP_TIMEOUT_S
    while MARKER + b"\n" not in head:
        chunk = await _read(process.stdout, deadline)
        if not chunk:  # the setup ended (or hung) before the view was whole
            if chunk is None:
                await _stop(process)
            await process.wait()
            return RunResult(False, process.returncode, 0, head.decode("utf-8", "replace"), False)
        head += chunk
    started = time.monotonic()
    tail = _Tail(settings.output_chars * 4)
    tail.add(bytes(head.split(MARKER + b"\n", 1)[1]))
    deadline = started + settings.timeout_s
    while chunk := await _read(process.stdout, deadline):
        tail.add(chunk)
    # The end of the output is not the end of the run: it may close its output and go on.
    timed_out = chunk is None or not await _exits_by(process, deadline)
    if timed_out:
        await _stop(process)
    await process.wait()
    elapsed = int((time.monotonic() - started) * 1000)
    exit_code = None if timed_out else process.returncode
    return RunResult(True, exit_code, elapsed, tail.text(settings.output_chars), timed_out)


async def _read(stream: asyncio.StreamReader, deadline: float) -> bytes | None:
    """The next chunk; b'' at the end; None when the deadline passed first."""
    try:
        return await asyncio.wait_for(stream.read(_CHUNK), max(0.0, deadline - time.monotonic()))
    except TimeoutError:
        return None


async def _exits_by(process: asyncio.subprocess.Process, deadline: float) -> bool:
    try:
        await asyncio.wait_for(process.wait(), max(0.0, deadline - time.monotonic()))
    except TimeoutError:
        return False
    return True


async def _stop(process: asyncio.subprocess.Process) -> None:
    """Kill the run and wait until it is gone.

    The run's pid namespace's init is killed: the kernel then kills every process in the
    namespace, however they forked or regrouped, and the init exits only after all of them.
    The launcher sees that exit and ends, so when it is waited for nothing of the run is
    left. The launcher and its group are killed only when there is no init or it lingers.
    """
    children = _children(process.pid)
    for child in children:
        _signal(child)
    if children:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), _GRACE_S)
    if process.returncode is None:
        _signal(process.pid)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()


def _signal(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:  # a kernel without CONFIG_PROC_CHILDREN: find them by their parent
        return [p for p in _pids() if _parent(p) == pid]


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _parent(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])
