// What the `errors` pages rank by, kept on each Error node so a page reads the nodes and
// not every sighting: `sightings` (episodes that hit it), `tasks` (distinct tasks of those
// episodes), `first_sighting` / `last_sighting` (their earliest and latest created_at),
// `fixes` (episodes that fixed it: RESOLVED {kind: 'fixed'}) and `fixed_at` (the latest).
// Kept at write time by `link_errors` (one new sighting at a time, at the cost of the
// task's steps, never of the error's sightings) and `recount_error_fixes` (after the
// attribution links); recounted whole by `recount_errors` where sightings go (an episode
// recorded again, forgetting) and by migration 7 for stores written before.

// name: link_errors
// mode: write
// An episode's error: linked once, the error's counts moved by this one sighting. Each row
// in its own subquery, so a row sees the links the rows before it made (a task's second
// episode hitting the same error in one batch is not a second task).
CYPHER replan=skip
UNWIND $rows AS row
CALL (row) {
  MATCH (e:Episode {project: row.project, id: row.episode_id})
  MATCH (r:Error {project: row.project, key: row.key})
  WHERE NOT EXISTS { (e)-[:HIT]->(r) }
  OPTIONAL MATCH (t:Task {project: e.project, id: e.task_id})
  // read from the task's side: a task has few steps, an error may have millions of sightings
  WITH e, r, t IS NOT NULL
             AND NOT r.key IN COLLECT { MATCH (t)-[:HAS_EPISODE]->(:Episode)-[:HIT]->(x:Error)
                                        RETURN x.key } AS new_task
  // the error and the episode's time on the link: read newest first (schema.cypher hit_sighting)
  CREATE (e)-[:HIT {project: r.project, error: r.key, at: e.created_at}]->(r)
  SET r.sightings = coalesce(r.sightings, 0) + 1,
      r.tasks = coalesce(r.tasks, 0) + CASE WHEN new_task THEN 1 ELSE 0 END,
      r.first_sighting = CASE WHEN r.first_sighting IS NULL OR e.created_at < r.first_sighting
                              THEN e.created_at ELSE r.first_sighting END,
      r.last_sighting = CASE WHEN r.last_sighting IS NULL OR e.created_at > r.last_sighting
                             THEN e.created_at ELSE r.last_sighting END
}

// name: unlink_replaced_errors
// mode: write
// An episode recorded again with other content: its sightings go (`link_errors` adds the
// new content's), and the errors it hit are recounted whole without them.
CYPHER replan=skip
UNWIND $rows AS row
MATCH (e:Episode {project: row.project, id: row.id})
CALL (e) {
  MATCH (e)-[h:HIT]->(r:Error)
  DELETE h
  WITH DISTINCT r
  CALL (r) {
    OPTIONAL MATCH (r)<-[:HIT]-(s:Episode {project: r.project})
    RETURN count(s) AS sightings, count(DISTINCT s.task_id) AS tasks,
           min(s.created_at) AS first, max(s.created_at) AS last
  }
  SET r.sightings = sightings, r.tasks = tasks, r.first_sighting = first,
      r.last_sighting = last
}

// name: recount_errors
// mode: write
// The counts of these errors recounted from their sightings and fixes (after forgetting).
CYPHER replan=skip
UNWIND $rows AS row
MATCH (r:Error {project: row.project, key: row.key})
CALL (r) {
  OPTIONAL MATCH (r)<-[:HIT]-(s:Episode {project: r.project})
  RETURN count(s) AS sightings, count(DISTINCT s.task_id) AS tasks,
         min(s.created_at) AS first, max(s.created_at) AS last
}
CALL (r) {
  OPTIONAL MATCH (:Episode {project: r.project})-[l:RESOLVED {kind: 'fixed'}]->(r)
  RETURN count(l) AS fixes, max(l.at) AS fixed_at
}
SET r.sightings = sightings, r.tasks = tasks, r.first_sighting = first,
    r.last_sighting = last, r.fixes = fixes, r.fixed_at = fixed_at
RETURN count(r) AS recounted

// name: recount_error_fixes
// mode: write
// The fixes of these errors recounted after their tasks' links were derived again: at the
// cost of the error's RESOLVED links (its fixes and workarounds), not of its sightings.
CYPHER replan=skip
UNWIND $rows AS row
MATCH (r:Error {project: row.project, key: row.key})
CALL (r) {
  OPTIONAL MATCH (:Episode {project: r.project})-[l:RESOLVED {kind: 'fixed'}]->(r)
  RETURN count(l) AS fixes, max(l.at) AS fixed_at
}
SET r.fixes = fixes, r.fixed_at = fixed_at

// name: migrate_error_counts
// mode: batch
// Migration 7: the counts of every error of a store written before they were kept.
MATCH (r:Error)
CALL (r) {
  CALL (r) {
    OPTIONAL MATCH (r)<-[:HIT]-(s:Episode {project: r.project})
    RETURN count(s) AS sightings, count(DISTINCT s.task_id) AS tasks,
           min(s.created_at) AS first, max(s.created_at) AS last
  }
  CALL (r) {
    OPTIONAL MATCH (:Episode {project: r.project})-[l:RESOLVED {kind: 'fixed'}]->(r)
    RETURN count(l) AS fixes, max(l.at) AS fixed_at
  }
  SET r.sightings = sightings, r.tasks = tasks, r.first_sighting = first,
      r.last_sighting = last, r.fixes = fixes, r.fixed_at = fixed_at
} IN TRANSACTIONS OF 500 ROWS
RETURN count(*) AS errors_counted
