"""The detached launcher process: is it alive, is its port open, start it, reap it."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from metisgraph.graph.embedded.artifacts import LAUNCHER

__all__ = ["exit_code", "pid_alive", "port_open", "spawn_detached"]


def port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    cmdline = Path(f"/proc/{pid}/cmdline")
    if cmdline.exists():
        # Guard against a recycled pid: it must still be our launcher.
        return LAUNCHER.encode() in cmdline.read_bytes()
    return True


def _inherited_descriptors() -> list[int]:
    """What this process holds beyond standard input, output and error."""
    folder = "/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"
    return [fd for fd in map(int, os.listdir(folder)) if fd > 2]


def spawn_detached(cmd: list[str], env: dict[str, str], log: Path) -> int:
    """Start ``cmd`` in its own session, output appended to ``log``: it outlives its caller.

    It gets none of the caller's descriptors: one it kept would outlive the caller too (a
    lock the caller's own parent took, held until the server stops). A descriptor closed
    meanwhile by another thread is skipped by posix_spawn, not an error.
    """
    closes = [(os.POSIX_SPAWN_CLOSE, fd) for fd in _inherited_descriptors()]
    actions = [
        *closes,
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, str(log), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600),
        (os.POSIX_SPAWN_DUP2, 1, 2),
    ]
    return os.posix_spawn(cmd[0], cmd, env, file_actions=actions, setsid=True)


def exit_code(pid: int) -> int | None:
    """The exit code of a child that has exited (-1 when not ours and gone), else None."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return None if pid_alive(pid) else -1
    return os.waitstatus_to_exitcode(status) if done else None
