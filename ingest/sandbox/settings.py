"""How the sandbox confines a run: who it runs as, and its limits. Read once at start-up."""

from __future__ import annotations

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["FEATURES", "LIMITS", "NAMESPACES", "SandboxSettings"]

NAMESPACES = ("user", "mount", "pid", "net")
LIMITS = ("cpu", "memory", "file_size", "open_files", "processes")
FEATURES = (*NAMESPACES, *LIMITS)

# Past every range a distribution or systemd hands out (system and login users, the
# subordinate ranges of /etc/subuid, systemd-nspawn's container ranges end at 0x6FFFFFFF):
# a uid no file on the host belongs to.
_UNOWNED_ID = 0x70000000


class SandboxSettings(BaseSettings):
    """The verification sandbox: an unprivileged uid and the limits of one run."""

    model_config = SettingsConfigDict(env_prefix="METISGRAPH_SANDBOX_", extra="ignore")

    uid: int = Field(default=_UNOWNED_ID, ge=1, description="Host uid a run has; owns nothing")
    gid: int = Field(default=_UNOWNED_ID, ge=1, description="Host gid a run has; owns nothing")
    timeout_s: float = Field(default=30.0, gt=0, le=3600, description="Wall time of a run")
    cpu_s: int = Field(default=20, ge=1, description="CPU seconds of each process")
    memory_mb: int = Field(default=512, ge=16, description="Address space of each process")
    file_mb: int = Field(default=16, ge=1, description="Largest file a run may write")
    disk_mb: int = Field(default=64, ge=1, description="Size of the work dir (and of /tmp)")
    open_files: int = Field(default=64, ge=8, description="Open files of each process")
    processes: int = Field(default=32, ge=2, description="Processes (and threads) of a run")
    output_chars: int = Field(default=4000, ge=100, le=100_000, description="Output tail kept")
    concurrency: int = Field(default=2, ge=1, le=64, description="Runs at the same time")
    unavailable: str = Field(
        default="",
        description="Namespaces or limits this host lacks (comma separated, e.g. 'net,pid'): "
        "verification then refuses instead of running less confined",
    )

    @field_validator("unavailable")
    @classmethod
    def _known_features(cls, value: str) -> str:
        unknown = sorted(set(_names(value)) - set(FEATURES))
        if unknown:
            raise ValueError(f"unknown {', '.join(unknown)}; choose from {', '.join(FEATURES)}")
        return value

    @property
    def declared_unavailable(self) -> tuple[str, ...]:
        return _names(self.unavailable)


def _names(value: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n.strip() for n in value.split(",") if n.strip()))
