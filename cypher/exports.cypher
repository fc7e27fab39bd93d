// Exports stream a project's graph out (nodes, then the relationships among them) and
// imports write one back. Values arrive only as parameters.

// name: export_nodes
// mode: read
// Every node of the project; with $since, the episodes created since then and what they
// touch: their tasks, errors, environments, tools, tags, symbols, snippets and patterns,
// the packages of those environments and snippets, the files and symbols of those snippets.
// Vectors only when $vectors.
CALL () {
  MATCH (n:Project {name: $project}) RETURN n
  UNION ALL
  MATCH (n:Episode {project: $project})
  WHERE n.id IS NOT NULL AND ($since IS NULL OR n.created_at >= $since)
  RETURN n
  UNION ALL
  MATCH (n:Task {project: $project})
  WHERE n.id IS NOT NULL
    AND ($since IS NULL OR EXISTS { (n)-[:HAS_EPISODE]->(e:Episode) WHERE e.created_at >= $since })
  RETURN n
  UNION ALL
  MATCH (n:Snippet {project: $project})
  WHERE n.id IS NOT NULL
    AND ($since IS NULL OR EXISTS { (n)<--(e:Episode) WHERE e.created_at >= $since })
  RETURN n
  UNION ALL
  MATCH (n:Error {project: $project})
  WHERE n.key IS NOT NULL
    AND ($since IS NULL OR EXISTS { (n)<--(e:Episode) WHERE e.created_at >= $since })
  RETURN n
  UNION ALL
  MATCH (n:Environment {project: $project})
  WHERE n.key IS NOT NULL
    AND ($since IS NULL OR EXISTS { (n)<--(e:Episode) WHERE e.created_at >= $since })
  RETURN n
  UNION ALL
  MATCH (n:Tool {project: $project})
  WHERE n.name IS NOT NULL
    AND ($since IS NULL OR EXISTS { (n)<--(e:Episode) WHERE e.created_at >= $since })
  RETURN n
  UNION ALL
  MATCH (n:Tag {project: $project})
  WHERE n.name IS NOT NULL
    AND ($since IS NULL OR EXISTS { (n)<--(e:Episode) WHERE e.created_at >= $since })
  RETURN n
  UNION ALL
  MATCH (n:Pattern {project: $project})
  WHERE n.id IS NOT NULL
    AND ($since IS NULL OR EXISTS { (n)-->(e:Episode) WHERE e.created_at >= $since })
  RETURN n
  UNION ALL
  MATCH (n:Symbol {project: $project})
  WHERE n.name IS NOT NULL
    AND ($since IS NULL OR EXISTS { (n)<--(e:Episode) WHERE e.created_at >= $since }
         OR EXISTS { (n)<--(:Snippet)<--(e:Episode) WHERE e.created_at >= $since })
  RETURN n
  UNION ALL
  MATCH (n:File {project: $project})
  WHERE n.path IS NOT NULL
    AND ($since IS NULL OR EXISTS { (n)<--(:Snippet)<--(e:Episode) WHERE e.created_at >= $since })
  RETURN n
  UNION ALL
  MATCH (n:Package {project: $project})
  WHERE n.name IS NOT NULL
    AND ($since IS NULL
         OR EXISTS { (n)<--(:Environment)<--(e:Episode) WHERE e.created_at >= $since }
         OR EXISTS { (n)<--(:Snippet)<--(e:Episode) WHERE e.created_at >= $since })
  RETURN n
}
RETURN labels(n) AS labels, elementId(n) AS element,
       CASE WHEN NOT $vectors
            THEN n {.*, embedding: null, title_embedding: null, context_embedding: null,
                    details: null}
            WHEN n:Episode  // its title and context vectors live on its EpisodeVector nodes
            THEN n {.*, details: null,
                    title_embedding: COLLECT {
                      MATCH (v:EpisodeVector {project: n.project, episode: n.id, of: 'title'})
                      RETURN v.embedding }[0],
                    context_embedding: COLLECT {
                      MATCH (v:EpisodeVector {project: n.project, episode: n.id, of: 'context'})
                      RETURN v.embedding }[0]}
            ELSE n {.*, details: null}
       END AS props

// name: export_edges
// mode: read
// The relationships going out of some nodes (by element id), with the other end's key.
UNWIND $elements AS element
MATCH (a) WHERE elementId(a) = element
MATCH (a)-[r]->(b)
RETURN element AS source, type(r) AS type, elementId(b) AS target, labels(b) AS labels,
       coalesce(b.project, b.name) AS project, coalesce(b.id, b.key, b.name, b.path) AS key,
       properties(r) AS props

// name: import_nodes
// mode: write
// Nodes of an export, each merged on its kind's key in the target project; answers the
// element id of each, by the export's id, to link the relationships after.
UNWIND $rows AS row
CALL (row) {
  WITH row WHERE row.kind = 'Project'
  MERGE (n:Project {name: row.project})
  WITH n, row, n.active_at AS clock
  SET n += row.props
  // its clock only moves forward (graph/decay.py): an older export's leaves the project's own
  SET n.active_at = CASE WHEN clock IS NOT NULL AND (n.active_at IS NULL OR clock > n.active_at)
                         THEN clock ELSE n.active_at END
  // the sizes and totals it keeps are the export's store's: left unset (read by counting)
  // until the import's end sets them whole, so an import cut short leaves none wrong
  REMOVE n.task_total, n.episode_total, n.error_total, n.error_open
  RETURN n
  UNION ALL
  WITH row WHERE row.kind = 'Episode'
  MERGE (n:Episode {project: row.project, id: row.key})
  SET n += row.props
  // Its title and context vectors live only on EpisodeVector nodes (the text one on both).
  REMOVE n.title_embedding, n.context_embedding
  WITH n, row
  CALL (n, row) {
    // Its vectors, when the export carries them, in the index recall searches.
    UNWIND [{of: 'text', vector: row.props.embedding},
            {of: 'title', vector: row.props.title_embedding},
            {of: 'context', vector: row.props.context_embedding}] AS made
    WITH made WHERE made.vector IS NOT NULL
    MERGE (v:EpisodeVector {project: n.project, episode: n.id, of: made.of})
    SET v.embedding = made.vector
  }
  RETURN n
  UNION ALL
  WITH row WHERE row.kind = 'Task'
  MERGE (n:Task {project: row.project, id: row.key})
  SET n += row.props
  RETURN n
  UNION ALL
  WITH row WHERE row.kind = 'Snippet'
  MERGE (n:Snippet {project: row.project, id: row.key})
  SET n += row.props
  RETURN n
  UNION ALL
  WITH row WHERE row.kind = 'Error'
  MERGE (n:Error {project: row.project, key: row.key})
  SET n += row.props
  RETURN n
  UNION ALL
  WITH row WHERE row.kind = 'Environment'
  MERGE (n:Environment {project: row.project, key: row.key})
  SET n += row.props
  RETURN n
  UNION ALL
  WITH row WHERE row.kind = 'Tool'
  MERGE (n:Tool {project: row.project, name: row.key})
  SET n += row.props
  RETURN n
  UNION ALL
  WITH row WHERE row.kind = 'Package'
  MERGE (n:Package {project: row.project, name: row.key})
  SET n += row.props
  RETURN n
  UNION ALL
  WITH row WHERE row.kind = 'Tag'
  MERGE (n:Tag {project: row.project, name: row.key})
  SET n += row.props
  RETURN n
  UNION ALL
  WITH row WHERE row.kind = 'Symbol'
  MERGE (n:Symbol {project: row.project, name: row.key})
  SET n += row.props
  RETURN n
  UNION ALL
  WITH row WHERE row.kind = 'File'
  MERGE (n:File {project: row.project, path: row.key})
  SET n += row.props
  RETURN n
  UNION ALL
  WITH row WHERE row.kind = 'Pattern'
  MERGE (n:Pattern {project: row.project, id: row.key})
  SET n += row.props
  RETURN n
}
RETURN row.gid AS gid, elementId(n) AS element

// name: import_edges
// mode: write
// Relationships among imported nodes (by element id), merged on their type and, where
// several of a type may join the same two nodes, on the property that tells them apart.
CYPHER 25
UNWIND $rows AS row
MATCH (a) WHERE elementId(a) = row.source
MATCH (b) WHERE elementId(b) = row.target
CALL (a, b, row) {
  WITH a, b, row WHERE row.identity IS NULL
  MERGE (a)-[r:$(row.type)]->(b)
  SET r += row.props
  // a sighting or fix names its error in this project, at its episode's time (an export
  // made before they did, or under another name: schema.cypher hit_sighting)
  WITH a, b, r, row WHERE row.type IN ['HIT', 'RESOLVED']
  SET r.project = b.project, r.error = b.key, r.at = coalesce(r.at, a.created_at)
}
CALL (a, b, row) {
  WITH a, b, row WHERE row.identity IS NOT NULL
  MERGE (a)-[r:$(row.type) {task: row.identity}]->(b)
  SET r += row.props
}

// name: vector_dimension
// mode: read
// The dimension the store's vectors have (what an export's vectors carry).
SHOW VECTOR INDEXES YIELD name, options
WHERE name = 'episode_vectors'
RETURN options.indexConfig['vector.dimensions'] AS dimension
