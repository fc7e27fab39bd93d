// Forgetting, on request: a memory, a task, or a whole project, with their links and what
// was derived from them.

// name: forget_project
// mode: batch
// Every node of the project, detached, in batches: a large project must not need one
// huge transaction. Runs as an implicit transaction (CALL ... IN TRANSACTIONS).
CALL () {
  MATCH (n:Episode {project: $project}) RETURN n
  UNION MATCH (n:Task {project: $project}) RETURN n
  UNION MATCH (n:Snippet {project: $project}) RETURN n
  UNION MATCH (n:Error {project: $project}) RETURN n
  UNION MATCH (n:ErrorFamily {project: $project}) RETURN n
  UNION MATCH (n:Environment {project: $project}) RETURN n
  UNION MATCH (n:Tool {project: $project}) RETURN n
  UNION MATCH (n:Package {project: $project}) RETURN n
  UNION MATCH (n:Tag {project: $project}) RETURN n
  UNION MATCH (n:Symbol {project: $project}) RETURN n
  UNION MATCH (n:Pattern {project: $project}) RETURN n
  UNION MATCH (n:EpisodeVector {project: $project}) RETURN n
  UNION MATCH (n:File {project: $project}) RETURN n
  UNION MATCH (n:Verdict {project: $project}) RETURN n
  UNION MATCH (n:OutcomeReport {project: $project}) RETURN n
  UNION MATCH (n:Project {name: $project}) RETURN n
}
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS
RETURN count(*) AS deleted

// name: task_episode_ids
// mode: read
// A task's episodes, to forget with it (no row: no such task).
MATCH (t:Task {project: $project, id: $id})
RETURN [(t)-[:HAS_EPISODE]->(e:Episode {project: $project}) | e.id] AS ids

// ---------------------------------------------------------------- forgetting that is complete
// ingest/forgetting.py: what forgetting episodes leaves behind is repaired, so their text is
// nowhere in the project afterwards (neighbours' context, patterns, error samples, reports).

// name: forget_footprint
// mode: read
// What the episodes touch besides themselves: their tasks, the patterns that summarize them,
// the errors they hit or resolved, the snippets they made or used, the tools they used.
UNWIND $ids AS id
MATCH (e:Episode {project: $project, id: id})
RETURN collect(DISTINCT e.task_id) AS tasks,
       COLLECT { UNWIND $ids AS i MATCH (p:Pattern {project: $project})-[:SUMMARIZES]->(:Episode {project: $project, id: i})
                 RETURN DISTINCT p.id } AS patterns,
       COLLECT { UNWIND $ids AS i MATCH (:Episode {project: $project, id: i})-[:HIT|RESOLVED]->(r:Error {project: $project})
                 RETURN DISTINCT r.key } AS errors,
       COLLECT { UNWIND $ids AS i MATCH (:Episode {project: $project, id: i})-[:GENERATED|USED|MODIFIED]->(s:Snippet {project: $project})
                 RETURN DISTINCT s.id } AS snippets,
       COLLECT { UNWIND $ids AS i MATCH (:Episode {project: $project, id: i})-[:USED_TOOL]->(t:Tool {project: $project})
                 RETURN DISTINCT t.name } AS tools

// name: forget_episodes
// mode: write
// The episodes, the reports about them, the reports their own runs made about snippets (the
// bridge: `bridge:<episode>:…`), and the FIXES their runs derived; other episodes no longer
// point at them (resolved_by, duplicate_of: a duplicate becomes its own again, for maintain).
UNWIND $ids AS id
MATCH (e:Episode {project: $project, id: id})
CALL (e) {
  OPTIONAL MATCH (o:OutcomeReport)-[:ABOUT]->(e)
  DETACH DELETE o
}
CALL (e) {
  OPTIONAL MATCH (o:OutcomeReport {project: e.project})-[:ABOUT]->(:Snippet)
  WHERE o.applied_in = e.id AND o.key STARTS WITH 'bridge:' + e.id + ':'
  DETACH DELETE o
}
CALL (e) {
  OPTIONAL MATCH (e)-[:GENERATED|USED|MODIFIED]->(s:Snippet)-[f:FIXES]->()
  WHERE f.episode = e.id
  DELETE f
}
CALL (e) {
  OPTIONAL MATCH (x:Episode {project: e.project})-[:RESOLVED_BY]->(e)
  SET x.resolution = null, x.resolved_by = null
}
CALL (e) {
  OPTIONAL MATCH (d:Episode {project: e.project})-[:DUPLICATE_OF]->(e)
  SET d.duplicate_of = null, d.consolidated = null
}
CALL (e) {
  OPTIONAL MATCH (v:EpisodeVector {project: e.project, episode: e.id})
  DELETE v
}
DETACH DELETE e
// the project's kept size (write.cypher upsert_projects)
WITH count(*) AS deleted
OPTIONAL MATCH (p:Project {name: $project})
SET p.episode_total = p.episode_total - deleted
RETURN deleted

// name: forget_tasks
// mode: write
// Tasks whose episodes were all forgotten, and the FIXES derived from them.
UNWIND $ids AS id
MATCH (t:Task {project: $project, id: id})
CALL (t) {
  OPTIONAL MATCH (s:Snippet)-[f:FIXES]->()
  WHERE f.task = t.id AND s.project = t.project
  DELETE f
}
DETACH DELETE t
// the project's kept size (write.cypher upsert_projects)
WITH count(*) AS deleted
OPTIONAL MATCH (p:Project {name: $project})
SET p.task_total = p.task_total - deleted
RETURN deleted

// name: clear_lonely_context
// mode: write
// A task left with one step has no neighbourhood: its context (the neighbours' summaries and
// vectors) goes.
UNWIND $tasks AS key
MATCH (t:Task {project: key.project, id: key.id})-[:HAS_EPISODE]->(e:Episode {project: key.project})
WITH t, collect(e) AS steps
WHERE size(steps) < 2
UNWIND steps AS e
SET e.context_text = null
WITH e
OPTIONAL MATCH (v:EpisodeVector {project: e.project, episode: e.id, of: 'context'})
DELETE v

// name: forget_orphan_errors
// mode: write
// Errors no remaining episode hit or resolved go (what FIXES them too), and families left
// without a member. The project's kept totals lose what they counted them as
// (cypher/error_counts.cypher).
UNWIND $keys AS key
MATCH (r:Error {project: $project, key: key})
WHERE NOT EXISTS { (:Episode)-[:HIT|RESOLVED]->(r) }
WITH collect(DISTINCT r) AS gone
CALL (gone) {
  UNWIND gone AS r
  WITH count(r.tallied) AS counted, sum(coalesce(r.tallied, 0)) AS open
  MATCH (p:Project {name: $project})
  WHERE counted > 0
  SET p.error_total = p.error_total - counted, p.error_open = p.error_open - open
}
UNWIND gone AS r
WITH r, r.family AS family
DETACH DELETE r
WITH DISTINCT family WHERE family IS NOT NULL
MATCH (f:ErrorFamily {project: $project, id: family})
WHERE NOT EXISTS { MATCH (m:Error {project: $project}) WHERE m.family = family }
DETACH DELETE f

// name: error_sample_sources
// mode: read
// For each error still hit: the earliest remaining episode that hit it, with the texts
// ingest finds errors in.
UNWIND $keys AS key
MATCH (r:Error {project: $project, key: key})<-[:HIT]-(e:Episode {project: $project})
WITH r, e ORDER BY e.created_at, e.id
WITH r, head(collect(e)) AS e
RETURN r.key AS key, r.kind AS kind, e.error_text AS error_text, e.observation AS observation

// name: set_error_samples
// mode: write
UNWIND $rows AS row
MATCH (r:Error {project: $project, key: row.key})
SET r.sample = row.sample

// name: pattern_member_vectors
// mode: read
UNWIND $ids AS id
MATCH (p:Pattern {project: $project, id: id})-[:SUMMARIZES]->(e:Episode)
WHERE e.embedding IS NOT NULL
RETURN p.id AS id, collect(e.embedding) AS vectors

// name: set_pattern_embedding
// mode: write
UNWIND $rows AS row
MATCH (p:Pattern {project: $project, id: row.id})
SET p.embedding = row.embedding
