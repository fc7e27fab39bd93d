// The verification gate: what a sandboxed run of a snippet's tests leaves in the graph.
// A run is a use of the snippet: a pass counts as a success and writes VERIFIED_IN with
// its evidence; a failure counts as a failure and is kept as the snippet's last failure.
// The first SET takes the snippet's write lock, as record_outcome does.

// name: verification_passed
// mode: write
// Runs after upsert_environments wrote the environment, in the same transaction.
MATCH (s:Snippet {project: $project, id: $id})
MATCH (v:Environment {project: $project, key: $key})
SET s.outcome_lock = true
MERGE (s)-[r:VERIFIED_IN]->(v)
SET r.command = $command, r.exit_code = $exit_code, r.duration_ms = $duration_ms,
    r.output_tail = $output_tail, r.verified_at = datetime(),
    r.passes = coalesce(r.passes, 0) + 1
SET s.uses = coalesce(s.uses, 0) + 1,
    s.successes = coalesce(s.successes, 0) + 1,
    s.last_verified_at = datetime()
SET s.success_rate = toFloat(s.successes) / s.uses
REMOVE s.outcome_lock
RETURN s.uses AS uses, s.successes AS successes, s.failures AS failures,
       s.success_rate AS success_rate

// name: verification_failed
// mode: write
// $evidence is the failure as JSON text (command, exit code, duration, output tail,
// environment key, time), redacted by the caller.
MATCH (s:Snippet {project: $project, id: $id})
SET s.outcome_lock = true
SET s.uses = coalesce(s.uses, 0) + 1,
    s.failures = coalesce(s.failures, 0) + 1,
    s.last_failure = $evidence,
    s.last_failure_at = datetime()
SET s.success_rate = toFloat(s.successes) / s.uses
REMOVE s.outcome_lock
RETURN s.uses AS uses, s.successes AS successes, s.failures AS failures,
       s.success_rate AS success_rate
