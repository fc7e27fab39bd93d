"""The sandbox a process keeps: the host probed once, a bounded number of runs at a time."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from metisgraph.ingest.sandbox.confine import RunResult, run_confined
from metisgraph.ingest.sandbox.settings import SandboxSettings
from metisgraph.ingest.sandbox.support import Support, probe

__all__ = ["Sandbox", "SandboxUnavailable"]


class SandboxUnavailable(RuntimeError):
    """This host cannot confine a run as the settings ask; the message says what is missing."""


class Sandbox:
    """Runs commands confined. Built without I/O; the host is probed at the first run."""

    def __init__(self, settings: SandboxSettings) -> None:
        self.settings = settings
        self._support: Support | None = None
        self._slots = asyncio.Semaphore(settings.concurrency)

    async def support(self) -> Support:
        """What this host lacks to confine a run (probed once, in a worker thread)."""
        if self._support is None:
            self._support = await asyncio.to_thread(probe, self.settings)
        return self._support

    async def run(self, files: Mapping[str, str], command: str) -> RunResult:
        """Run `command` by `sh -c` in a fresh /work holding `files`; refuse when the host
        cannot confine it (SandboxUnavailable), never run it less confined."""
        support = await self.support()
        if not support.ready:
            raise SandboxUnavailable(support.reason())
        async with self._slots:
            return await run_confined(self.settings, support.tools, files, command)
