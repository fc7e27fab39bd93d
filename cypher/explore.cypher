// Browsing the graph: errors by count, recency or open state; one error, one task, any node
// and its neighbourhood. Every query names its projects; values arrive only as parameters.

// name: explore_projects
// mode: read
// The projects a caller may read ($readable null: every project), with a few counts.
MATCH (p:Project)
WHERE $readable IS NULL OR p.name IN $readable
RETURN p.name AS name, p.created_at AS created_at,
       COUNT { MATCH (t:Task {project: p.name}) WHERE t.id IS NOT NULL } AS tasks,
       COUNT { MATCH (e:Episode {project: p.name}) WHERE e.id IS NOT NULL } AS episodes,
       COUNT { MATCH (r:Error {project: p.name}) WHERE r.key IS NOT NULL } AS errors
ORDER BY name

// name: explore_errors
// mode: read
// Errors of the projects with their sightings in the window and their fixes, ranked by
// $order (COUNT: most sightings; UNRESOLVED: the same, open ones only — never fixed, or
// sighted again after their last fix; RECENT: latest sighting), then project and key.
// Keyset pagination: $after holds the rank, project and key of the last row seen.
// Without a window the counts are those kept on the Error nodes (cypher/error_counts.cypher):
// the page reads the errors, not their sightings. A window counts the sightings in it.
UNWIND $projects AS project
MATCH (r:Error {project: project})
WHERE r.key IS NOT NULL
CALL (r) {
  WITH r WHERE $since IS NULL AND $until IS NULL
  RETURN coalesce(r.sightings, 0) AS sightings, coalesce(r.tasks, 0) AS tasks,
         r.first_sighting AS first, r.last_sighting AS last,
         coalesce(r.fixes, 0) AS fixes, r.fixed_at AS fixed_at
  UNION ALL
  WITH r WHERE $since IS NOT NULL OR $until IS NOT NULL
  CALL (r) {
    OPTIONAL MATCH (r)<-[:HIT]-(e:Episode {project: r.project})
    WHERE ($since IS NULL OR e.created_at >= $since) AND ($until IS NULL OR e.created_at < $until)
    RETURN count(e) AS sightings, count(DISTINCT e.task_id) AS tasks,
           min(e.created_at) AS first, max(e.created_at) AS last
  }
  WITH r, sightings, tasks, first, last WHERE sightings > 0
  RETURN sightings, tasks, first, last, coalesce(r.fixes, 0) AS fixes, r.fixed_at AS fixed_at
}
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
