// Trends for the explorer: an error's sightings per week per project, and the errors that
// first appeared in a window. Values arrive only as parameters.

// name: trend_weeks
// mode: read
// Sightings of the Error nodes $members ({project, key}: an error and its family) per ISO
// week (from Monday 00:00 UTC) and project, inside the window ($since, $until: null is open).
UNWIND $members AS m
MATCH (:Error {project: m.project, key: m.key})<-[:HIT]-(e:Episode {project: m.project})
WHERE e.created_at IS NOT NULL
  AND ($since IS NULL OR e.created_at >= $since) AND ($until IS NULL OR e.created_at < $until)
WITH DISTINCT m.project AS project, e
WITH project, date.truncate('week', e.created_at) AS week, count(e) AS sightings
RETURN project, week, sightings
ORDER BY week, project

// name: trend_new_errors
// mode: read
// The errors of $projects whose first sighting ever falls in the window, newest first, with
// their sightings in the window, their fixes and whether they are open (as explore_errors).
// The first sighting is the one each error keeps (error_counts.cypher): the window is a
// range of the error_first index, and only the first $top are read further (the sightings
// of every error of the projects were read before: 625 ms, 1.8M db hits at 100k). Every
// sighting of an error first seen in the window is in it, up to $until.
UNWIND $projects AS project
MATCH (r:Error {project: project})
USING INDEX SEEK r:Error(project, first_sighting)
WHERE r.first_sighting IS NOT NULL
  AND ($since IS NULL OR r.first_sighting >= $since)
  AND ($until IS NULL OR r.first_sighting < $until)
WITH r, r.first_sighting AS first
ORDER BY first DESC, r.project, r.key
LIMIT $top
CALL (r) {
  OPTIONAL MATCH (r)<-[:HIT]-(e:Episode {project: r.project})
  WHERE ($until IS NULL OR e.created_at < $until)
  RETURN count(e) AS sightings, count(DISTINCT e.task_id) AS tasks, max(e.created_at) AS last
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
ORDER BY first DESC, project, key
