// Outcome feedback: reports that reusing a memory worked or not, and what they add up to.
// A memory is an Episode, a Snippet or a Pattern: {{label}} is filled with one of them
// (graph/outcomes.py, checked by Query.naming). Each report is a node of its own,
// (:OutcomeReport {project, key})-[:ABOUT]->(memory), unique on (project, key): the key is
// the caller's idempotency key, so the same report sent twice is stored once. A memory's
// statistics and confidence are what all its reports add up to: recounted from them
// (recount_evidence), or, on the write path, added to from the reports the transaction
// wrote (add_evidence: the same totals, without rereading a reused memory's thousands).

// name: memory_label
// mode: read
// Which kind of memory an id names in a project (none: no such memory).
CALL () {
  MATCH (m:Episode {project: $project, id: $id}) RETURN 'Episode' AS label
  UNION
  MATCH (m:Snippet {project: $project, id: $id}) RETURN 'Snippet' AS label
  UNION
  MATCH (m:Pattern {project: $project, id: $id}) RETURN 'Pattern' AS label
}
RETURN label

// name: outcome_report_stored
// mode: read
// A report already stored under this key, if any (what it said, and about what).
MATCH (o:OutcomeReport {project: $project, key: $key})
RETURN o.memory_id AS memory_id, o.success AS success, o.applied_in AS applied_in

// name: record_outcome_report
// mode: write
// One report about one memory. The context says which reports are repeats of each other:
// the project and task the memory was applied in (the episode itself when it has no task)
// and the agent (the task's, else the caller). Without an episode, every report of one
// caller about one memory shares a context. APPLIED_IN links the memory to that episode;
// `env` keeps the key of the episode's environment (read by graph/staleness.py).
// A key already used for another report changes nothing (`same` is false); the note is
// kept (the most recent $keep) only with a new report.
MATCH (m:{{label}} {project: $project, id: $id})
OPTIONAL MATCH (e:Episode {project: $applied_project, id: $applied_in})
OPTIONAL MATCH (t:Task {project: $applied_project, id: e.task_id})
WITH m, e, $applied_project + '|' + coalesce(e.task_id, e.id, '-') + '|'
           + coalesce(t.agent, $agent) AS context,
     COLLECT { MATCH (e)-[:IN_ENV]->(v:Environment) RETURN v.key LIMIT 1 }[0] AS env
MERGE (o:OutcomeReport {project: $project, key: $key})
ON CREATE SET o.memory_id = $id, o.label = $label, o.success = $success, o.context = context,
              o.at = datetime(), o.note = $note, o.applied_in = e.id,
              o.applied_project = CASE WHEN e IS NULL THEN null ELSE $applied_project END,
              o.env = env, o.count = 1, o.created = true
WITH m, e, o, coalesce(o.created, false) AS created
REMOVE o.created
WITH m, e, o, created WHERE o.memory_id = $id AND o.success = $success
MERGE (o)-[:ABOUT]->(m)
WITH m, e, o, created
CALL (m, e, o) {
  WITH m, e, o WHERE e IS NOT NULL
  MERGE (m)-[a:APPLIED_IN]->(e)
  SET a.success = o.success, a.at = o.at
}
CALL (m, created) {
  WITH m, created WHERE created AND $note IS NOT NULL
  SET m.outcome_notes = ([$note] + coalesce(m.outcome_notes, []))[..$keep]
}
RETURN created

// name: bridge_outcome_reports
// mode: write
// The bridge is read as feedback: an episode that GENERATED or USED a snippet and ended in
// success or failure (the outcome stored on the relation) reports it about the snippet,
// once per episode, snippet and outcome, in the episode's task's context. `env` is the key
// of the episode's environment: a snippet's reports from one environment are read by the
// index outcome_report_env_at (graph/staleness.py), not among all its reports.
// The link is read from the episode's side (a few links), never from the snippet's: a
// reused snippet has a link from every episode that used it. Planned once (replan=skip),
// the plan must hold as the store fills: on a bulk load's first batch no snippet exists
// yet, and a plan that seeks the snippet and expands its users then read all of them for
// each row (2.4x the seconds over the 100k build's 120 plans, ~linear in the store).
// $pending: a new report is marked `pending` for add_evidence, in the same transaction,
// to add and unmark (false: the caller recounts instead, and nothing is marked).
CYPHER replan=skip
UNWIND $rows AS row
MATCH (e:Episode {project: row.project, id: row.episode_id})
CALL (e, row) {
  MATCH (e)-[r:GENERATED|USED]->(s:Snippet)
  WHERE s.project = row.project AND s.id = row.id AND r.outcome IN ['success', 'failure']
  RETURN r, s
}
OPTIONAL MATCH (t:Task {project: row.project, id: e.task_id})
MERGE (o:OutcomeReport {project: row.project, key: 'bridge:' + e.id + ':' + s.id + ':' + r.outcome})
ON CREATE SET o.memory_id = s.id, o.label = 'Snippet', o.success = (r.outcome = 'success'),
              o.context = row.project + '|' + coalesce(e.task_id, e.id) + '|'
                          + coalesce(t.agent, '-'),
              o.at = datetime(), o.applied_in = e.id, o.applied_project = row.project,
              o.count = 1, o.pending = CASE WHEN $pending THEN true END
SET o.env = COLLECT { MATCH (e)-[:IN_ENV]->(v:Environment) RETURN v.key LIMIT 1 }[0]
MERGE (o)-[:ABOUT]->(s)

// name: recount_evidence
// mode: write
// A memory's statistics from all its reports. Reports of one outcome from one context
// count 1 + w + w^2 + ... ($repeat_weight = w): repeats add less than independent reports.
// The prior is the memory's own (set when it was stored), else its source's ($priors).
// The first SET takes the node's write lock, so concurrent reports cannot interleave.
UNWIND $keys AS key
MATCH (m:{{label}} {project: key.project, id: key.id})
SET m.outcome_lock = true
WITH m
CALL (m) {
  OPTIONAL MATCH (o:OutcomeReport)-[:ABOUT]->(m)
  WITH o.context AS context, o.success AS success, sum(coalesce(o.count, 1)) AS n,
       max(o.at) AS last
  WHERE success IS NOT NULL
  RETURN sum(n) AS uses,
         sum(CASE WHEN success THEN n ELSE 0 END) AS successes,
         sum(CASE WHEN success THEN 0 ELSE n END) AS failures,
         sum(CASE WHEN success THEN (1.0 - $repeat_weight ^ n) / (1.0 - $repeat_weight)
             ELSE 0.0 END) AS evidence_for,
         sum(CASE WHEN success THEN 0.0
             ELSE (1.0 - $repeat_weight ^ n) / (1.0 - $repeat_weight) END) AS evidence_against,
         count(DISTINCT CASE WHEN success THEN context END) AS contexts,
         max(CASE WHEN success THEN last END) AS confirmed_at,
         max(last) AS last_used_at
}
WITH m, uses, successes, failures, evidence_for, evidence_against, contexts, confirmed_at,
     last_used_at, coalesce($priors[coalesce(m.source, '-')], $fallback) AS given
WITH m, uses, successes, failures, evidence_for, evidence_against, contexts, confirmed_at,
     last_used_at, coalesce(m.prior_confidence, given.mean) AS mean,
     coalesce(m.prior_strength, given.strength) AS strength
SET m.uses = uses, m.successes = successes, m.failures = failures,
    m.evidence_for = evidence_for, m.evidence_against = evidence_against,
    m.contexts = contexts, m.confirmed_at = confirmed_at, m.last_used_at = last_used_at,
    m.prior_confidence = mean, m.prior_strength = strength,
    m.confidence = (mean * strength + evidence_for) / (strength + evidence_for + evidence_against),
    m.active_at = CASE WHEN last_used_at > m.active_at THEN last_used_at
                       ELSE coalesce(m.active_at, last_used_at, datetime()) END
SET m.success_rate = CASE WHEN m:Pattern THEN m.success_rate
                          WHEN uses > 0 THEN toFloat(successes) / uses ELSE null END
REMOVE m.outcome_lock
RETURN m.project AS project, m.id AS id, m.uses AS uses, m.successes AS successes,
       m.failures AS failures, m.success_rate AS success_rate, m.confidence AS confidence,
       m.prior_confidence AS prior_confidence, m.prior_strength AS prior_strength,
       m.evidence_for AS evidence_for, m.evidence_against AS evidence_against,
       m.contexts AS contexts, m.last_used_at AS last_used_at, m.outcome_notes AS notes

// name: add_evidence
// mode: write
// recount_evidence's totals, added to rather than recounted: a reused snippet has thousands
// of reports, and rereading them all at each batch that reported about it grew with the
// store (issue 24: 0.11 -> 0.88 s a plan over the 1M derive). $keys: {project, id,
// reports}, `reports` the keys of the reports written by the statement before with
// `pending` set (bridge_outcome_reports): those are added, and unmarked. A group of n
// reports of one outcome from one context weighs (1 - w^n) / (1 - w); k more add
// w^n (1 - w^k) / (1 - w), n read by the index outcome_report_context (a seek per group:
// the group's own reports, never the memory's others); `contexts` gains the contexts of a first success.
// A memory never counted (a total unset: new in this batch, or stored before its counts)
// is counted from all its reports, as recount_evidence would. The same formulas, the same
// lock first, the same properties set; every other path (reports sent to the API,
// verdicts that retract a report, forgetting, imports, migrations) recounts.
CYPHER replan=skip
UNWIND $keys AS key
MATCH (m:{{label}} {project: key.project, id: key.id})
SET m.outcome_lock = true
WITH m, key,
     m.uses IS NULL OR m.successes IS NULL OR m.failures IS NULL OR m.evidence_for IS NULL
     OR m.evidence_against IS NULL OR m.contexts IS NULL AS whole
CALL (m, key) {
  UNWIND key.reports AS report
  MATCH (o:OutcomeReport {project: m.project, key: report})
  USING INDEX SEEK o:OutcomeReport(project, key)
  WHERE o.pending AND EXISTS { (o)-[:ABOUT]->(m) }
  REMOVE o.pending
  RETURN collect(o) AS fresh
}
CALL (m, whole, fresh) {
  CALL (m, whole, fresh) {
    WITH m WHERE whole
    MATCH (o:OutcomeReport)-[:ABOUT]->(m)
    RETURN o
    UNION ALL
    WITH fresh WHERE NOT whole
    UNWIND fresh AS o
    RETURN o
  }
  WITH m, whole, o.context AS context, o.success AS success, sum(coalesce(o.count, 1)) AS k,
       max(o.at) AS last, collect(o) AS added
  WHERE success IS NOT NULL
  CALL (m, whole, context, success, added) {
    WITH m, context, success, added WHERE NOT whole
    MATCH (q:OutcomeReport {project: m.project, memory_id: m.id, context: context,
                            success: success})
    USING INDEX SEEK q:OutcomeReport(project, memory_id, context, success)
    WHERE NOT q IN added AND EXISTS { (q)-[:ABOUT]->(m) }
    RETURN sum(coalesce(q.count, 1)) AS n
  }
  RETURN sum(k) AS uses,
         sum(CASE WHEN success THEN k ELSE 0 END) AS successes,
         sum(CASE WHEN success THEN 0 ELSE k END) AS failures,
         sum(CASE WHEN success
             THEN $repeat_weight ^ n * (1.0 - $repeat_weight ^ k) / (1.0 - $repeat_weight)
             ELSE 0.0 END) AS evidence_for,
         sum(CASE WHEN success THEN 0.0
             ELSE $repeat_weight ^ n * (1.0 - $repeat_weight ^ k) / (1.0 - $repeat_weight)
             END) AS evidence_against,
         count(DISTINCT CASE WHEN success AND n = 0 THEN context END) AS contexts,
         max(CASE WHEN success THEN last END) AS confirmed_at,
         max(last) AS last_used_at
}
WITH m, CASE WHEN whole THEN uses ELSE m.uses + uses END AS uses,
     CASE WHEN whole THEN successes ELSE m.successes + successes END AS successes,
     CASE WHEN whole THEN failures ELSE m.failures + failures END AS failures,
     CASE WHEN whole THEN evidence_for ELSE m.evidence_for + evidence_for END AS evidence_for,
     CASE WHEN whole THEN evidence_against
          ELSE m.evidence_against + evidence_against END AS evidence_against,
     CASE WHEN whole THEN contexts ELSE m.contexts + contexts END AS contexts,
     CASE WHEN whole OR confirmed_at > m.confirmed_at THEN confirmed_at
          ELSE coalesce(m.confirmed_at, confirmed_at) END AS confirmed_at,
     CASE WHEN whole OR last_used_at > m.last_used_at THEN last_used_at
          ELSE coalesce(m.last_used_at, last_used_at) END AS last_used_at,
     coalesce($priors[coalesce(m.source, '-')], $fallback) AS given
WITH m, uses, successes, failures, evidence_for, evidence_against, contexts, confirmed_at,
     last_used_at, coalesce(m.prior_confidence, given.mean) AS mean,
     coalesce(m.prior_strength, given.strength) AS strength
SET m.uses = uses, m.successes = successes, m.failures = failures,
    m.evidence_for = evidence_for, m.evidence_against = evidence_against,
    m.contexts = contexts, m.confirmed_at = confirmed_at, m.last_used_at = last_used_at,
    m.prior_confidence = mean, m.prior_strength = strength,
    m.confidence = (mean * strength + evidence_for) / (strength + evidence_for + evidence_against),
    m.active_at = CASE WHEN last_used_at > m.active_at THEN last_used_at
                       ELSE coalesce(m.active_at, last_used_at, datetime()) END
SET m.success_rate = CASE WHEN m:Pattern THEN m.success_rate
                          WHEN uses > 0 THEN toFloat(successes) / uses ELSE null END
REMOVE m.outcome_lock
RETURN m.project AS project, m.id AS id, m.uses AS uses, m.successes AS successes,
       m.failures AS failures, m.success_rate AS success_rate, m.confidence AS confidence,
       m.prior_confidence AS prior_confidence, m.prior_strength AS prior_strength,
       m.evidence_for AS evidence_for, m.evidence_against AS evidence_against,
       m.contexts AS contexts, m.last_used_at AS last_used_at, m.outcome_notes AS notes

// name: touch_project
// mode: write
// The project's clock: the last time anything in it was stored or used (decay reads it).
// Moved at most once an hour, so concurrent writers rarely wait for the project's lock.
UNWIND $projects AS name
MATCH (p:Project {name: name})
WITH p WHERE p.active_at IS NULL OR p.active_at < datetime() - duration('PT1H')
SET p.active_at = datetime()
