"""Neo4j access: schema, stores, recall. Imports nothing else of metisgraph."""
