// Failure lineage: an error's history across tasks, projects and time.
// `$members` are the Error nodes that stand for the error ({project, key}); every query
// stays inside their projects, and values arrive only as parameters. `$since` / `$until`
// bound the sightings (Episode.created_at; null: unbounded). A lineage runs a fixed number
// of these queries, whatever the number of sightings.
// Each returns ONE record holding its rows as a list (`rows`), and every moment as text
// (toString: ISO 8601, to the nanosecond): the driver pays far more per record, and per
// DateTime it hydrates, than per plain value (bench/lineage_bench.py; docs/benchmarks.md).

// name: lineage_members_by_key
// mode: read
UNWIND $projects AS project
UNWIND $keys AS key
MATCH (r:Error {project: project, key: key})
RETURN r.project AS project, r.key AS key
ORDER BY project, key

// name: lineage_summary
// mode: read
// Each member with its sightings in the window: how many, in how many tasks, the first and
// the last.
UNWIND $members AS m
MATCH (r:Error {project: m.project, key: m.key})
CALL (r) {
  OPTIONAL MATCH (r)<-[:HIT]-(e:Episode {project: r.project})
  WHERE ($since IS NULL OR e.created_at >= $since) AND ($until IS NULL OR e.created_at < $until)
  WITH e ORDER BY e.created_at, e.id
  WITH collect(e {.id, .task_id, created_at: toString(e.created_at)}) AS seen,
       count(DISTINCT e.task_id) AS tasks
  RETURN size(seen) AS sightings, tasks, head(seen) AS first, last(seen) AS last
}
WITH r, sightings, tasks, first, last ORDER BY r.project, r.key
RETURN collect({project: r.project, key: r.key, kind: r.kind, category: r.category,
                signature: r.signature, template: r.template, sample: r.sample,
                sightings: sightings, tasks: tasks, first: first, last: last}) AS rows

// name: lineage_sightings
// mode: read
// One page of sightings in time order: the episode, its task, environment and tools.
// Keyset pagination on (created_at, project, id); `$after` is the last row of the page before.
UNWIND $members AS m
MATCH (:Error {project: m.project, key: m.key})<-[:HIT]-(e:Episode {project: m.project})
WHERE ($since IS NULL OR e.created_at >= $since) AND ($until IS NULL OR e.created_at < $until)
  AND ($after IS NULL OR e.created_at > datetime($after.at)
       OR (e.created_at = datetime($after.at)
           AND (e.project > $after.project OR (e.project = $after.project AND e.id > $after.id))))
WITH DISTINCT e
ORDER BY e.created_at, e.project, e.id
LIMIT $limit
OPTIONAL MATCH (t:Task {project: e.project, id: e.task_id})
OPTIONAL MATCH (e)-[:IN_ENV]->(v:Environment {project: e.project})
WITH e, t, v ORDER BY e.created_at, e.project, e.id
RETURN collect({
  episode: e {.id, .project, created_at: toString(e.created_at), .step, .task_id, .summary,
              .outcome, .kind, .action_command, .time_estimated},
  task: t {.id, .goal, .status, .agent},
  environment: v {.key, .os, .os_version, .arch, .runtime, .runtime_version},
  tools: COLLECT { MATCH (e)-[:USED_TOOL]->(x:Tool) RETURN x.name AS name ORDER BY name }
}) AS rows

// name: lineage_attempts
// mode: read
// What was tried and did not end it: the steps that acted on the error (ATTEMPTED: the
// evidence of a fix, but the error came back or the step failed), each with its rule and
// why. Steps that merely came after a sighting are not attempts. Oldest first, at most $limit.
UNWIND $members AS m
MATCH (r:Error {project: m.project, key: m.key})<-[l:ATTEMPTED]-(a:Episode {project: m.project})
WHERE ($since IS NULL OR a.created_at >= $since) AND ($until IS NULL OR a.created_at < $until)
WITH a, collect(l.rule + ': ' + l.why) AS why
ORDER BY a.created_at, a.project, a.id
LIMIT $limit
OPTIONAL MATCH (a)-[:IN_ENV]->(v:Environment {project: a.project})
WITH a, v, why ORDER BY a.created_at, a.project, a.id
RETURN collect({
  episode: a {.id, .project, created_at: toString(a.created_at), .step, .task_id, .summary,
              .outcome, .kind, .action_command, .time_estimated},
  environment: v {.key, .os, .os_version, .arch, .runtime, .runtime_version},
  errors: COLLECT { MATCH (a)-[:HIT]->(x:Error) RETURN x.kind AS kind ORDER BY kind },
  tools: COLLECT { MATCH (a)-[:USED_TOOL]->(x:Tool) RETURN x.name AS name ORDER BY name },
  why: why
}) AS rows

// name: lineage_fixes
// mode: read
// The steps that dealt with the error, on evidence: RESOLVED {kind: fixed | workaround}
// with its rule, why and confidence, and the fixing step's code (FIXES) where there is
// some. Not bounded by the window: a fix before it explains a recurrence inside it.
UNWIND $members AS m
MATCH (r:Error {project: m.project, key: m.key})<-[l:RESOLVED]-(e:Episode {project: m.project})
WHERE l.kind IS NOT NULL
WITH e, collect(DISTINCT r) AS ended, collect(l) AS links
ORDER BY e.created_at, e.project, e.id
LIMIT $limit
// The code of the kept steps only, read from each step's side (read for every fixing step
// before the LIMIT and from the error's side, through all of its FIXES, an error of 9,377
// fixes at 1M took 8 s and 26M db hits).
WITH e, ended, links,
     COLLECT { MATCH (e)-[:GENERATED|MODIFIED|USED]->(s:Snippet {project: e.project})
               WHERE any(r IN ended WHERE (s)-[:FIXES]->(r))
               RETURN DISTINCT s } AS snippets
OPTIONAL MATCH (t:Task {project: e.project, id: e.task_id})
OPTIONAL MATCH (e)-[:IN_ENV]->(v:Environment {project: e.project})
WITH e, t, v, snippets, links, ended ORDER BY e.created_at, e.project, e.id
RETURN collect({
  episode: e {.id, .project, created_at: toString(e.created_at), .step, .task_id, .summary,
              .outcome, .kind, .action_command, .time_estimated},
  task: t {.id, .goal, .status, .agent},
  environment: v {.key, .os, .os_version, .arch, .runtime, .runtime_version},
  snippets: [s IN snippets | s {.id, .project, .name, .kind, .language, .description}],
  vias: ['RESOLVED'] + CASE WHEN size(snippets) > 0 THEN ['FIXES'] ELSE [] END,
  kind: CASE WHEN any(l IN links WHERE l.kind = 'fixed') THEN 'fixed' ELSE 'workaround' END,
  why: [l IN links | l.rule + ': ' + l.why],
  confidence: reduce(c = 0.0, l IN links | CASE WHEN l.confidence > c THEN l.confidence ELSE c END),
  errors: [r IN ended | r.key]
}) AS rows

// name: lineage_regressions
// mode: read
// Recurrences after a fix: every sighting in the window later than some fix of the error
// claimed with evidence (RESOLVED {kind: 'fixed'}; a workaround removed no cause),
// with the latest fix before it (the last in time, project and id order of those strictly
// before) and the packages of both environments. `total` counts them
// all; at most $limit come back, oldest first.
UNWIND $members AS m
MATCH (r:Error {project: m.project, key: m.key})
CALL (r) {
  MATCH (fix:Episode {project: r.project})-[l:RESOLVED]->(r)
  WHERE l.kind = 'fixed'
  RETURN fix
}
// The fixes in time order, and their moments read once: each sighting's latest fix before it
// is then found among plain values (reading every fix's time again for every sighting took
// 14 s for an error of 2,425 sightings and 1,730 fixes at 100k episodes, past the timeout),
// by a binary search of the sorted times: how many are earlier than the sighting (counting
// them all, sightings × fixes comparisons, took 7.8 s for 17,964 and 9,377 at 1M).
WITH DISTINCT fix ORDER BY fix.created_at, fix.project, fix.id
WITH collect(fix) AS fixes, collect(fix.created_at) AS times
WHERE size(fixes) > 0
WITH fixes, times, range(0, toInteger(ceil(log(size(times) + 1) / log(2)))) AS halvings
UNWIND $members AS m
MATCH (:Error {project: m.project, key: m.key})<-[:HIT]-(e:Episode {project: m.project})
WHERE ($since IS NULL OR e.created_at >= $since) AND ($until IS NULL OR e.created_at < $until)
WITH DISTINCT fixes, times, halvings, e
WITH e, fixes,
     reduce(span = [0, size(times)], i IN halvings |
       CASE WHEN span[0] >= span[1] THEN span
            WHEN times[(span[0] + span[1]) / 2] < e.created_at
            THEN [(span[0] + span[1]) / 2 + 1, span[1]]
            ELSE [span[0], (span[0] + span[1]) / 2] END)[0] AS before
WHERE before > 0
WITH e, fixes[before - 1] AS fix
ORDER BY e.created_at, e.project, e.id
WITH collect({e: e, fix: fix}) AS recurrences
WITH size(recurrences) AS total, recurrences[..$limit] AS page
// The environments of the page once each (by project and key), not once per row: most
// recurrences share a handful of them and their package lists.
CALL (page) {
  UNWIND page AS row
  UNWIND [row.e, row.fix] AS s
  MATCH (s)-[:IN_ENV]->(v:Environment {project: s.project})
  WITH DISTINCT v
  RETURN collect(v {.project, .key, .os, .os_version, .arch, .runtime, .runtime_version,
                    packages: COLLECT { MATCH (v)-[h:HAS_PACKAGE]->(k:Package)
                                        RETURN [k.name, h.version] AS p ORDER BY p }})
         AS environments
}
CALL (page) {
  UNWIND range(0, size(page) - 1) AS i
  WITH i, page[i].e AS e, page[i].fix AS fix
  OPTIONAL MATCH (e)-[:IN_ENV]->(v:Environment {project: e.project})
  OPTIONAL MATCH (fix)-[:IN_ENV]->(w:Environment {project: fix.project})
  WITH i, e, fix, v, w ORDER BY i
  RETURN collect({
    episode: e {.id, .project, created_at: toString(e.created_at), .step, .task_id, .summary,
                .outcome, .kind, .action_command, .time_estimated},
    fix: fix {.id, .project, created_at: toString(fix.created_at), .step, .task_id, .summary,
              .outcome, .kind, .action_command, .time_estimated},
    environment: v.key, fix_environment: w.key
  }) AS rows
}
RETURN total, rows, environments

// name: lineage_related
// mode: read
// Errors met in the same tasks, with the order they came in: `preceded` counts the tasks
// where the other error was first sighted before this one, `followed` those where after,
// `together` those where in the same step.
UNWIND $members AS m
MATCH (:Error {project: m.project, key: m.key})<-[:HIT]-(h:Episode {project: m.project})
WHERE h.task_id IS NOT NULL
  AND ($since IS NULL OR h.created_at >= $since) AND ($until IS NULL OR h.created_at < $until)
WITH h ORDER BY coalesce(h.step, 2147483647), h.created_at
WITH h.project AS project, h.task_id AS task, head(collect(h)) AS first
MATCH (:Task {project: project, id: task})-[:HAS_EPISODE]->(o:Episode {project: project})
      -[:HIT]->(x:Error {project: project})
WHERE NOT x.key IN $keys
WITH project, task, first, x, o ORDER BY coalesce(o.step, 2147483647), o.created_at
WITH project, task, first, x, head(collect(o)) AS its
WITH x, CASE WHEN its.step IS NOT NULL AND first.step IS NOT NULL
             THEN sign(its.step - first.step)
             WHEN its.created_at < first.created_at THEN -1
             WHEN its.created_at > first.created_at THEN 1
             ELSE 0 END AS order
WITH x, count(*) AS tasks,
     sum(CASE order WHEN -1 THEN 1 ELSE 0 END) AS preceded,
     sum(CASE order WHEN 1 THEN 1 ELSE 0 END) AS followed,
     sum(CASE order WHEN 0 THEN 1 ELSE 0 END) AS together
ORDER BY tasks DESC, x.project, x.key
LIMIT $limit
RETURN collect({project: x.project, key: x.key, kind: x.kind, signature: x.signature,
                template: x.template, tasks: tasks, preceded: preceded, followed: followed,
                together: together}) AS rows

// name: lineage_task_claims
// mode: read
// What the graph says about each error each task hit: the steps that hit it, the steps
// claimed to have fixed it or worked round it (RESOLVED {kind}, with the rule's why and its
// confidence), and the steps that attempted it (ATTEMPTED). `$tasks` are {project, id}.
UNWIND $tasks AS key
MATCH (t:Task {project: key.project, id: key.id})-[:HAS_EPISODE]->(e:Episode {project: key.project})
      -[:HIT]->(r:Error {project: key.project})
WITH t, r, collect(DISTINCT e.id) AS seen
ORDER BY t.project, t.id, r.key
RETURN collect({
  project: t.project, task: t.id, status: t.status, outcome: t.outcome,
  key: r.key, kind: r.kind, sample: r.sample, seen: seen,
  fixes: [(t)-[:HAS_EPISODE]->(x:Episode {project: t.project})-[l:RESOLVED]->(r)
          WHERE l.kind = 'fixed'
          | {episode: x.id, via: 'RESOLVED', why: l.rule + ': ' + l.why,
             confidence: l.confidence}],
  workarounds: [(t)-[:HAS_EPISODE]->(x:Episode {project: t.project})-[l:RESOLVED]->(r)
                WHERE l.kind = 'workaround'
                | {episode: x.id, via: 'RESOLVED', why: l.rule + ': ' + l.why,
                   confidence: l.confidence}],
  attempts: [(t)-[:HAS_EPISODE]->(x:Episode {project: t.project})-[l:ATTEMPTED]->(r)
             | {episode: x.id, via: 'ATTEMPTED', why: l.rule + ': ' + l.why,
                confidence: l.confidence}]
}) AS rows

// name: eval_step_actions
// mode: read
// The stored action of each step `$steps` ({project, id}) names: what `eval plan` looks for
// in a planning prompt (the command and parameters as ingest kept them, abstracted).
UNWIND $steps AS key
MATCH (e:Episode {project: key.project, id: key.id})
RETURN e.project AS project, e.id AS id, e.action_type AS type,
       e.action_command AS command, e.action_parameters AS parameters
