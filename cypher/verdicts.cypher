// Harness verdicts (SWE-bench reports): one node per run and instance, matched to the tasks
// of that run and instance whichever arrives first. The verdict beats the agent's own
// claim (kept as claimed_outcome). Values arrive only as parameters.

// name: upsert_verdicts
// mode: write
// Several reports may judge one instance (a run's summary, the instance's own report): the
// tests are kept from the one that lists them.
CYPHER replan=skip
UNWIND $rows AS row
MERGE (v:Verdict {project: row.project, id: row.id})
ON CREATE SET v.recorded_at = datetime(), v.harnesses = []
SET v.run = row.run, v.instance = row.instance, v.resolved = row.resolved,
    v.harnesses = v.harnesses + [h IN [row.harness] WHERE h IS NOT NULL AND NOT h IN v.harnesses],
    v.sources = coalesce(v.sources, [])
                + [s IN [row.source] WHERE s IS NOT NULL AND NOT s IN coalesce(v.sources, [])],
    v.tests_passed = CASE WHEN row.has_tests THEN row.passed ELSE coalesce(v.tests_passed, []) END,
    v.tests_failed = CASE WHEN row.has_tests THEN row.failed ELSE coalesce(v.tests_failed, []) END

// name: tasks_for_runs
// mode: read
// The tasks a set of (run, instance) keys names: their resolution is memorized after.
UNWIND $keys AS key
MATCH (t:Task {project: key.project, run: key.run, instance: key.instance})
RETURN DISTINCT t.project AS project, t.id AS id

// name: apply_verdicts
// mode: write
// Each task of a judged run and instance: JUDGED_BY its verdict, outcome and status from
// it, and the run's submission (the patch and the episode that made it) with the same
// outcome, so what the run produced carries the verdict. A changed episode is maintained
// again.
UNWIND $keys AS key
MATCH (v:Verdict {project: key.project, id: key.run + '/' + key.instance})
MATCH (t:Task {project: key.project, run: key.run, instance: key.instance})
MERGE (t)-[:JUDGED_BY]->(v)
WITH t, v, CASE WHEN v.resolved THEN 'success' ELSE 'failure' END AS outcome
SET t.verdict = CASE WHEN v.resolved THEN 'resolved' ELSE 'unresolved' END,
    t.outcome = outcome,
    t.status = CASE WHEN v.resolved THEN 'resolved'
                    WHEN t.status = 'resolved' THEN 'open' ELSE t.status END
WITH t, outcome
CALL (t, outcome) {
  MATCH (t)-[:HAS_EPISODE]->(e:Episode {project: t.project, kind: 'submission'})
  WHERE e.outcome <> outcome
  CALL (e, outcome) {
    // the statistics of the tools it used move with its outcome (cypher/write.cypher)
    MATCH (e)-[:USED_TOOL]->(u:Tool)
    SET u.successes = u.successes + CASE WHEN outcome = 'success' THEN 1 ELSE 0 END
                                  - CASE WHEN e.outcome = 'success' THEN 1 ELSE 0 END,
        u.failures = u.failures + CASE WHEN outcome = 'failure' THEN 1 ELSE 0 END
                                - CASE WHEN e.outcome = 'failure' THEN 1 ELSE 0 END
    SET u.failure_rate = CASE WHEN u.uses = 0 THEN null ELSE toFloat(u.failures) / u.uses END
  }
  SET e.outcome = outcome, e.consolidated = null
}
CALL (t, outcome) {
  MATCH (t)-[:HAS_EPISODE]->(:Episode {project: t.project, kind: 'submission'})-[g:GENERATED]->(:Snippet)
  SET g.outcome = outcome
}
RETURN count(DISTINCT t) AS judged

// name: verdict_bridges
// mode: read
// The code each judged run submitted, with the outcome its verdict gave the bridge: read
// inside the write transaction (graph/outcomes.py verdict_feedback_within), so code of
// the same batch is there too.
UNWIND $keys AS key
MATCH (t:Task {project: key.project, run: key.run, instance: key.instance})-[:JUDGED_BY]->(:Verdict)
MATCH (t)-[:HAS_EPISODE]->(e:Episode {project: t.project, kind: 'submission'})
      -[g:GENERATED]->(s:Snippet {project: t.project})
WHERE g.outcome IN ['success', 'failure']
RETURN DISTINCT t.project AS project, e.id AS episode_id, s.id AS id, g.outcome AS outcome

// name: retract_bridge_reports
// mode: write
// The bridge's report of the outcome the relation no longer says (the verdict overruled
// the agent's claim): deleted, so the claim and the verdict are not both counted. The
// claim stays on the task (claimed_outcome); bridge_outcome_reports writes the verdict's.
UNWIND $rows AS row
MATCH (o:OutcomeReport {project: row.project,
                        key: 'bridge:' + row.episode_id + ':' + row.id + ':'
                             + CASE row.outcome WHEN 'success' THEN 'failure' ELSE 'success' END})
DETACH DELETE o

// name: test_lineage
// mode: read
// A test across runs: every verdict of the readable projects that ran it, whether the run
// failed or passed it, and the tasks it judged, oldest run first (a run's time is its first
// task's start, else when its verdict was recorded). At most $limit runs.
UNWIND $projects AS project
MATCH (v:Verdict {project: project})
WHERE $test IN v.tests_failed OR $test IN v.tests_passed
CALL (v) {
  OPTIONAL MATCH (t:Task {project: v.project})-[:JUDGED_BY]->(v)
  WITH t ORDER BY t.started_at, t.id
  RETURN collect(t {.id, .goal, .status, .outcome, .agent, .started_at, .ended_at}) AS tasks
}
WITH v, tasks, coalesce(tasks[0].started_at, v.recorded_at) AS at
RETURN v.project AS project, v.run AS run, v.instance AS instance, v.resolved AS resolved,
       $test IN v.tests_failed AS failed, v.harnesses AS harnesses, tasks, at
ORDER BY at, run, instance, project
LIMIT $limit
