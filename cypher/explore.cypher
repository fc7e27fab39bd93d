// Browsing the graph: errors by count, recency or open state; one error, one task, any node
// and its neighbourhood. Every query names its projects; values arrive only as parameters.

// name: explore_projects
// mode: read
// The projects a caller may read ($readable null: every project), with their sizes: those
// kept on the Project node (write.cypher upsert_projects, error_counts.cypher), counted only
// for a project whose node has none yet (283 ms at 1M episodes when every call counted).
MATCH (p:Project)
WHERE $readable IS NULL OR p.name IN $readable
RETURN p.name AS name, p.created_at AS created_at,
       CASE WHEN p.task_total IS NULL
            THEN COUNT { MATCH (t:Task {project: p.name}) WHERE t.id IS NOT NULL }
            ELSE p.task_total END AS tasks,
       CASE WHEN p.episode_total IS NULL
            THEN COUNT { MATCH (e:Episode {project: p.name}) WHERE e.id IS NOT NULL }
            ELSE p.episode_total END AS episodes,
       CASE WHEN p.error_total IS NULL
            THEN COUNT { MATCH (r:Error {project: p.name}) WHERE r.key IS NOT NULL }
            ELSE p.error_total END AS errors
ORDER BY name

// name: explore_errors
// mode: read
// Errors of the projects with their sightings in a window ($since, $until: one may be null)
// and their fixes, ranked by $order (COUNT: most sightings; UNRESOLVED: the same, open ones
// only — never fixed, or sighted again after their last fix; RECENT: latest sighting), then
// project and key. Keyset pagination: $after holds the rank, project and key of the last row
// seen. A window counts the sightings in it, of every error of the projects; without one the
// page reads the counts kept on the nodes in index order (explore_errors_by_count, _recent).
UNWIND $projects AS project
MATCH (r:Error {project: project})
WHERE r.key IS NOT NULL
CALL (r) {
  OPTIONAL MATCH (r)<-[:HIT]-(e:Episode {project: r.project})
  WHERE ($since IS NULL OR e.created_at >= $since) AND ($until IS NULL OR e.created_at < $until)
  RETURN count(e) AS sightings, count(DISTINCT e.task_id) AS tasks,
         min(e.created_at) AS first, max(e.created_at) AS last
}
WITH r, sightings, tasks, first, last, coalesce(r.fixes, 0) AS fixes, r.fixed_at AS fixed_at
WHERE sightings > 0
WITH r, sightings, tasks, first, last, fixes, fixed_at,
     fixed_at IS NULL OR (last IS NOT NULL AND last > fixed_at) AS open
WHERE $order <> 'UNRESOLVED' OR open
WITH r, sightings, tasks, first, last, fixes, fixed_at, open,
     CASE $order WHEN 'RECENT' THEN coalesce(last.epochMillis, -1) ELSE sightings END AS rank
ORDER BY rank DESC, r.project, r.key
// The texts (kind, category, signature, template) are read for the page's rows only.
WITH collect({rank: rank, project: r.project, key: r.key, node: r, sightings: sightings,
              tasks: tasks, first: first, last: last, fixes: fixes, fixed_at: fixed_at,
              open: open}) AS rows
WITH size(rows) AS total,
     [x IN rows WHERE $after IS NULL OR x.rank < $after.rank
        OR (x.rank = $after.rank AND (x.project > $after.project
            OR (x.project = $after.project AND x.key > $after.key)))][..$first + 1] AS page
RETURN total,
       [x IN page | {rank: x.rank, project: x.project, key: x.key, kind: x.node.kind,
                     category: x.node.category, signature: x.node.signature,
                     template: x.node.template, sightings: x.sightings, tasks: x.tasks,
                     first: x.first, last: x.last, fixes: x.fixes, fixed_at: x.fixed_at,
                     open: x.open}] AS page

// name: explore_errors_by_count
// mode: read
// The page without a window by most sightings (COUNT; UNRESOLVED: $open_only, the open ones
// only), read from the counts kept on the Error nodes (cypher/error_counts.cypher) in the
// order of the index error_rank_count (project, sightings, key) and stopped after $first + 1
// rows in each project: the page costs its rows, not the project's errors. Read downwards
// the index gives a rank's keys last first, so the rank the page may cut (the edge: the
// lowest read) is read again upwards, by key. Ranks are whole: the cursor's rank is read
// whole in the projects after the cursor's (below: its rank + 1), from its key on in its
// own. Errors of rank 0 (no sighting kept: 0, or not counted) end every list: read by key
// from the project's errors, only when its ranked ones end on this page. The rows merge
// across the projects in the list's order (rank desc, project, key, as explore_errors).
// A read not needed seeks a null project (nothing). Each names its index and orders by the
// index's whole key (the project's too), so that the index gives the order and the read
// stops at the LIMIT: a small store's statistics must not plan a scan and a sort instead.
// The total is the project's kept totals (its Project node's error_total, or error_open for
// UNRESOLVED: cypher/error_counts.cypher), one read whatever the errors; a project without
// them counts its errors in error_key's index (no property read), UNRESOLVED taking away
// the closed ones (fixed, not sighted since): error_fixed, the fixed errors only.
UNWIND $projects AS project
WITH project,
     CASE WHEN $after IS NULL THEN 9223372036854775807
          WHEN project > $after.project THEN $after.rank + 1 ELSE $after.rank END AS below,
     CASE WHEN project = $after.project AND $after.rank > 0 THEN project END AS same_of
CALL (same_of) {
  MATCH (r:Error {project: same_of})
  USING INDEX SEEK r:Error(project, sightings, key)
  WHERE r.sightings = $after.rank AND r.key > $after.key
    AND (NOT $open_only OR r.fixed_at IS NULL OR r.last_sighting > r.fixed_at)
  WITH r ORDER BY r.project, r.sightings, r.key LIMIT $first + 1
  RETURN collect(r) AS same
}
CALL (project, below) {
  MATCH (r:Error {project: project})
  USING INDEX SEEK r:Error(project, sightings, key)
  WHERE r.sightings > 0 AND r.sightings < below AND r.key IS NOT NULL
    AND (NOT $open_only OR r.fixed_at IS NULL OR r.last_sighting > r.fixed_at)
  WITH r ORDER BY r.project DESC, r.sightings DESC, r.key DESC LIMIT $first + 1
  RETURN collect(r) AS scanned
}
WITH project, same, scanned, last(scanned).sightings AS edge
WITH project, same, edge, [r IN scanned WHERE r.sightings > edge | r] AS above
WITH project, same, above, edge,
     CASE WHEN size(same) + size(above) <= $first THEN project END AS edge_of
CALL (edge_of, edge) {
  MATCH (r:Error {project: edge_of})
  USING INDEX SEEK r:Error(project, sightings, key)
  WHERE r.sightings = edge AND r.key IS NOT NULL
    AND (NOT $open_only OR r.fixed_at IS NULL OR r.last_sighting > r.fixed_at)
  WITH r ORDER BY r.project, r.sightings, r.key LIMIT $first + 1
  RETURN collect(r) AS at_edge
}
CALL (above) {
  UNWIND above AS r
  WITH r ORDER BY r.sightings DESC, r.key
  RETURN collect(r) AS whole
}
WITH project, (same + whole + at_edge)[..$first + 1] AS ranked
WITH project, ranked,
     CASE WHEN size(ranked) <= $first
               AND ($after IS NULL OR $after.rank > 0 OR project >= $after.project)
          THEN project END AS unranked_of
CALL (project, unranked_of) {
  MATCH (r:Error {project: unranked_of})
  USING INDEX SEEK r:Error(project, key)
  WHERE r.key IS NOT NULL AND coalesce(r.sightings, 0) = 0
    AND ($after IS NULL OR $after.rank > 0 OR project > $after.project OR r.key > $after.key)
    AND (NOT $open_only OR r.fixed_at IS NULL OR r.last_sighting > r.fixed_at)
  WITH r ORDER BY r.project, r.key LIMIT $first + 1
  RETURN collect(r) AS unranked
}
CALL (project) {
  OPTIONAL MATCH (p:Project {name: project})
  RETURN CASE WHEN $open_only THEN p.error_open ELSE p.error_total END AS kept
}
WITH project, ranked, unranked, kept, CASE WHEN kept IS NULL THEN project END AS count_of
CALL (count_of) {
  MATCH (r:Error {project: count_of})
  USING INDEX SEEK r:Error(project, key)
  WHERE r.key IS NOT NULL
  RETURN count(r) AS errors
}
CALL (count_of) {
  WITH CASE WHEN $open_only THEN count_of END AS fixed_of
  MATCH (r:Error {project: fixed_of})
  USING INDEX SEEK r:Error(project, fixed_at)
  WHERE r.fixed_at IS NOT NULL AND r.key IS NOT NULL
    AND NOT coalesce(r.last_sighting > r.fixed_at, false)
  RETURN count(r) AS closed
}
WITH sum(coalesce(kept, errors - closed)) AS total, collect(ranked + unranked) AS lists
CALL (lists) {
  UNWIND lists AS rows
  UNWIND rows AS r
  WITH r, coalesce(r.sightings, 0) AS rank ORDER BY rank DESC, r.project, r.key
  LIMIT $first + 1
  RETURN collect(r {rank: rank, .project, .key, .kind, .category, .signature, .template,
                    sightings: coalesce(r.sightings, 0), tasks: coalesce(r.tasks, 0),
                    first: r.first_sighting, last: r.last_sighting,
                    fixes: coalesce(r.fixes, 0), fixed_at: r.fixed_at,
                    open: r.fixed_at IS NULL
                          OR (r.last_sighting IS NOT NULL AND r.last_sighting > r.fixed_at)})
         AS page
}
RETURN total, page

// name: explore_errors_by_recent
// mode: read
// The page without a window by latest sighting (RECENT), as explore_errors_by_count but in
// the order of the index error_rank_recent (project, last_sighting, key): the rank is the
// last sighting's epoch millisecond, so a rank is the range [ms, ms + 1) of the index, and
// the rank the page may cut is read again by key (the few errors last sighted in that ms).
// Errors never sighted (rank -1) end every list. Each datetime is built from a value that
// is never null (the planner may build it before the row that guards it is filtered).
UNWIND $projects AS project
WITH project,
     CASE WHEN $after IS NULL THEN datetime('9999-12-31T23:59:59.999Z')
          WHEN project > $after.project THEN datetime({epochMillis: coalesce($after.rank, 0) + 1})
          ELSE datetime({epochMillis: coalesce($after.rank, 0)}) END AS before,
     CASE WHEN project = $after.project AND $after.rank >= 0 THEN project END AS same_of
CALL (same_of) {
  MATCH (r:Error {project: same_of})
  USING INDEX SEEK r:Error(project, last_sighting, key)
  WHERE r.last_sighting >= datetime({epochMillis: coalesce($after.rank, 0)})
    AND r.last_sighting < datetime({epochMillis: coalesce($after.rank, 0) + 1})
    AND r.key > $after.key
  WITH r ORDER BY r.key LIMIT $first + 1
  RETURN collect(r) AS same
}
CALL (project, before) {
  MATCH (r:Error {project: project})
  USING INDEX SEEK r:Error(project, last_sighting, key)
  WHERE r.last_sighting < before AND r.key IS NOT NULL
  WITH r ORDER BY r.project DESC, r.last_sighting DESC, r.key DESC LIMIT $first + 1
  RETURN collect(r) AS scanned
}
WITH project, same, scanned, last(scanned).last_sighting.epochMillis AS edge
WITH project, same, edge, [r IN scanned WHERE r.last_sighting.epochMillis > edge | r] AS above
WITH project, same, above, edge,
     CASE WHEN size(same) + size(above) <= $first THEN project END AS edge_of
CALL (edge_of, edge) {
  MATCH (r:Error {project: edge_of})
  USING INDEX SEEK r:Error(project, last_sighting, key)
  WHERE r.last_sighting >= datetime({epochMillis: coalesce(edge, 0)})
    AND r.last_sighting < datetime({epochMillis: coalesce(edge, 0) + 1}) AND r.key IS NOT NULL
  WITH r ORDER BY r.key LIMIT $first + 1
  RETURN collect(r) AS at_edge
}
CALL (above) {
  UNWIND above AS r
  WITH r ORDER BY r.last_sighting.epochMillis DESC, r.key
  RETURN collect(r) AS whole
}
WITH project, (same + whole + at_edge)[..$first + 1] AS ranked
WITH project, ranked,
     CASE WHEN size(ranked) <= $first
               AND ($after IS NULL OR $after.rank >= 0 OR project >= $after.project)
          THEN project END AS unranked_of
CALL (project, unranked_of) {
  MATCH (r:Error {project: unranked_of})
  USING INDEX SEEK r:Error(project, key)
  WHERE r.key IS NOT NULL AND r.last_sighting IS NULL
    AND ($after IS NULL OR $after.rank >= 0 OR project > $after.project OR r.key > $after.key)
  WITH r ORDER BY r.project, r.key LIMIT $first + 1
  RETURN collect(r) AS unranked
}
CALL (project) {
  OPTIONAL MATCH (p:Project {name: project})
  RETURN p.error_total AS kept
}
WITH project, ranked, unranked, kept, CASE WHEN kept IS NULL THEN project END AS count_of
CALL (count_of) {
  MATCH (r:Error {project: count_of})
  USING INDEX SEEK r:Error(project, key)
  WHERE r.key IS NOT NULL
  RETURN count(r) AS errors
}
WITH sum(coalesce(kept, errors)) AS total, collect(ranked + unranked) AS lists
CALL (lists) {
  UNWIND lists AS rows
  UNWIND rows AS r
  WITH r, coalesce(r.last_sighting.epochMillis, -1) AS rank
  ORDER BY rank DESC, r.project, r.key
  LIMIT $first + 1
  RETURN collect(r {rank: rank, .project, .key, .kind, .category, .signature, .template,
                    sightings: coalesce(r.sightings, 0), tasks: coalesce(r.tasks, 0),
                    first: r.first_sighting, last: r.last_sighting,
                    fixes: coalesce(r.fixes, 0), fixed_at: r.fixed_at,
                    open: r.fixed_at IS NULL
                          OR (r.last_sighting IS NOT NULL AND r.last_sighting > r.fixed_at)})
         AS page
}
RETURN total, page

// name: explore_error
// mode: read
// One error with its sightings and fixes, and the other readable projects that met it.
MATCH (r:Error {project: $project, key: $key})
CALL (r) {
  OPTIONAL MATCH (r)<-[:HIT]-(e:Episode {project: r.project})
  RETURN count(e) AS sightings, count(DISTINCT e.task_id) AS tasks,
         min(e.created_at) AS first, max(e.created_at) AS last
}
CALL (r) {
  // fixes claimed with evidence (graph/lineage/attribution.py); a workaround is not one
  OPTIONAL MATCH (e:Episode {project: r.project})-[l:RESOLVED]->(r)
  WHERE l.kind = 'fixed'
  RETURN count(DISTINCT e) AS fixes, max(e.created_at) AS fixed_at
}
RETURN r.project AS project, r.key AS key, r.kind AS kind, r.category AS category,
       r.signature AS signature, r.template AS template, r.sample AS sample,
       r.frames AS frames, sightings, tasks, first, last, fixes, fixed_at,
       fixed_at IS NULL OR (last IS NOT NULL AND last > fixed_at) AS open,
       COLLECT { MATCH (x:Error) WHERE x.signature = r.signature AND x.key = r.key
                   AND x.project <> r.project AND ($readable IS NULL OR x.project IN $readable)
                 RETURN x.project AS p ORDER BY p } AS also_in

// name: explore_task
// mode: read
// A task (with its constraints and the harness verdicts that judged it: the tests each run
// passed and failed) and its steps in chain order (at most $limit), each with its errors,
// tools, snippets and environment.
MATCH (t:Task {project: $project, id: $id})
CALL (t) {
  OPTIONAL MATCH (t)-[:HAS_EPISODE]->(e:Episode {project: t.project})
  RETURN count(e) AS steps
}
OPTIONAL MATCH (t)-[:HAS_EPISODE]->(e:Episode {project: t.project})
WITH t, steps, e ORDER BY coalesce(e.step, 2147483647), e.created_at, e.id
WITH t, steps, collect(e)[..$limit] AS chain
RETURN t {.id, .project, .goal, .status, .outcome, .agent, .started_at, .ended_at,
          .constraints, .tags,
          verdicts: COLLECT { MATCH (t)-[:JUDGED_BY]->(v:Verdict {project: t.project})
                              RETURN v {.run, .instance, .resolved, .harnesses, .sources,
                                        .tests_failed, .tests_passed, .recorded_at} AS v
                              ORDER BY v.recorded_at, v.run }} AS task, steps,
       [e IN chain | e {.id, .project, .step, .created_at, .summary, .outcome, .kind,
                        .action_type, .action_command, .action_parameters, .facts, .resolution,
         errors: COLLECT { MATCH (e)-[:HIT]->(r:Error)
                           RETURN r {.key, .kind, .signature} AS r ORDER BY r.key },
         resolved: COLLECT { MATCH (e)-[:RESOLVED]->(r:Error) RETURN r.key AS k ORDER BY k },
         dealt: COLLECT { MATCH (e)-[l:RESOLVED|ATTEMPTED]->(r:Error)
                          RETURN {key: r.key, kind: coalesce(l.kind, 'attempt'), rule: l.rule,
                                  why: l.why, confidence: l.confidence} AS d
                          ORDER BY d.key },
         tools: COLLECT { MATCH (e)-[:USED_TOOL]->(x:Tool) RETURN x.name AS n ORDER BY n },
         snippets: COLLECT { MATCH (e)-[u:GENERATED|USED|MODIFIED]->(s:Snippet)
                             RETURN s {.id, .name, .kind, .language, relation: type(u)} AS s
                             ORDER BY s.id },
         environment: COLLECT { MATCH (e)-[:IN_ENV]->(v:Environment)
                                RETURN v {.key, .os, .os_version, .arch, .runtime,
                                          .runtime_version} AS v }[0]}] AS chain

// name: explore_nodes
// mode: read
// Nodes by {kind, project, key}: one index seek each (the branch of its kind).
UNWIND $refs AS ref
CALL (ref) {
  MATCH (n:Episode {project: ref.project, id: ref.key}) WHERE ref.kind = 'Episode' RETURN n
  UNION ALL
  MATCH (n:Task {project: ref.project, id: ref.key}) WHERE ref.kind = 'Task' RETURN n
  UNION ALL
  MATCH (n:Snippet {project: ref.project, id: ref.key}) WHERE ref.kind = 'Snippet' RETURN n
  UNION ALL
  MATCH (n:Error {project: ref.project, key: ref.key}) WHERE ref.kind = 'Error' RETURN n
  UNION ALL
  MATCH (n:Environment {project: ref.project, key: ref.key}) WHERE ref.kind = 'Environment'
  RETURN n
  UNION ALL
  MATCH (n:Tool {project: ref.project, name: ref.key}) WHERE ref.kind = 'Tool' RETURN n
  UNION ALL
  MATCH (n:Package {project: ref.project, name: ref.key}) WHERE ref.kind = 'Package' RETURN n
  UNION ALL
  MATCH (n:Tag {project: ref.project, name: ref.key}) WHERE ref.kind = 'Tag' RETURN n
  UNION ALL
  MATCH (n:Symbol {project: ref.project, name: ref.key}) WHERE ref.kind = 'Symbol' RETURN n
  UNION ALL
  MATCH (n:File {project: ref.project, path: ref.key}) WHERE ref.kind = 'File' RETURN n
  UNION ALL
  MATCH (n:Pattern {project: ref.project, id: ref.key}) WHERE ref.kind = 'Pattern' RETURN n
  UNION ALL
  MATCH (n:Project {name: ref.key}) WHERE ref.kind = 'Project' AND ref.project = ref.key
  RETURN n
}
RETURN ref.kind AS kind, ref.project AS project, ref.key AS key, elementId(n) AS element,
       n {.*, embedding: null, title_embedding: null, context_embedding: null, details: null}
         AS props,
       n.details AS details

// name: explore_expand
// mode: read
// The neighbours of some nodes (by element id) inside their project: at most $per_node
// each, in a stable order (relationship type, label, key), each with a few properties.
UNWIND $elements AS element
MATCH (n) WHERE elementId(n) = element
CALL (n) {
  MATCH (n)-[r]-(m)
  WHERE coalesce(m.project, m.name) = coalesce(n.project, n.name)
  WITH r, m, startNode(r) = n AS outgoing
  ORDER BY type(r), head(labels(m)), coalesce(m.id, m.key, m.name, m.path)
  LIMIT $per_node
  RETURN r, m, outgoing
}
RETURN element AS from, type(r) AS type, outgoing, elementId(m) AS element,
       labels(m) AS labels, coalesce(m.project, m.name) AS project,
       coalesce(m.id, m.key, m.name, m.path) AS key,
       m {.id, .key, .name, .path, .project, .summary, .title, .goal, .kind, .template,
          .outcome, .status, .os, .os_version, .runtime, .runtime_version, .language,
          .signature, .created_at} AS props

// name: explore_edges
// mode: read
// The relationships among a set of nodes (by element id).
UNWIND $elements AS element
MATCH (a) WHERE elementId(a) = element
MATCH (a)-[r]->(b)
WHERE elementId(b) IN $elements
RETURN elementId(a) AS source, type(r) AS type, elementId(b) AS target,
       properties(r) AS props

// name: project_tools
// mode: read
// A project's tools with their statistics (recount_tools), the most failing first: the
// failure rate, then the failures, then the uses. Tools no remaining episode uses are left out.
MATCH (t:Tool {project: $project})
WHERE t.uses >= $min_uses
RETURN t.name AS name, t.kind AS kind, t.uses AS uses, t.successes AS successes,
       t.failures AS failures, t.failure_rate AS failure_rate,
       t.last_used_at AS last_used_at
ORDER BY t.failure_rate DESC, t.failures DESC, t.uses DESC, t.name
LIMIT $first
