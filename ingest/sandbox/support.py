"""Can this host confine a run? Every namespace is tried for real, once; nothing is assumed.

What is missing is named with the kernel's or the tool's own words, so a refusal says why.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field

from metisgraph.ingest.sandbox.settings import LIMITS, NAMESPACES, SandboxSettings

__all__ = [
    "SYSTEM_PATH",
    "TOOLS",
    "Support",
    "as_sandbox_user",
    "namespace_flags",
    "privileged",
    "probe",
]

SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
# util-linux (setpriv, unshare, prlimit, mount, umount, pivot_root), tar, coreutils, a POSIX sh.
TOOLS = ("setpriv", "unshare", "prlimit", "mount", "umount", "pivot_root", "tar", "env", "sh")
RLIMITS = {
    "cpu": ("RLIMIT_CPU", "--cpu"),
    "memory": ("RLIMIT_AS", "--as"),
    "file_size": ("RLIMIT_FSIZE", "--fsize"),
    "open_files": ("RLIMIT_NOFILE", "--nofile"),
    "processes": ("RLIMIT_NPROC", "--nproc"),
}
_FLAGS = {"user": "--user", "mount": "--mount", "pid": "--pid", "net": "--net"}
_PROBE_TIMEOUT_S = 20


@dataclass(frozen=True)
class Support:
    """What this host lacks to confine a run (empty when it lacks nothing), and the tools."""

    missing: Mapping[str, str] = field(default_factory=dict)
    tools: Mapping[str, str] = field(default_factory=dict)

    @property
    def ready(self) -> bool:
        return not self.missing

    def reason(self) -> str:
        lacking = "; ".join(f"{name}: {why}" for name, why in self.missing.items())
        return f"the sandbox cannot confine a run on this host ({lacking})"


def privileged() -> bool:
    """Whether the service runs as root (then each run gets the sandbox's own uid)."""
    return os.geteuid() == 0


def as_sandbox_user(
    settings: SandboxSettings, tools: Mapping[str, str], *, root: bool | None = None
) -> list[str]:
    """The prefix that drops host root to the sandbox's uid: no groups, no capabilities.

    A service that is not root (the shipped image, uid 10001) has nothing to drop: the run
    keeps the service's uid on the host and is confined by the namespaces alone — an
    unprivileged user namespace, where it sees none of the service's files (enter.sh builds
    its root from /usr and a few files of /etc) and none of its processes (its own pid
    namespace), and no new privileges."""
    if not (privileged() if root is None else root):
        return [tools["setpriv"], "--no-new-privs", "--inh-caps=-all", "--"]
    return [
        tools["setpriv"], f"--reuid={settings.uid}", f"--regid={settings.gid}", "--clear-groups",
        "--inh-caps=-all", "--no-new-privs", "--",
    ]  # fmt: skip


def namespace_flags(names: tuple[str, ...] = NAMESPACES) -> list[str]:
    """unshare(1) options for these namespaces; the sandbox user is root of the new user one."""
    flags = ["--user", "--map-root-user"]
    flags += [_FLAGS[n] for n in names if n != "user"]
    return [*flags, "--fork"] if "pid" in names else flags


def probe(settings: SandboxSettings) -> Support:
    """Try what a run needs: the tools, root to switch uid, each namespace, each limit."""
    missing: dict[str, str] = {}
    found = {name: shutil.which(name, path=SYSTEM_PATH) for name in TOOLS}
    tools = {name: path for name, path in found.items() if path}
    for name in TOOLS:
        if name not in tools:
            missing[name] = f"no {name} on {SYSTEM_PATH}"
    if not missing:
        missing.update(_namespaces(settings, tools))
    for name in LIMITS:
        if not hasattr(resource, RLIMITS[name][0]):
            missing[name] = f"this platform has no {RLIMITS[name][0]}"
    for name in settings.declared_unavailable:
        missing.setdefault(name, "declared unavailable (METISGRAPH_SANDBOX_UNAVAILABLE)")
    return Support(missing, tools)


def _namespaces(settings: SandboxSettings, tools: Mapping[str, str]) -> dict[str, str]:
    """All namespaces at once; when that fails, each one alone to name the culprit."""
    if _try(settings, tools, NAMESPACES) is None:
        return {}
    user = _try(settings, tools, ("user",))
    if user is not None:
        return {"user": user} | {n: "needs a user namespace" for n in NAMESPACES if n != "user"}
    failed = {n: _try(settings, tools, ("user", n)) for n in NAMESPACES if n != "user"}
    return {n: why for n, why in failed.items() if why is not None}


def _try(settings: SandboxSettings, tools: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    """None when the namespaces can be made as the sandbox user; else the tool's complaint."""
    argv = [*as_sandbox_user(settings, tools), tools["unshare"], *namespace_flags(names), "true"]
    try:
        done = subprocess.run(
            argv, env={"PATH": SYSTEM_PATH}, capture_output=True, text=True,
            timeout=_PROBE_TIMEOUT_S, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
    if done.returncode == 0:
        return None
    lines = (done.stderr or done.stdout).strip().splitlines()
    return lines[-1] if lines else f"unshare exited with {done.returncode}"
