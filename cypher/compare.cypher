// Compare for the explorer: the errors two or more projects share (the same key: the same
// signature), each project's side of them — sightings, fixes and attempts on evidence
// (graph/lineage/attribution.py) — and the sightings after a fix. Values arrive only as
// parameters.

// name: compare_shared
// mode: read
// The errors sighted in two or more of $projects, the most widespread then the most sighted
// first: `shared` counts them all, at most $first come back as `rows`, one a project that
// sighted it (in the order of the errors), each with its sightings, its fixes as
// explore_errors counts them (RESOLVED {kind: 'fixed'}; a workaround removed no cause), and
// at most $side of its fixes and workarounds (RESOLVED) and of its attempts (ATTEMPTED: a
// step acted on it and did not end it), oldest first, each with its rule and why.
UNWIND $projects AS project
MATCH (r:Error {project: project})
WHERE r.key IS NOT NULL AND EXISTS { (r)<-[:HIT]-(:Episode {project: project}) }
WITH r.key AS key, collect(r) AS nodes
WHERE size(nodes) > 1
CALL (nodes) {
  UNWIND nodes AS r
  MATCH (r)<-[:HIT]-(e:Episode {project: r.project})
  RETURN count(e) AS total
}
WITH key, nodes, total ORDER BY size(nodes) DESC, total DESC, key
WITH collect({key: key, nodes: nodes}) AS found
WITH size(found) AS shared, found[..$first] AS page
CALL (page) {
  UNWIND range(0, size(page) - 1) AS i
  UNWIND page[i].nodes AS r
  CALL (r) {
    MATCH (r)<-[:HIT]-(e:Episode {project: r.project})
    RETURN count(e) AS sightings, count(DISTINCT e.task_id) AS tasks,
           min(e.created_at) AS first, max(e.created_at) AS last
  }
  CALL (r) {
    OPTIONAL MATCH (f:Episode {project: r.project})-[l:RESOLVED]->(r)
    WHERE l.kind = 'fixed'
    RETURN count(DISTINCT f) AS fixes, max(f.created_at) AS fixed_at,
           min(f.created_at) AS first_fixed_at
  }
  WITH i, r, sightings, tasks, first, last, fixes, fixed_at, first_fixed_at
  ORDER BY i, r.project
  RETURN collect({
    project: r.project, key: r.key, kind: r.kind, category: r.category,
    signature: r.signature, template: r.template, sightings: sightings, tasks: tasks,
    first: first, last: last, fixes: fixes, fixed_at: fixed_at, first_fixed_at: first_fixed_at,
    open: fixed_at IS NULL OR (last IS NOT NULL AND last > fixed_at),
    workarounds: COUNT { (:Episode {project: r.project})-[:RESOLVED {kind: 'workaround'}]->(r) },
    attempt_count: COUNT { (:Episode {project: r.project})-[:ATTEMPTED]->(r) },
    dealt: COLLECT {
      MATCH (f:Episode {project: r.project})-[l:RESOLVED]->(r)
      WHERE l.kind IS NOT NULL
      WITH f, l ORDER BY f.created_at, f.id LIMIT $side
      RETURN {episode: f {.id, .project, created_at: toString(f.created_at), .step, .task_id,
                          .summary, .outcome, .kind, .action_command, .time_estimated},
              kind: l.kind, rule: l.rule, why: l.why, confidence: l.confidence} AS fix
    },
    attempts: COLLECT {
      MATCH (a:Episode {project: r.project})-[l:ATTEMPTED]->(r)
      WITH a, l ORDER BY a.created_at, a.id LIMIT $side
      RETURN {episode: a {.id, .project, created_at: toString(a.created_at), .step, .task_id,
                          .summary, .outcome, .kind, .action_command, .time_estimated},
              kind: 'attempt', rule: l.rule, why: l.why, confidence: l.confidence} AS attempt
    }
  }) AS rows
}
RETURN shared, rows

// name: compare_after_fix
// mode: read
// For each $rows {project, key, own, elsewhere} (own: the project's first fix of the error;
// elsewhere: the first fix in another project compared): the sightings after its own first
// fix (recurrences), and those before any fix of its own that came after a fix elsewhere
// (the fix was known, in a project compared, and not carried over).
UNWIND $rows AS row
MATCH (r:Error {project: row.project, key: row.key})
CALL (r, row) {
  MATCH (r)<-[:HIT]-(e:Episode {project: r.project})
  RETURN count(CASE WHEN row.own IS NOT NULL AND e.created_at > row.own THEN 1 END)
           AS recurrences,
         count(CASE WHEN row.elsewhere IS NOT NULL AND e.created_at > row.elsewhere
                     AND (row.own IS NULL OR e.created_at <= row.own) THEN 1 END)
           AS after_fix_elsewhere
}
RETURN row.project AS project, row.key AS key, recurrences, after_fix_elsewhere
