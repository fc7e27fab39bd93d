// The vector and full-text indexes, one statement per kind and server capability; which
// index covers what is declared once, in graph/indexes.py (VECTOR_INDEXES, TEXT_INDEXES),
// and filled into the slots here. The dimension is a parameter.

// name: create_vector_index
// mode: write
// Cosine. The WITH list names the properties that SEARCH ... WHERE may filter on inside
// the index (servers from 2026.02).
CYPHER 25 CREATE VECTOR INDEX {{index}} IF NOT EXISTS
FOR (n:{{label}}) ON n.{{property}}
WITH [{{filters}}]
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine'}}

// name: create_vector_index_unfiltered
// mode: write
// Servers before 2026.02 take no filter properties: recall over-fetches instead.
CREATE VECTOR INDEX {{index}} IF NOT EXISTS
FOR (n:{{label}}) ON n.{{property}}
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine'}}

// name: create_text_index
// mode: write
// Lucene, English analyser: stop words out, stems in.
CREATE FULLTEXT INDEX {{index}} IF NOT EXISTS
FOR (n:{{label}}) ON EACH [{{properties}}]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}
