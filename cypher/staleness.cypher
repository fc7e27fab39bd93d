// Invalidation when dependencies move (graph/staleness.py decides, with PEP 440 versions):
// a snippet is STALE_IN an environment where a package it requires is outside the versions
// it was verified with, or where it failed after having worked. Values only as parameters.

// name: stale_candidates
// mode: read
// The (snippet, environment) pairs to judge again: every snippet requiring a package one of
// $envs has, or that an episode in it produced or used; and every environment one of
// $snippets has evidence in (the episodes that produced or used it, the episodes its reports
// were applied in, its sandbox runs).
CALL () {
  UNWIND $envs AS key
  MATCH (v:Environment {project: $project, key: key})
  CALL (v) {
    MATCH (v)-[:HAS_PACKAGE]->(:Package)<-[:REQUIRES]-(s:Snippet {project: v.project})
    RETURN s
    UNION
    MATCH (v)<-[:IN_ENV]-(:Episode {project: v.project})-[:GENERATED|USED|MODIFIED]->(s:Snippet)
    WHERE s.project = v.project
    RETURN s
  }
  RETURN s, v
  UNION
  UNWIND $snippets AS id
  MATCH (s:Snippet {project: $project, id: id})
  CALL (s) {
    MATCH (s)<-[:GENERATED|USED|MODIFIED]-(:Episode {project: s.project})-[:IN_ENV]->(v:Environment)
    RETURN v
    UNION
    MATCH (s)-[:VERIFIED_IN]->(v:Environment)
    RETURN v
    UNION
    MATCH (o:OutcomeReport)-[:ABOUT]->(s)
    MATCH (:Episode {project: o.applied_project, id: o.applied_in})-[:IN_ENV]->(v:Environment)
    WHERE v.project = s.project
    RETURN v
    UNION
    MATCH (o:OutcomeReport)-[:ABOUT]->(s)
    WHERE o.context STARTS WITH 'sandbox|'
    MATCH (v:Environment {project: s.project, key: substring(o.context, 8)})
    RETURN v
  }
  RETURN s, v
}
WITH DISTINCT s, v
WHERE v.project = s.project
RETURN s.id AS snippet, v.key AS env
LIMIT $limit

// name: stale_facts
// mode: read
// What judging a pair needs: the last report about the snippet from that environment (a
// sandbox run there, or a use applied in an episode there), whether it ever worked, and
// for each package it requires: its ranges, the version the environment has, and the
// versions of the environments it worked in (verified there, or reported working there).
// A reused snippet has thousands of reports: the last word from an environment is read by
// the index outcome_report_env_at (each report keeps the environment it speaks for and its
// time) newest first, ordered as the index is so that only the newest are read (the reports
// one transaction wrote share a time: the key breaks the tie), and the
// environments it worked in (verified there, or all its successful reports) only when it
// requires a package, once for all its environments; whether it ever worked at all is its
// kept count of successes or a verified environment.
UNWIND $pairs AS pair
MATCH (s:Snippet {project: $project, id: pair.snippet})
MATCH (v:Environment {project: $project, key: pair.env})
WITH s, collect(v) AS envs, EXISTS { (s)-[:REQUIRES]->(:Package) } AS requires
CALL (s, requires) {
  UNWIND CASE WHEN requires THEN [s] ELSE [] END AS r  // nothing read when it requires none
  CALL (r) {
    MATCH (r)-[:VERIFIED_IN]->(w:Environment)
    RETURN w
    UNION
    // `at IS NOT NULL` (every report has one) lets the seek use outcome_report_env_at:
    // without it no index covers the predicates and Neo4j scanned every report of the
    // store (the 1M derive: stale_facts 0.2 -> 1.0 s a plan by 130k episodes). The
    // environments named are found after the snippet's own reports, in a subquery of its
    // own: joined in one pattern, the planner sometimes began from every environment of
    // the project instead (a seek of reports for each), as its statistics of the moment
    // chose
    CALL (r) {
      MATCH (o:OutcomeReport {project: r.project, memory_id: r.id})
      USING INDEX SEEK o:OutcomeReport(project, memory_id, env, at)
      WHERE o.env IS NOT NULL AND o.at IS NOT NULL AND o.success = true
        AND o.label = 'Snippet' AND o.applied_project = r.project
      RETURN DISTINCT o.env AS key
    }
    MATCH (w:Environment {project: r.project, key: key})
    RETURN w
  }
  RETURN collect(DISTINCT w) AS worked
}
UNWIND envs AS v
CALL (s, v) {
  OPTIONAL MATCH (o:OutcomeReport {project: s.project, memory_id: s.id, env: v.key})
  USING INDEX SEEK o:OutcomeReport(project, memory_id, env, at)
  WHERE o.at IS NOT NULL AND o.label = 'Snippet'
    AND (o.applied_project = v.project OR o.context = 'sandbox|' + v.key)
  WITH o ORDER BY o.project DESC, o.memory_id DESC, o.env DESC, o.at DESC, o.key DESC LIMIT 1
  RETURN o.success AS last_here
}
CALL (s, v, worked) {
  OPTIONAL MATCH (s)-[q:REQUIRES]->(k:Package {project: s.project})
  OPTIONAL MATCH (v)-[h:HAS_PACKAGE]->(k)
  WITH k, q, h ORDER BY k.name
  RETURN collect(CASE WHEN k IS NULL THEN null ELSE
    {name: k.name, specs: coalesce(q.specs, []), found: h.version,
     working: reduce(acc = [], w IN worked | acc + [(w)-[g:HAS_PACKAGE]->(k) | g.version])}
    END) AS packages
}
RETURN s.id AS snippet, v.key AS env, last_here,
       size(worked) > 0 OR coalesce(s.successes, 0) > 0
         OR EXISTS { (s)-[:VERIFIED_IN]->(:Environment) } AS worked, packages

// name: mark_stale
// mode: write
// $rows: {snippet, env, package, verified, found, reason}. `since` stays from the first time.
UNWIND $rows AS row
MATCH (s:Snippet {project: $project, id: row.snippet})
MATCH (v:Environment {project: $project, key: row.env})
MERGE (s)-[x:STALE_IN]->(v)
ON CREATE SET x.since = datetime()
SET x.package = row.package, x.verified = row.verified, x.found = row.found,
    x.reason = row.reason

// name: clear_stale
// mode: write
// $rows: {snippet, env} judged fresh again (a later success there, or nothing moved).
UNWIND $rows AS row
MATCH (s:Snippet {project: $project, id: row.snippet})-[x:STALE_IN]->(v:Environment {project: $project, key: row.env})
DELETE x

// name: stale_snippet_ids
// mode: read
// Which of these snippets are stale somewhere (search ranks them after the others).
UNWIND $ids AS id
MATCH (s:Snippet {project: $project, id: id})
WHERE EXISTS { (s)-[:STALE_IN]->() }
RETURN s.id AS id
