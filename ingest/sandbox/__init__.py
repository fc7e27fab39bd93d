"""The verification gate: run a snippet's tests confined, and keep the evidence.

A run happens in a throw-away view of the system (read-only /usr, a small /work and /tmp),
in new user, mount, pid and network namespaces, as an unprivileged uid with limits on CPU,
memory, file size, open files, processes and wall time; where the host cannot provide one of
them the gate refuses, naming it. See README.md, "Verifying snippets".
"""

from metisgraph.ingest.sandbox.confine import RunResult
from metisgraph.ingest.sandbox.gate import SnippetNotFound, Verification, verify_snippet
from metisgraph.ingest.sandbox.runner import Sandbox, SandboxUnavailable
from metisgraph.ingest.sandbox.settings import SandboxSettings
from metisgraph.ingest.sandbox.support import Support

__all__ = [
    "RunResult",
    "Sandbox",
    "SandboxSettings",
    "SandboxUnavailable",
    "SnippetNotFound",
    "Support",
    "Verification",
    "verify_snippet",
]
