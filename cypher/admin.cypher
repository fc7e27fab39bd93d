// The server and its schema: what version runs, which indexes exist, in which state.
// graph/store.py and graph/indexes.py run these; the schema itself is schema.cypher.

// name: server_components
// mode: read
CALL dbms.components() YIELD name, versions, edition
WHERE name = 'Neo4j Kernel'
RETURN versions[0] AS version, edition

// name: vector_indexes
// mode: read
// Each vector index with its state, what it covers (the vector property first, then the
// properties a SEARCH may filter on) and the dimension it was built for.
SHOW VECTOR INDEXES YIELD name, state, populationPercent AS percent,
     labelsOrTypes AS labels, properties, options
RETURN name, state, percent, labels, properties,
       options.indexConfig['vector.dimensions'] AS dimensions

// name: index_properties
// mode: read
SHOW INDEXES YIELD name, properties
RETURN name, properties

// name: index_states
// mode: read
SHOW INDEXES YIELD name, state
RETURN name, state

// name: index_population
// mode: read
SHOW INDEXES YIELD name, state, populationPercent
WHERE name = $index
RETURN state, populationPercent AS percent

// name: probe_vector_index
// mode: read
// A vector search that must answer (graph/vector_health.py); no rows is healthy.
CALL db.index.vector.queryNodes($index, 1, $vector) YIELD node
RETURN count(*) AS n

// name: probe_vector_index_filtered
// mode: read
// The filtered search Neo4j 2026.08 fails once an index holds deletions (issue 12), with a
// filter that matches nothing. {{label}} and {{index}}: names checked by Query.naming.
CYPHER 25
MATCH (n:{{label}})
  SEARCH n IN (VECTOR INDEX {{index}} FOR $vector WHERE n.project = $project LIMIT 1)
  SCORE AS score
RETURN count(*) AS n

// name: drop_index
// mode: write
// An index whose definition changed, dropped to be built again by schema.cypher.
DROP INDEX $index IF EXISTS

// name: index_progress
// mode: batch
// Where each index stands; graph/indexes.await_indexes waits on it for as long as it moves.
// SHOW INDEXES itself waits while an index flips online, and a vector index's flip holds
// its merge into one segment (55 s at 100k episodes, ~14 min at 1M): under the batch
// timeout, not a request's (60 s), so the wait is not cut short on a healthy store.
SHOW INDEXES YIELD name, state, populationPercent
RETURN name, state, populationPercent AS percent

