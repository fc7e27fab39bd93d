"""One typed settings object for the service, read once at start-up (never at import)."""

from __future__ import annotations

import ipaddress
from typing import Literal

from pydantic import BaseModel, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from metisgraph.graph import ConsolidationSettings, EmbeddedNeo4jSettings, Neo4jSettings
from metisgraph.ingest import EmbeddingSettings
from metisgraph.ingest.sandbox import SandboxSettings

__all__ = ["ApiSettings", "MaintainSettings", "Settings", "load_settings"]


class ApiSettings(BaseSettings):
    """The HTTP side: where to listen, who may call, how much a query may ask."""

    model_config = SettingsConfigDict(env_prefix="METISGRAPH_", extra="ignore")

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    dev: bool = Field(default=False, description="GraphiQL at /graphql and verbose errors")
    api_tokens: SecretStr | None = Field(
        default=None,
        description="'token=projA,projB;token2=*' — bearer tokens and the projects each may use",
    )
    allow_anonymous: bool = Field(
        default=False, description="Serve without tokens on a non-loopback address"
    )
    require_token: bool = Field(
        default=False,
        description="Every request needs a token, a METISGRAPH_API_TOKENS entry or a key "
        "made with 'metisgraph keys create' (on by itself when METISGRAPH_API_TOKENS is set)",
    )
    rate_per_second: float = Field(
        default=0, ge=0, description="Requests a second per caller (0: no limit); keys may differ"
    )
    rate_per_minute: float = Field(
        default=0, ge=0, description="Requests a minute per caller (0: no limit); keys may differ"
    )
    rate_workers: int = Field(
        default=1,
        ge=1,
        le=1024,
        description="API workers sharing the rates: each counts rate / N, so a key spread over "
        "N workers gets its rate in all (docs/scaling.md)",
    )
    records_per_day: int = Field(
        default=0, ge=0, description="Records a day a stored key may write (0: no limit)"
    )
    allowed_hosts: str = Field(
        default="127.0.0.1,localhost,::1",
        description="Names the API answers to (Host header), comma-separated; '*.example.com' "
        "for a domain, '*' for any. The address in METISGRAPH_HOST is always allowed",
    )
    warm_up_retry_s: float = Field(
        default=1.0, gt=0, description="First wait before a failed start-up is tried again"
    )
    # 40 s: the warm-up first plans every query text a caller's question can send (8 shapes,
    # ~14 s of a fresh JVM's planning on the 10k bench store), then asks stored episodes'
    # questions two at a time while Neo4j's JIT warms; ready at ~48 s (docs/benchmarks.md).
    warm_up_reads_s: float = Field(
        default=40.0,
        ge=0,
        description="Seconds of recall questions (made of stored episodes) asked at start-up "
        "before /readyz says ready, so the first callers find the reads planned and compiled; "
        "cut to what leaves ready within ~50 s of the process starting (0: none)",
    )
    max_query_depth: int = 12
    # Parsing is pure Python and costs in proportion to the tokens (a 4,000-token document
    # took ~0.2 s on our busy 2-core machine), and a document is parsed whole before the
    # depth and alias limits can refuse it. Our own clients send at most ~200 tokens (the
    # explorer's lineage query): bench/graphql_limits.py.
    max_query_tokens: int = 1000
    max_aliases: int = 20
    max_body_bytes: int = Field(
        default=32 * 1024 * 1024,
        ge=1024,
        description="Largest request body accepted; a larger one is answered 413",
    )
    body_timeout_s: float = Field(
        default=30.0,
        gt=0,
        le=3600,
        description="Longest time a request body may take to arrive whole; slower is a 408",
    )
    max_streams_per_caller: int = Field(
        default=4, ge=0, le=10_000, description="Event streams (GET /mcp) one caller may hold"
    )
    max_streams: int = Field(
        default=64, ge=0, le=100_000, description="Event streams (GET /mcp) open in the process"
    )
    ingest_batch_size: int = Field(default=256, ge=1, le=10000)
    max_concurrent_requests: int = Field(
        default=16, ge=1, le=10_000, description="Requests served at once; more wait for a slot"
    )
    max_queued_requests: int = Field(
        default=64, ge=0, le=100_000, description="Requests waiting for a slot; more get 503"
    )
    queue_wait_s: float = Field(
        default=10.0, gt=0, le=600, description="Longest wait for a slot before a 503"
    )
    # A write in flight when Neo4j goes away is retried by the driver; for as long as a
    # command would (30 s), on top of the queue wait, the caller's own timeout came first
    # (the load benchmark's ReadTimeout). The API gives up sooner and answers 503.
    neo4j_retry_s: float = Field(
        default=5.0,
        ge=0,
        le=600,
        description="Seconds a request's write retries Neo4j being away before a 503",
    )
    # Longer than any Retry-After we state (5 s): a caller that waits it out and comes back
    # on its kept-alive connection must not find it being closed under its request (uvicorn
    # closes idle connections after 5 s by default: the load benchmark's ReadErrors).
    keep_alive_s: int = Field(
        default=75, ge=1, le=3600, description="Seconds an idle kept-alive connection stays open"
    )
    # A stopping server waits for responses under way, and an event stream (GET /mcp) never
    # ends by itself: uvicorn's default waits for ever, so a SIGTERM left the process up (and
    # the embedded Neo4j unstopped) until a SIGKILL.
    shutdown_grace_s: float = Field(
        default=10.0,
        ge=0,
        le=600,
        description="Seconds a stopping server lets open responses (event streams) finish",
    )
    log_format: Literal["json", "text"] = Field(
        default="json", description="'json': one object a line with a request id; 'text'"
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    stop_embedded_on_exit: bool = True
    demo: bool = Field(default=False, description="Load the demo memory (project 'demo') at start")
    keep_instance_details: bool = Field(
        default=False,
        description="Keep the originals behind <HOST>, <IP>, <EMAIL>, <HOME> … on each episode: "
        "shown by node() to the project's admins only, never exported, embedded or recalled, "
        "gone with the episode",
    )

    @property
    def host_names(self) -> list[str]:
        """The allowed Host names: the list, and the address we listen on (unless a wildcard)."""
        names = [n.strip() for n in self.allowed_hosts.split(",") if n.strip()]
        if self.host not in ("0.0.0.0", "::", ""):  # noqa: S104  (a wildcard, not a name)
            names.append(self.host)
        return names

    @property
    def loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


class MaintainSettings(BaseSettings):
    """Consolidation (`metisgraph maintain`, and opt-in in `serve`). Why each default:
    docs/consolidation.md."""

    model_config = SettingsConfigDict(env_prefix="METISGRAPH_MAINTAIN_", extra="ignore")

    every_s: float = Field(
        default=0.0, ge=0.0, description="serve: maintain every project this often; 0 = never"
    )
    duplicate_similarity: float = Field(default=0.97, gt=0.0, le=1.0)
    lesson_similarity: float = Field(default=0.85, gt=0.0, le=1.0)
    min_support: int = Field(default=3, ge=2)
    retire_snippets: bool = True

    def consolidation(self) -> ConsolidationSettings:
        return ConsolidationSettings(
            duplicate_similarity=self.duplicate_similarity,
            lesson_similarity=self.lesson_similarity,
            min_support=self.min_support,
            retire_snippets=self.retire_snippets,
        )


class Settings(BaseModel):
    """Everything the process is configured with."""

    api: ApiSettings
    neo4j: Neo4jSettings
    embedded: EmbeddedNeo4jSettings
    embedding: EmbeddingSettings
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    maintain: MaintainSettings = Field(default_factory=MaintainSettings)


def load_settings() -> Settings:
    """Read the environment (and a .env file when present) into one settings object."""
    return Settings(
        api=ApiSettings(_env_file=".env"),  # type: ignore[call-arg]
        neo4j=Neo4jSettings(_env_file=".env"),  # type: ignore[call-arg]
        embedded=EmbeddedNeo4jSettings(_env_file=".env"),  # type: ignore[call-arg]
        embedding=EmbeddingSettings(_env_file=".env"),  # type: ignore[call-arg]
        sandbox=SandboxSettings(_env_file=".env"),  # type: ignore[call-arg]
        maintain=MaintainSettings(_env_file=".env"),  # type: ignore[call-arg]
    )
