"""`neo4j-admin database import full` on the embedded server's home, with its Java.

Neo4j's import tool ships in the artifacts the launcher runs on (neo4j-import-tool and
neo4j-command-line, resolved by pom.xml through `org.neo4j:neo4j`): its entry point,
`org.neo4j.cli.AdminTool`, is run with the launcher's Java and class path, NEO4J_HOME and
NEO4J_CONF set to the embedded home (its neo4j.conf names the data and log folders). The
server must be stopped: the tool writes the database's store files itself.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from metisgraph.graph.embedded.errors import EmbeddedNeo4jError
from metisgraph.graph.embedded.java import JVM_OPTIONS, find_java
from metisgraph.graph.embedded.server import EmbeddedNeo4j

__all__ = ["ADMIN_TOOL", "ImportRun", "import_database"]

ADMIN_TOOL = "org.neo4j.cli.AdminTool"


@dataclass(frozen=True)
class ImportRun:
    seconds: float
    report: Path
    output: str


def import_database(
    embedded: EmbeddedNeo4j,
    files: Iterable[str],
    *,
    database: str = "neo4j",
    heap: str = "1g",
    threads: int | None = None,
) -> ImportRun:
    """Import the node and relationship files (``--nodes=…``/``--relationships=…``
    arguments) into ``database`` of the stopped embedded server, replacing what it held."""
    if embedded.status().running:
        raise EmbeddedNeo4jError("stop the embedded Neo4j before a bulk import")
    artifacts = embedded.prepare()
    java = find_java(embedded.settings.java_home)
    home = embedded.home
    home.mkdir(parents=True, exist_ok=True)
    embedded.write_config()
    report = home / "logs" / "import.report"
    report.parent.mkdir(parents=True, exist_ok=True)
    cmd = [
        str(java),
        f"-Xmx{heap}",
        *JVM_OPTIONS,
        "-cp",
        f"{artifacts / 'lib' / '*'}",
        ADMIN_TOOL,
        "database",
        "import",
        "full",
        database,  # first: a --nodes option takes every file that follows it
        "--overwrite-destination=true",
        "--multiline-fields=true",
        "--array-delimiter=U+001F",
        "--skip-bad-relationships=false",
        f"--report-file={report}",
        *([f"--threads={threads}"] if threads else []),
        *files,
    ]
    env = {**os.environ, "NEO4J_HOME": str(home), "NEO4J_CONF": str(home)}
    started = time.perf_counter()
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    seconds = time.perf_counter() - started
    output = result.stdout + result.stderr
    if result.returncode != 0:
        raise EmbeddedNeo4jError(f"the import tool failed ({result.returncode}):\n{output[-4000:]}")
    return ImportRun(seconds, report, output)
