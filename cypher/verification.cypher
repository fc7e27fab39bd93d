// The verification gate: what a sandboxed run of a snippet's tests leaves in the graph.
// A run is a use of the snippet, reported like any outcome (cypher/outcomes.cypher) in the
// context of the environment it ran in: a pass writes VERIFIED_IN with its evidence; a
// failure is kept as the snippet's last failure. graph/verification.py recounts after.

// name: verification_passed
// mode: write
// Runs after upsert_environments wrote the environment, in the same transaction.
MATCH (s:Snippet {project: $project, id: $id})
MATCH (v:Environment {project: $project, key: $key})
MERGE (s)-[r:VERIFIED_IN]->(v)
SET r.command = $command, r.exit_code = $exit_code, r.duration_ms = $duration_ms,
    r.output_tail = $output_tail, r.verified_at = datetime(),
    r.passes = coalesce(r.passes, 0) + 1
SET s.last_verified_at = datetime()
CREATE (o:OutcomeReport {project: $project, key: $report_key, memory_id: s.id,
                         label: 'Snippet', success: true, context: 'sandbox|' + v.key,
                         env: v.key, at: datetime(), count: 1})
CREATE (o)-[:ABOUT]->(s)

// name: verification_failed
// mode: write
// $evidence is the failure as JSON text (command, exit code, duration, output tail,
// environment key, time), redacted by the caller.
MATCH (s:Snippet {project: $project, id: $id})
SET s.last_failure = $evidence,
    s.last_failure_at = datetime()
CREATE (o:OutcomeReport {project: $project, key: $report_key, memory_id: s.id,
                         label: 'Snippet', success: false,
                         context: 'sandbox|' + coalesce($key, '-'), env: $key,
                         at: datetime(), count: 1})
CREATE (o)-[:ABOUT]->(s)
