// Writes: batched UNWIND ... MERGE, idempotent by content keys. Every row carries `project`.
// Values arrive only as parameters.
// `CYPHER replan=skip`: every query here starts from a uniqueness-constraint seek, so its
// plan does not depend on how many nodes there are; without it, Neo4j replans each of them
// whenever the label counts of a growing graph drift (a third of its CPU during an ingest).

// name: existing_episode_hashes
// mode: read
CYPHER replan=skip
UNWIND $keys AS key
MATCH (e:Episode {project: key.project, id: key.id})
RETURN e.project AS project, e.id AS id, e.content_hash AS content_hash

// name: existing_error_keys
// mode: read
CYPHER replan=skip
UNWIND $keys AS key
MATCH (r:Error {project: key.project, key: key.key})
WHERE r.embedding IS NOT NULL
RETURN r.project AS project, r.key AS key

// name: existing_environment_keys
// mode: read
// The environments already stored: their key hashes every field and package, so one seen
// again has nothing new for staleness to judge (graph/staleness.py).
CYPHER replan=skip
UNWIND $keys AS key
MATCH (v:Environment {project: key.project, key: key.key})
RETURN v.project AS project, v.key AS key

// name: upsert_projects
// mode: write
CYPHER replan=skip
UNWIND $projects AS name
MERGE (p:Project {name: name})
ON CREATE SET p.created_at = datetime(), p.active_at = datetime()
// A project without its kept sizes (new, a store from before migration 12, or its node made
// by another path) gets them counted once; then each write moves them by the tasks and
// episodes it creates (`uncounted` marks one between its MERGE and the count) and
// forgetting by those it deletes. `explore_projects` reads them, whatever the project's size.
WITH p
CALL (p) {
  WITH p WHERE p.task_total IS NULL OR p.episode_total IS NULL
  SET p.task_total = COUNT { MATCH (t:Task {project: p.name}) WHERE t.id IS NOT NULL },
      p.episode_total = COUNT { MATCH (e:Episode {project: p.name}) WHERE e.id IS NOT NULL }
}
WITH p
// A project without its errors' totals (new, or its node made by another path) gets them
// set whole, each error settled (cypher/error_counts.cypher); then they are only moved.
WITH p WHERE p.error_total IS NULL
CALL (p) {
  MATCH (r:Error {project: p.name})
  WHERE r.key IS NOT NULL
  SET r.tallied = CASE WHEN r.fixed_at IS NULL OR coalesce(r.last_sighting > r.fixed_at, false)
                       THEN 1 ELSE 0 END
  RETURN count(r) AS total, sum(r.tallied) AS open
}
SET p.error_total = total, p.error_open = open

// name: upsert_tasks
// mode: write
CYPHER replan=skip
UNWIND $rows AS row
MERGE (t:Task {project: row.project, id: row.id})
ON CREATE SET t.recorded_at = datetime(), t.uncounted = true
SET t += row.props
WITH t, row
MATCH (p:Project {name: row.project})
MERGE (p)-[:HAS_TASK]->(t)
// the project's kept size moved by the tasks made here (upsert_projects)
WITH p, [x IN collect(DISTINCT t) WHERE x.uncounted] AS made
FOREACH (x IN made | REMOVE x.uncounted)
SET p.task_total = p.task_total + size(made)

// name: unlink_replaced_episodes
// mode: write
// An episode recorded again with other content (or by a newer pipeline): the links derived
// from its old content go, and the statements below derive them again from the new content
// in the same transaction. Tools, tags and symbols no episode or snippet uses any more go
// too. Its task, chain, resolution, reviews, reuse counts and code links stay.
CYPHER replan=skip
UNWIND $rows AS row
MATCH (e:Episode {project: row.project, id: row.id})-[r:HIT|USED_TOOL|IN_ENV|TAGGED|MENTIONS]->(n)
DELETE r
WITH DISTINCT n, row
WHERE (n:Tool OR n:Tag OR n:Symbol) AND n.project = row.project AND NOT EXISTS { (n)--() }
DELETE n

// name: unlink_replaced_tools
// mode: write
// An episode recorded again with other content: its tool uses go before its new content is
// written (`unlink_replaced_episodes` removes the links; here each tool's statistics lose
// this use, counted with the outcome it was counted with; `upsert_tools` adds the new ones).
CYPHER replan=skip
UNWIND $rows AS row
MATCH (e:Episode {project: row.project, id: row.id})
CALL (e) {
  MATCH (e)-[u:USED_TOOL]->(t:Tool)
  DELETE u
  SET t.uses = t.uses - 1,
      t.successes = t.successes - CASE WHEN e.outcome = 'success' THEN 1 ELSE 0 END,
      t.failures = t.failures - CASE WHEN e.outcome = 'failure' THEN 1 ELSE 0 END
  SET t.failure_rate = CASE WHEN t.uses = 0 THEN null ELSE toFloat(t.failures) / t.uses END
  WITH t, e
  CALL (t, e) {
    WITH t, e WHERE t.last_used_at IS NOT NULL AND e.created_at >= t.last_used_at
    CALL (t) {
      // it was the last use: the one before it read (only then at the cost of the tool's uses)
      OPTIONAL MATCH (x:Episode {project: t.project})-[:USED_TOOL]->(t)
      RETURN max(x.created_at) AS last
    }
    SET t.last_used_at = last
  }
  // a tool nothing uses any more goes, as `unlink_replaced_episodes` does for tags and
  // symbols (its link is gone before that statement looks for orphans)
  WITH t WHERE NOT EXISTS { (t)--() }
  DELETE t
}

// name: unlink_replaced_situations
// mode: write
// Contradictions and supersessions were derived from the old content too: derived again
// after the write (cypher/situations.cypher).
CYPHER replan=skip
UNWIND $rows AS row
MATCH (e:Episode {project: row.project, id: row.id})-[r:CONTRADICTS|SUPERSEDES]-()
DELETE r

// name: upsert_episodes
// mode: write
// `active_at` (stored, then last used or confirmed) is what decay and the cold tier read;
// `confidence` starts at the prior and moves with outcome reports (cypher/outcomes.cypher):
// an episode recorded again with other content is recounted after (graph/writes.py).
CYPHER replan=skip
UNWIND $rows AS row
MERGE (e:Episode {project: row.project, id: row.id})
ON CREATE SET e.recorded_at = datetime(), e.uses = 0, e.successes = 0, e.failures = 0,
              e.review_status = row.review_status, e.active_at = datetime(),
              e.confidence = row.props.prior_confidence, e.uncounted = true
SET e += row.props,
    e.cites = row.props.cites,
    e.details = row.details,
    e.active_at = coalesce(e.active_at, datetime()),
    e.created_at = coalesce(row.created_at, e.created_at, datetime()),
    e.embedding = row.embedding,
    e.recallable = coalesce(e.review_status, row.review_status) <> 'rejected'
WITH e, row
CALL (e, row) {
  // Its text vector (also kept as e.embedding) and its title's, only here, as EpisodeVector
  // nodes: the one index recall searches.
  UNWIND [{of: 'text', vector: row.embedding}, {of: 'title', vector: row.title_embedding}] AS made
  OPTIONAL MATCH (old:EpisodeVector {project: e.project, episode: e.id, of: made.of})
  WITH made, old
  CALL (made, old) {
    WITH made, old WHERE made.vector IS NULL AND old IS NOT NULL
    DELETE old
  }
  WITH made WHERE made.vector IS NOT NULL
  MERGE (v:EpisodeVector {project: e.project, episode: e.id, of: made.of})
  SET v.embedding = made.vector
}
WITH e, row
OPTIONAL CALL (e, row) {
  WITH e, row WHERE row.task_id IS NOT NULL
  MERGE (t:Task {project: row.project, id: row.task_id})
  ON CREATE SET t.recorded_at = datetime(), t.goal = null, t.status = 'open', t.uncounted = true
  MERGE (t)-[:HAS_EPISODE]->(e)
  RETURN t
}
// the project's kept sizes moved by the episodes and tasks made here (upsert_projects)
WITH row.project AS project, collect(DISTINCT e) AS episodes, collect(DISTINCT t) AS tasks
WITH project, [x IN episodes WHERE x.uncounted] AS made, [x IN tasks WHERE x.uncounted] AS opened
FOREACH (x IN made + opened | REMOVE x.uncounted)
WITH project, size(made) AS made, size(opened) AS opened WHERE made + opened > 0
MATCH (p:Project {name: project})
SET p.episode_total = p.episode_total + made, p.task_total = p.task_total + opened

// name: link_task_chains
// mode: write
// NEXT links consecutive steps of each task, in step order (then created_at, id).
CYPHER replan=skip
UNWIND $tasks AS key
MATCH (t:Task {project: key.project, id: key.id})-[:HAS_EPISODE]->(e:Episode {project: key.project})
WITH t, e ORDER BY coalesce(e.step, 2147483647), e.created_at, e.id
WITH t, collect(e) AS steps
UNWIND range(0, size(steps) - 2) AS i
WITH steps[i] AS a, steps[i + 1] AS b
MERGE (a)-[:NEXT]->(b)

// name: upsert_errors
// mode: write
CYPHER replan=skip
UNWIND $rows AS row
MERGE (r:Error {project: row.project, key: row.key})
ON CREATE SET r.kind = row.kind, r.category = row.category, r.signature = row.signature,
              r.template = row.template, r.frames = row.frames, r.symbols = row.symbols,
              r.frames_text = row.frames_text, r.sample = row.sample,
              r.family_bucket = row.family_bucket, r.family_tokens = row.family_tokens,
              r.first_seen = row.seen, r.last_seen = row.seen
SET r.first_seen = CASE WHEN row.seen < r.first_seen THEN row.seen ELSE r.first_seen END,
    r.last_seen = CASE WHEN row.seen > r.last_seen THEN row.seen ELSE r.last_seen END,
    r.embedding = coalesce(row.embedding, r.embedding)
WITH collect(DISTINCT r) AS touched
CALL (touched) {
  // a new error counts in its project's kept totals (error_total, error_open)
  UNWIND touched AS r
  WITH r, r.tallied AS was,
       CASE WHEN r.fixed_at IS NULL OR coalesce(r.last_sighting > r.fixed_at, false)
            THEN 1 ELSE 0 END AS open
  WHERE was IS NULL OR was <> open
  SET r.tallied = open
  WITH r.project AS project, sum(CASE WHEN was IS NULL THEN 1 ELSE 0 END) AS added,
       sum(open - coalesce(was, 0)) AS opened
  MATCH (p:Project {name: project})
  SET p.error_total = p.error_total + added, p.error_open = p.error_open + opened
}

// name: upsert_environments
// mode: write
CYPHER replan=skip
UNWIND $rows AS row
MERGE (v:Environment {project: row.project, key: row.key})
SET v.os = row.os, v.os_version = row.os_version, v.arch = row.arch,
    v.runtime = row.runtime, v.runtime_version = row.runtime_version,
    v.package_count = size(row.packages)
WITH v, row
CALL (v, row) {
  UNWIND row.packages AS pkg
  MERGE (k:Package {project: row.project, name: pkg.name})
  MERGE (v)-[h:HAS_PACKAGE]->(k)
  SET h.version = pkg.version
}
WITH v, row
UNWIND row.episode_ids AS episode_id
MATCH (e:Episode {project: row.project, id: episode_id})
MERGE (e)-[:IN_ENV]->(v)

// name: upsert_tools
// mode: write
// A tool's statistics (uses, successes, failures, the last use, the failure rate the `tools`
// query ranks by) move by each new use, at its cost: recounting a tool from every episode
// that used it at each batch grew with the store (a shell every step runs). A tool without
// statistics (stored before they were kept) is counted whole once. Each use in its own
// subquery, so a use sees the links the uses before it made.
CYPHER replan=skip
UNWIND $rows AS row
MERGE (t:Tool {project: row.project, name: row.name})
ON CREATE SET t.kind = row.kind
WITH t, row
CALL (t) {
  WITH t WHERE t.uses IS NULL
  OPTIONAL MATCH (e:Episode {project: t.project})-[:USED_TOOL]->(t)
  WITH t, count(e) AS uses, count(CASE WHEN e.outcome = 'success' THEN 1 END) AS successes,
       count(CASE WHEN e.outcome = 'failure' THEN 1 END) AS failures,
       max(e.created_at) AS last_used_at
  SET t.uses = uses, t.successes = successes, t.failures = failures,
      t.last_used_at = last_used_at
}
CALL (t, row) {
  UNWIND row.episode_ids AS episode_id
  CALL (t, row, episode_id) {
    MATCH (e:Episode {project: row.project, id: episode_id})
    WHERE NOT EXISTS { (e)-[:USED_TOOL]->(t) }
    CREATE (e)-[:USED_TOOL]->(t)
    SET t.uses = t.uses + 1,
        t.successes = t.successes + CASE WHEN e.outcome = 'success' THEN 1 ELSE 0 END,
        t.failures = t.failures + CASE WHEN e.outcome = 'failure' THEN 1 ELSE 0 END,
        t.last_used_at = CASE WHEN t.last_used_at IS NULL OR e.created_at > t.last_used_at
                              THEN e.created_at ELSE t.last_used_at END
  }
}
SET t.failure_rate = CASE WHEN t.uses = 0 THEN null ELSE toFloat(t.failures) / t.uses END

// name: upsert_tags
// mode: write
CYPHER replan=skip
UNWIND $rows AS row
MERGE (g:Tag {project: row.project, name: row.name})
ON CREATE SET g.value = row.value
WITH g, row
UNWIND row.episode_ids AS episode_id
MATCH (e:Episode {project: row.project, id: episode_id})
MERGE (e)-[:TAGGED]->(g)

// name: upsert_symbols
// mode: write
// Code locations (classes, modules, files) the episodes are about.
CYPHER replan=skip
UNWIND $rows AS row
MERGE (s:Symbol {project: row.project, name: row.name})
WITH s, row
UNWIND row.episode_ids AS episode_id
MATCH (e:Episode {project: row.project, id: episode_id})
MERGE (e)-[:MENTIONS]->(s)

// name: task_neighbourhoods
// mode: read
// Every embedded episode of the given tasks, in chain order, for the context channels.
CYPHER replan=skip
UNWIND $tasks AS key
MATCH (:Task {project: key.project, id: key.id})-[:HAS_EPISODE]->(e:Episode {project: key.project})
WHERE e.embedding IS NOT NULL
RETURN key.project AS project, key.id AS task, e.id AS id, e.summary AS summary,
       e.embedding AS embedding, e.step AS step, e.created_at AS created_at
ORDER BY project, task, coalesce(e.step, 2147483647), e.created_at, e.id

// name: set_context
// mode: write
CYPHER replan=skip
UNWIND $rows AS row
MATCH (e:Episode {project: row.project, id: row.id})
// Its vector with its neighbours is kept only as an EpisodeVector of 'context'.
SET e.context_text = row.text
WITH e, row
CALL (e, row) {
  OPTIONAL MATCH (old:EpisodeVector {project: e.project, episode: e.id, of: 'context'})
  WITH old WHERE row.vector IS NULL AND old IS NOT NULL
  DELETE old
}
CALL (e, row) {
  WITH e, row WHERE row.vector IS NOT NULL
  MERGE (v:EpisodeVector {project: e.project, episode: e.id, of: 'context'})
  SET v.embedding = row.vector
}

// name: memorize_resolution
// mode: write
// A task that ended resolved: earlier open (unknown / partial) episodes are marked resolved,
// linked to the episode that resolved it. The task's verdict claims no error: which step
// dealt with each error is derived from evidence (graph/lineage/attribution.py).
// Failures keep their outcome and their errors.
CYPHER replan=skip
UNWIND $tasks AS key
MATCH (t:Task {project: key.project, id: key.id})
WHERE t.status = 'resolved'
MATCH (t)-[:HAS_EPISODE]->(e:Episode {project: key.project})
WITH t, e ORDER BY coalesce(e.step, -1) DESC, e.created_at DESC
WITH t, collect(e) AS episodes
WITH t, episodes, head([x IN episodes WHERE x.outcome = 'success'] + episodes) AS final
CALL (t, episodes, final) {
  UNWIND episodes AS e
  WITH e, final
  WHERE e <> final
  // a step an earlier batch took for the final one (the task's later steps came after it):
  // the graph is the same whichever batches the steps came in
  CALL (e, final) {
    OPTIONAL MATCH (e)-[old:RESOLVED_BY]->(x:Episode)
    WHERE x <> final
    DELETE old
  }
  SET e.resolution = CASE WHEN e.resolution = 'resolves_task' THEN null ELSE e.resolution END
  WITH e, final
  WHERE e.outcome IN ['unknown', 'partial']
  SET e.resolution = 'resolved', e.resolved_by = final.id
  MERGE (e)-[:RESOLVED_BY]->(final)
}
SET final.resolution = 'resolves_task'

// name: count_cited
// mode: write
// The memories a step cited (`cites`: the planContext memories it relied on) are linked
// (e)-[:CITED]->(m); once the step, or its task, ended in success each counts as used: its
// decay clock restarts (`active_at`, as an outcome report's does; graph/decay.py), once
// per citing step (`counted_at`). The steps looked at: $episodes (the batch's that cite)
// and every step of $tasks (a task that ended in success counts what its steps cited).
CYPHER replan=skip
CALL () {
  UNWIND $episodes AS key
  MATCH (e:Episode {project: key.project, id: key.id})
  RETURN e
  UNION
  UNWIND $tasks AS key
  MATCH (:Task {project: key.project, id: key.id})-[:HAS_EPISODE]->(e:Episode {project: key.project})
  RETURN e
}
WITH e WHERE e.cites IS NOT NULL
OPTIONAL MATCH (t:Task {project: e.project})-[:HAS_EPISODE]->(e)
WITH e, e.outcome = 'success' OR coalesce(t.outcome = 'success' OR t.status = 'resolved', false)
        AS worked
CALL (e) {
  OPTIONAL MATCH (e)-[old:CITED]->(x)
  WHERE NOT x.id IN e.cites
  DELETE old
}
UNWIND e.cites AS cited
CALL (e, cited) {
  MATCH (m:Episode {project: e.project, id: cited})
  RETURN m
  UNION
  MATCH (m:Snippet {project: e.project, id: cited})
  RETURN m
}
WITH e, m, worked WHERE m <> e
MERGE (e)-[c:CITED]->(m)
WITH c, m, worked WHERE worked AND c.counted_at IS NULL
SET c.counted_at = datetime(), m.cited_at = datetime(),
    m.active_at = CASE WHEN m.active_at IS NULL OR m.active_at < datetime() THEN datetime()
                       ELSE m.active_at END

// name: attribution_facts
// mode: read
// The steps of each task in chain order — what each did and the errors it hit — and the
// errors with what they say: what graph/lineage/attribution.py weighs. The tasks are those
// given, and those of the episodes given (snippet records link to).
CYPHER replan=skip
CALL () {
  UNWIND $tasks AS key
  MATCH (t:Task {project: key.project, id: key.id})
  RETURN t
  UNION
  UNWIND $episodes AS key
  MATCH (t:Task)-[:HAS_EPISODE]->(:Episode {project: key.project, id: key.id})
  RETURN t
}
MATCH (t)-[:HAS_EPISODE]->(e:Episode {project: t.project})
WITH t, e ORDER BY coalesce(e.step, 2147483647), e.created_at, e.id
WITH t, collect(e {.id, .outcome, .action_type, .action_command, .action_parameters,
                   hits: COLLECT { MATCH (e)-[:HIT]->(r:Error) RETURN r.key },
                   // what a sighting printed: an error's stored sample is its first one
                   said: CASE WHEN EXISTS { (e)-[:HIT]->(:Error) }
                              THEN left(coalesce(e.error_text, '') + '\n'
                                        + coalesce(e.observation, ''), 4000) END,
                   code: COLLECT { MATCH (e)-[:GENERATED|MODIFIED]->(s:Snippet)
                                   RETURN left(coalesce(s.template, ""), 4000) }}) AS steps
RETURN t.project AS project, t.id AS task, steps,
       COLLECT { MATCH (t)-[:HAS_EPISODE]->(:Episode)-[:HIT]->(r:Error {project: t.project})
                 WITH DISTINCT r
                 RETURN r {.key, .kind, .sample, .frames, .symbols} } AS errors,
       // the errors its steps resolved before this derivation: their fixes are recounted
       COLLECT { MATCH (t)-[:HAS_EPISODE]->(:Episode)-[:RESOLVED]->(r:Error {project: t.project})
                 RETURN DISTINCT r.key } AS resolved

// name: attribution_links
// mode: write
// The links of the tasks given, derived whole: the old ones go, the new ones are written.
// RESOLVED {kind: fixed | workaround} from the step that dealt with the error, ATTEMPTED
// from a step that acted on it without ending it, and the fixing step's code FIXES it.
// A new RESOLVED link clears the step's `situated` stamp (what it resolved is part of its
// situation); the same link written again leaves it.
CYPHER replan=skip
UNWIND $tasks AS key
MATCH (t:Task {project: key.project, id: key.id})
CALL (t) {
  MATCH (t)-[:HAS_EPISODE]->(e:Episode {project: t.project})-[x:RESOLVED|ATTEMPTED]->(:Error)
  WHERE x.task IS NULL OR x.task = t.id
  DELETE x
}
CALL (t) {
  // by the index on the links' task (schema.cypher fixes_task), then the project's
  MATCH (s:Snippet)-[f:FIXES]->(:Error)
  WHERE f.task = t.id AND s.project = t.project
  DELETE f
}
WITH t, key
UNWIND key.links AS link
MATCH (t)-[:HAS_EPISODE]->(e:Episode {project: t.project, id: link.episode})
MATCH (r:Error {project: t.project, key: link.error})
CALL (t, e, r, link) {
  WITH t, e, r, link WHERE link.kind = 'attempt'
  MERGE (e)-[a:ATTEMPTED]->(r)
  SET a.task = t.id, a.rule = link.rule, a.why = link.why, a.confidence = link.confidence
}
CALL (t, e, r, link) {
  WITH t, e, r, link WHERE link.kind <> 'attempt'
  MERGE (e)-[l:RESOLVED]->(r)
  ON CREATE SET e.situated = null
  SET l.task = t.id, l.kind = link.kind, l.rule = link.rule, l.why = link.why,
      l.confidence = link.confidence, l.at = e.created_at,
      l.project = r.project, l.error = r.key  // read newest first: schema.cypher resolved_sighting
}
CALL (t, e, r, link) {
  WITH t, e, r, link WHERE link.kind = 'fixed'
  MATCH (e)-[:GENERATED|MODIFIED|USED]->(s:Snippet {project: t.project})
  MERGE (s)-[f:FIXES {task: t.id}]->(r)
  SET f.episode = e.id, f.at = e.created_at, f.rule = link.rule, f.why = link.why,
      f.confidence = link.confidence
}

// name: recount_tools
// mode: write
// A tool's statistics in its project, recounted from the episodes that used it (after
// forgetting; a write keeps them by `upsert_tools`): uses, successes, failures, the last
// use, and the failure rate the `tools` query ranks by.
CYPHER replan=skip
UNWIND $rows AS row
MATCH (t:Tool {project: row.project, name: row.name})
CALL (t) {
  OPTIONAL MATCH (e:Episode {project: t.project})-[:USED_TOOL]->(t)
  RETURN count(e) AS uses,
         count(CASE WHEN e.outcome = 'success' THEN 1 END) AS successes,
         count(CASE WHEN e.outcome = 'failure' THEN 1 END) AS failures,
         max(e.created_at) AS last_used_at
}
SET t.uses = uses, t.successes = successes, t.failures = failures,
    t.last_used_at = last_used_at,
    t.failure_rate = CASE WHEN uses = 0 THEN null ELSE toFloat(failures) / uses END
