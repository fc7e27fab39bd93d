"""An embedded Neo4j Community DBMS, started from Neo4j's own Java artifacts.

Used when no ``NEO4J_URI`` is configured. Maven resolves ``org.neo4j:neo4j`` and
``org.neo4j:neo4j-bolt`` into a cache once; a small Java launcher (shipped with
this package) starts the DBMS in-process with the Bolt connector on 127.0.0.1.
The process is detached and tracked by a pid file in the data directory, so
``metisgraph neo4j start|stop|status`` work across commands.
"""

from metisgraph.graph.embedded.admin_import import ImportRun, import_database
from metisgraph.graph.embedded.errors import EmbeddedNeo4jError
from metisgraph.graph.embedded.java import MIN_JAVA, find_java
from metisgraph.graph.embedded.server import VECTOR_SEGMENTS, EmbeddedNeo4j, EmbeddedStatus
from metisgraph.graph.settings import EmbeddedNeo4jSettings

__all__ = [
    "MIN_JAVA",
    "VECTOR_SEGMENTS",
    "EmbeddedNeo4j",
    "EmbeddedNeo4jError",
    "EmbeddedNeo4jSettings",
    "EmbeddedStatus",
    "ImportRun",
    "find_java",
    "import_database",
]
