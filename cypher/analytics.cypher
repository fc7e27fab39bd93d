// Analytics pull a bounded subgraph and measure it with networkx (graph/analytics/).
// Every query names its projects; values arrive only as parameters.

// name: analytics_episodes
// mode: read
// The most recent episodes of the projects in the window, at most $cap + 1 (the one more
// says the cap was reached), with the errors, environment, tools and snippets of each.
UNWIND $projects AS project
CALL (project) {
  MATCH (e:Episode {project: project})
  WHERE e.created_at IS NOT NULL
    AND ($since IS NULL OR e.created_at >= $since) AND ($until IS NULL OR e.created_at < $until)
  RETURN e ORDER BY e.created_at DESC LIMIT $cap + 1
}
WITH e ORDER BY e.created_at DESC LIMIT $cap + 1
RETURN e.project AS project, e.id AS id, e.task_id AS task, e.step AS step,
       e.created_at AS at, e.outcome AS outcome,
       COLLECT { MATCH (e)-[:HIT]->(r:Error) RETURN r.key AS k } AS errors,
       COLLECT { MATCH (e)-[:IN_ENV]->(v:Environment) RETURN v.key AS k }[0] AS environment,
       COLLECT { MATCH (e)-[:USED_TOOL]->(t:Tool) RETURN t.name AS n } AS tools,
       COLLECT { MATCH (e)-[:GENERATED|USED|MODIFIED]->(s:Snippet) RETURN s.id AS i } AS snippets

// name: analytics_errors
// mode: read
// The errors met ({project, key}) with what names them, and the code that FIXES them.
UNWIND $keys AS m
MATCH (r:Error {project: m.project, key: m.key})
RETURN r.project AS project, r.key AS key, r.kind AS kind, r.signature AS signature,
       r.template AS template,
       // from the error: the label and project checked on each snippet reached, so no
       // plan starts from every snippet of the project (that grew with the store)
       COLLECT { MATCH (r)<-[f:FIXES]-(s) WHERE s:Snippet AND s.project = r.project
                 RETURN {snippet: s.id, task: f.task, episode: f.episode} AS f } AS fixes

// name: analytics_environments
// mode: read
UNWIND $keys AS m
MATCH (v:Environment {project: m.project, key: m.key})
RETURN v.project AS project, v.key AS key,
       COLLECT { MATCH (v)-[h:HAS_PACKAGE]->(k:Package) RETURN [k.name, h.version] AS p } AS packages

// name: analytics_snippets
// mode: read
UNWIND $keys AS m
MATCH (s:Snippet {project: m.project, id: m.id})
RETURN s.project AS project, s.id AS id, s.kind AS kind, s.language AS language,
       coalesce(s.name, s.description, split(trim(coalesce(s.template, '')), '\n')[0]) AS name
