"""Settings for reaching Neo4j: an external server, or the embedded one we start ourselves."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_NEO4J_VERSION = "2026.08.1"


def _default_data_dir() -> Path:
    return Path.home() / ".local" / "share" / "metisgraph"


def _default_cache_dir() -> Path:
    return Path.home() / ".cache" / "metisgraph"


class Neo4jSettings(BaseSettings):
    """Where the graph lives. When ``uri`` is unset we start an embedded Neo4j."""

    model_config = SettingsConfigDict(env_prefix="NEO4J_", extra="ignore")

    uri: str | None = None
    username: str = "neo4j"
    password: SecretStr | None = None
    database: str | None = None
    transaction_timeout: float = Field(
        default=60.0, gt=0, description="Seconds a read or write may run before Neo4j ends it"
    )
    retry_s: float = Field(
        default=30.0,
        ge=0,
        description="Seconds a command's write retries Neo4j being away before it fails",
    )
    batch_timeout: float = Field(
        default=3600.0,
        gt=0,
        description="Seconds a batched operation (forgetting a whole project) may run",
    )

    @property
    def external(self) -> bool:
        return bool(self.uri)


class EmbeddedNeo4jSettings(BaseSettings):
    """How the embedded Neo4j (used when ``NEO4J_URI`` is unset) is started."""

    model_config = SettingsConfigDict(env_prefix="METISGRAPH_NEO4J_", extra="ignore")

    version: str = DEFAULT_NEO4J_VERSION
    home: Path = Field(default_factory=lambda: _default_data_dir() / "neo4j")
    port: int = Field(default=7687, ge=1, le=65535)
    heap: str = "1g"
    heap_max: str = "2g"
    pagecache: str = "2g"
    start_timeout: float = 180.0
    java_home: Path | None = None
    # Java 25+: the first start records what the JVM loads and compiles, a cache of it is
    # written when it stops, and every later start begins warm from it (graph/embedded).
    aot_cache: bool = True
    # More JVM options, after ours (e.g. ["-XX:TieredStopAtLevel=1"] for a short-lived server
    # that should not spend its CPU compiling; the test suite's are such).
    jvm_options: list[str] = Field(default_factory=list)
    cache_dir: Path = Field(default_factory=lambda: _default_cache_dir() / "neo4j")
    # More neo4j.conf lines (name -> value), written after ours and replacing them.
    config: dict[str, str] = Field(default_factory=dict)
