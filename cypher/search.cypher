// Search for the explorer: errors by their keys (what a pasted text signs to) and the
// episodes a text finds in the full-text index, inside the projects given. Values arrive
// only as parameters.

// name: search_errors
// mode: read
// The errors among $members ({project, key}) with all their sightings, their fixes and
// whether they are open (never fixed, or sighted after their last fix), as explore_errors
// counts them.
UNWIND $members AS m
MATCH (r:Error {project: m.project, key: m.key})
CALL (r) {
  OPTIONAL MATCH (r)<-[:HIT]-(e:Episode {project: r.project})
  RETURN count(e) AS sightings, count(DISTINCT e.task_id) AS tasks,
         min(e.created_at) AS first, max(e.created_at) AS last
}
CALL (r) {
  CALL (r) {
    MATCH (:Snippet {project: r.project})-[f:FIXES]->(r)
    RETURN f.episode AS episode, f.at AS at
    UNION
    MATCH (e:Episode {project: r.project})-[:RESOLVED]->(r)
    RETURN e.id AS episode, e.created_at AS at
  }
  RETURN count(DISTINCT episode) AS fixes, max(at) AS fixed_at
}
RETURN r.project AS project, r.key AS key, r.kind AS kind, r.category AS category,
       r.signature AS signature, r.template AS template, sightings, tasks, first, last,
       fixes, fixed_at, fixed_at IS NULL OR (last IS NOT NULL AND last > fixed_at) AS open
ORDER BY sightings DESC, project, key

// name: search_episodes
// mode: read
// The episodes of $projects ($projects null: the caller may read every project) that the
// Lucene query $text finds, best first, with the errors each hit.
CALL db.index.fulltext.queryNodes('episode_text', $text, {limit: $fetch}) YIELD node AS e, score
WITH e, score
WHERE e.id IS NOT NULL AND ($projects IS NULL OR e.project IN $projects)
WITH e, score ORDER BY score DESC, e.project, e.id LIMIT $first
OPTIONAL MATCH (e)-[:HIT]->(r:Error {project: e.project})
WITH e, score, [k IN collect(r.key) WHERE k IS NOT NULL] AS errors
RETURN {project: e.project, id: e.id, created_at: e.created_at, step: e.step,
        task_id: e.task_id, summary: e.summary, outcome: e.outcome, kind: e.kind,
        action_command: e.action_command} AS episode, score, errors
ORDER BY score DESC, episode.project, episode.id
