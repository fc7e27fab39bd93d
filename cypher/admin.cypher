// The server and its schema: what version runs, which indexes exist, in which state.
// graph/store.py and graph/schema.py run these; the schema itself is schema.cypher.

// name: server_components
// mode: read
CALL dbms.components() YIELD name, versions, edition
WHERE name = 'Neo4j Kernel'
RETURN versions[0] AS version, edition

// name: vector_index_dimensions
// mode: read
SHOW VECTOR INDEXES YIELD name, options
RETURN name, options.indexConfig['vector.dimensions'] AS dimensions

// name: index_properties
// mode: read
SHOW INDEXES YIELD name, properties
RETURN name, properties

// name: index_states
// mode: read
SHOW INDEXES YIELD name, state
RETURN name, state

// name: drop_index
// mode: write
// An index whose definition changed, dropped to be built again by schema.cypher.
DROP INDEX $index IF EXISTS

// name: await_indexes
// mode: write
// Sent where the schema was written, so it waits for the indexes just created.
CALL db.awaitIndexes($timeout)
