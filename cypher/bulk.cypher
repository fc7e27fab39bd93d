// The bulk path (graph/bulk/graph.py): what the import files cannot say. An empty list is
// an empty field to `neo4j-admin database import`, read as no value; the pipeline's SET
// stores it as an empty list, so the bulk load sets these after the import.

// name: bulk_empty_lists_episode
// mode: write
UNWIND $rows AS row
MATCH (n:Episode {project: row.project, id: row.key})
SET n += row.props

// name: bulk_empty_lists_task
// mode: write
UNWIND $rows AS row
MATCH (n:Task {project: row.project, id: row.key})
SET n += row.props

// name: bulk_empty_lists_error
// mode: write
UNWIND $rows AS row
MATCH (n:Error {project: row.project, key: row.key})
SET n += row.props

// name: bulk_store_nodes
// mode: read
// A bulk load replaces the database: it goes only into a store that holds nothing yet.
MATCH (n)
RETURN count(n) AS nodes

// name: bulk_context_text
// mode: write
// A chained episode's context text (set_context's, in write.cypher): computed with the
// import files, whose EpisodeVector nodes hold its context vector already.
UNWIND $rows AS row
MATCH (e:Episode {project: row.project, id: row.id})
SET e.context_text = row.text
