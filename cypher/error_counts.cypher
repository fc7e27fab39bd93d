// What the `errors` pages rank by, kept on each Error node so a page reads the nodes and
// not every sighting: `sightings` (episodes that hit it), `tasks` (distinct tasks of those
// episodes), `first_sighting` / `last_sighting` (their earliest and latest created_at),
// `fixes` (episodes that fixed it: RESOLVED {kind: 'fixed'}) and `fixed_at` (the latest).
// Kept at write time by `link_errors` (one new sighting at a time, at the cost of the
// task's steps, never of the error's sightings) and `recount_error_fixes` (after the
// attribution links); recounted whole by `recount_errors` where sightings go (an episode
// recorded again, forgetting) and by migration 7 for stores written before.
//
// Each project keeps the totals of its `errors` list on its Project node: `error_total`
// (its errors) and `error_open` (those open: never fixed, or sighted after the last fix).
// An error says what it counts as there in `tallied` (1 open, 0 closed, null: not counted
// yet); every statement that creates an error or moves its sightings or fixes settles the
// errors it touched (a changed `tallied` moves the totals by the difference), and
// `forget_orphan_errors` takes an error out before it goes. A project's totals are set
// whole by `recount_error_totals` (an import), `migrate_error_totals` (migration 11, the
// bulk load) and by `upsert_projects` (write.cypher) at the first write to a project
// without them; until then (null) they are not moved and the page counts the project's
// errors instead (explore.cypher explore_errors_by_count).

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
  RETURN r
}
WITH collect(DISTINCT r) AS touched
CALL (touched) {
  // the project's kept totals (error_total, error_open) moved by these errors' open state
  UNWIND touched AS r
  WITH r, r.tallied AS was,
       CASE WHEN r.fixed_at IS NULL OR coalesce(r.last_sighting > r.fixed_at, false)
            THEN 1 ELSE 0 END AS open
  WHERE was IS NULL OR was <> open
  SET r.tallied = open
  WITH r.project AS project, sum(CASE WHEN was IS NULL THEN 1 ELSE 0 END) AS added,
       sum(open - coalesce(was, 0)) AS opened
  MATCH (p:Project {name: project})
  SET p.error_total = p.error_total + added, p.error_open = p.error_open + opened
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
  RETURN r
}
WITH collect(DISTINCT r) AS touched
CALL (touched) {
  // the project's kept totals (error_total, error_open) moved by these errors' open state
  UNWIND touched AS r
  WITH r, r.tallied AS was,
       CASE WHEN r.fixed_at IS NULL OR coalesce(r.last_sighting > r.fixed_at, false)
            THEN 1 ELSE 0 END AS open
  WHERE was IS NULL OR was <> open
  SET r.tallied = open
  WITH r.project AS project, sum(CASE WHEN was IS NULL THEN 1 ELSE 0 END) AS added,
       sum(open - coalesce(was, 0)) AS opened
  MATCH (p:Project {name: project})
  SET p.error_total = p.error_total + added, p.error_open = p.error_open + opened
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
WITH collect(DISTINCT r) AS touched
CALL (touched) {
  // the project's kept totals (error_total, error_open) moved by these errors' open state
  UNWIND touched AS r
  WITH r, r.tallied AS was,
       CASE WHEN r.fixed_at IS NULL OR coalesce(r.last_sighting > r.fixed_at, false)
            THEN 1 ELSE 0 END AS open
  WHERE was IS NULL OR was <> open
  SET r.tallied = open
  WITH r.project AS project, sum(CASE WHEN was IS NULL THEN 1 ELSE 0 END) AS added,
       sum(open - coalesce(was, 0)) AS opened
  MATCH (p:Project {name: project})
  SET p.error_total = p.error_total + added, p.error_open = p.error_open + opened
}
RETURN size(touched) AS recounted

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
WITH collect(DISTINCT r) AS touched
CALL (touched) {
  // the project's kept totals (error_total, error_open) moved by these errors' open state
  UNWIND touched AS r
  WITH r, r.tallied AS was,
       CASE WHEN r.fixed_at IS NULL OR coalesce(r.last_sighting > r.fixed_at, false)
            THEN 1 ELSE 0 END AS open
  WHERE was IS NULL OR was <> open
  SET r.tallied = open
  WITH r.project AS project, sum(CASE WHEN was IS NULL THEN 1 ELSE 0 END) AS added,
       sum(open - coalesce(was, 0)) AS opened
  MATCH (p:Project {name: project})
  SET p.error_total = p.error_total + added, p.error_open = p.error_open + opened
}

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

// name: recount_error_totals
// mode: write
// A project's totals set whole from its errors, each settled again (an import: the nodes
// it wrote carry the totals and `tallied` of the store they came from).
CALL () {
  MATCH (r:Error {project: $project})
  WHERE r.key IS NOT NULL
  SET r.tallied = CASE WHEN r.fixed_at IS NULL OR coalesce(r.last_sighting > r.fixed_at, false)
                       THEN 1 ELSE 0 END
  RETURN count(r) AS total, sum(r.tallied) AS open
}
MATCH (p:Project {name: $project})
SET p.error_total = total, p.error_open = open
RETURN total, open

// name: migrate_error_totals
// mode: batch
// Migration 11 (and the bulk load, after the counts): every error settled, then each
// project's totals set whole from its errors.
MATCH (r:Error)
CALL (r) {
  SET r.tallied = CASE WHEN r.fixed_at IS NULL OR coalesce(r.last_sighting > r.fixed_at, false)
                       THEN 1 ELSE 0 END
} IN TRANSACTIONS OF 5000 ROWS
WITH count(*) AS errors
MATCH (p:Project)
CALL (p) {
  CALL (p) {
    MATCH (r:Error {project: p.name})
    WHERE r.key IS NOT NULL
    RETURN count(r) AS total, sum(coalesce(r.tallied, 0)) AS open
  }
  SET p.error_total = total, p.error_open = open
} IN TRANSACTIONS OF 100 ROWS
RETURN errors AS errors_tallied, count(*) AS projects_tallied

// name: migrate_project_sizes
// mode: batch
// Each project's kept sizes (write.cypher upsert_projects) set whole: migration 12 and the
// bulk load, after its derive ($project null: every project); an import, its own project
// (its tasks and episodes were merged without being counted).
MATCH (p:Project) WHERE $project IS NULL OR p.name = $project
CALL (p) {
  SET p.task_total = COUNT { MATCH (t:Task {project: p.name}) WHERE t.id IS NOT NULL },
      p.episode_total = COUNT { MATCH (e:Episode {project: p.name}) WHERE e.id IS NOT NULL }
} IN TRANSACTIONS OF 100 ROWS
RETURN count(*) AS projects_sized
