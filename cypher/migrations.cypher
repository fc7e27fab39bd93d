// Migrations: the ledger of what was applied, and the steps themselves. The ledger is one
// (:Metisgraph {name}) node per sequence of migrations; graph/migrations.py runs them.

// name: schema_version
// mode: read
MATCH (m:Metisgraph {name: $ledger})
RETURN coalesce(m.schema_version, 0) AS version

// name: holds_data
// mode: read
// Any node besides the ledger's own: the first one found ends the scan.
OPTIONAL MATCH (n) WHERE NOT n:Metisgraph AND NOT n:SchemaMigration
WITH n LIMIT 1
RETURN n IS NOT NULL AS holds

// name: take_migration_lease
// mode: write
// Taking the node's write lock makes this atomic: one process gets the lease at a time.
MERGE (m:Metisgraph {name: $ledger})
ON CREATE SET m.schema_version = 0, m.created_at = datetime()
WITH m, m.migrating IS NULL
        OR m.migrating < datetime() - duration({seconds: $lease_s}) AS free
SET m.migrating = CASE WHEN free THEN datetime() ELSE m.migrating END
RETURN free AS taken

// name: release_migration_lease
// mode: write
MATCH (m:Metisgraph {name: $ledger})
REMOVE m.migrating

// name: record_migration
// mode: write
MATCH (m:Metisgraph {name: $ledger})
SET m.schema_version = $version, m.migrated_at = datetime()
MERGE (r:SchemaMigration {ledger: $ledger, version: $version})
SET r.name = $title, r.applied_at = datetime(), r.changes = $changes
MERGE (m)-[:APPLIED]->(r)

// name: error_page
// mode: read
// Error nodes in (project, key) order, one page after the last seen; `$project` narrows.
MATCH (r:Error)
WHERE ($project IS NULL OR r.project = $project)
  AND (r.project > $after_project OR (r.project = $after_project AND r.key > $after_key))
RETURN r.project AS project, r.key AS key, r.kind AS kind, r.sample AS sample,
       r.template AS template, r.frames AS frames, r.family_bucket AS family_bucket,
       r.family_tokens AS family_tokens
ORDER BY project, key
LIMIT $limit

// name: park_resigned_errors
// mode: write
// First every error whose key changes steps aside (its key prefixed by '~'), so that no
// old key stands in the way of a new one while the moves below run.
UNWIND $rows AS row
MATCH (r:Error {project: row.project, key: row.old_key})
SET r.key = '~' + row.old_key, r.resign_to = row.key

// name: move_resigned_errors
// mode: write
// Each parked error joins the node of its new key (created from it, or merged into one
// that another error or a later ingest made): every relationship, in and out, moves with
// its type and properties; first and last sightings widen; counts add up.
CYPHER 25
UNWIND $rows AS row
MATCH (old:Error {project: row.project, key: '~' + row.old_key})
WITH row, old, properties(old) AS kept
MERGE (new:Error {project: row.project, key: row.key})
ON CREATE SET new += kept{.*, key: row.key, resign_to: null, first_seen: null, last_seen: null,
                          count: null, former_keys: null}
SET new.kind = row.kind, new.category = row.category, new.signature = row.signature,
    new.template = row.template, new.frames = row.frames, new.symbols = row.symbols,
    new.frames_text = row.frames_text,
    new.family_bucket = row.family_bucket, new.family_tokens = row.family_tokens,
    new.first_seen = CASE WHEN old.first_seen < new.first_seen THEN old.first_seen
                          ELSE coalesce(new.first_seen, old.first_seen) END,
    new.last_seen = CASE WHEN old.last_seen > new.last_seen THEN old.last_seen
                         ELSE coalesce(new.last_seen, old.last_seen) END,
    new.embedding = coalesce(new.embedding, old.embedding),
    new.count = CASE WHEN new.count IS NULL AND old.count IS NULL THEN null
                     ELSE coalesce(new.count, 0) + coalesce(old.count, 0) END,
    new.former_keys = coalesce(new.former_keys, []) + row.old_key
REMOVE new.resign_to
WITH old, new
CALL (old, new) {
  MATCH (old)-[r]->(other) WHERE other <> old
  MERGE (new)-[moved:$(type(r))]->(other)
  SET moved += properties(r)
  DELETE r
}
CALL (old, new) {
  MATCH (other)-[r]->(old) WHERE other <> old
  MERGE (other)-[moved:$(type(r))]->(new)
  SET moved += properties(r)
  // a sighting or fix names its error (schema.cypher hit_sighting, resolved_sighting)
  SET moved.error = CASE WHEN type(r) IN ['HIT', 'RESOLVED'] THEN new.key ELSE moved.error END
  DELETE r
}
DETACH DELETE old
RETURN count(*) AS moved

// ---------------------------------------------------------------------------- the embedding model
// graph/model_stamp.py: the model that made every stored vector, on the ledger node; while a
// re-embedding runs, the model it re-embeds to (`reembedding_*`).

// name: embedding_stamp
// mode: read
MATCH (m:Metisgraph {name: $ledger})
RETURN m.embedding_model AS model, m.embedding_dimension AS dimension,
       m.embedding_fingerprint AS fingerprint,
       m.reembedding_model AS target_model, m.reembedding_dimension AS target_dimension,
       m.reembedding_fingerprint AS target_fingerprint

// name: set_embedding_stamp
// mode: write
MERGE (m:Metisgraph {name: $ledger})
ON CREATE SET m.schema_version = 0, m.created_at = datetime()
SET m.embedding_model = $model, m.embedding_dimension = $dimension,
    m.embedding_fingerprint = $fingerprint, m.embedding_stamped_at = datetime()
REMOVE m.reembedding_model, m.reembedding_dimension, m.reembedding_fingerprint

// name: begin_reembedding
// mode: write
MERGE (m:Metisgraph {name: $ledger})
ON CREATE SET m.schema_version = 0, m.created_at = datetime()
SET m.reembedding_model = $model, m.reembedding_dimension = $dimension,
    m.reembedding_fingerprint = $fingerprint, m.reembedding_since = datetime()

// ------------------------------------------------ outcomes, confidence and decay (learn)

// name: migrate_memory_priors
// mode: batch
// Memories stored before priors were kept apart from the moving confidence, and before
// `active_at`: their confidence was the prior; their last sign of life is their last use,
// else when they were stored. A snippet's source is its first episode's, else a caller's.
// Migration steps run in transactions of $batch rows (a large store outlasts one
// transaction's timeout); each takes only what is still to do, so a step cut short is
// finished by the next run. `$project` narrows one to a project (null: the whole store).
CALL () {
  MATCH (m:Episode) WHERE (m.prior_confidence IS NULL OR m.active_at IS NULL)
                      AND ($project IS NULL OR m.project = $project) RETURN m
  UNION
  MATCH (m:Snippet) WHERE (m.prior_confidence IS NULL OR m.active_at IS NULL)
                      AND ($project IS NULL OR m.project = $project) RETURN m
}
CALL (m) {
  SET m.source = coalesce(m.source,
        head([(e:Episode {project: m.project})-[:GENERATED|USED|MODIFIED]->(m) | e.source]),
        'user')
  WITH m, coalesce($priors[m.source], $fallback) AS given
  SET m.prior_confidence = coalesce(m.prior_confidence, m.confidence, given.mean),
      m.prior_strength = coalesce(m.prior_strength, given.strength),
      m.confidence = coalesce(m.confidence, m.prior_confidence, given.mean),
      m.active_at = coalesce(m.active_at, m.last_used_at, m.last_verified_at, m.recorded_at,
                             m.created_at, datetime())
} IN TRANSACTIONS OF $batch ROWS
RETURN count(*) AS memories

// name: migrate_legacy_outcomes
// mode: batch
// Reuse counted before reports were kept: one report per memory and outcome, with its
// count, in one context ('legacy': nothing says the uses were independent).
CALL () {
  MATCH (m:Episode) WHERE coalesce(m.successes, 0) + coalesce(m.failures, 0) > 0
                      AND ($project IS NULL OR m.project = $project) RETURN m
  UNION
  MATCH (m:Snippet) WHERE coalesce(m.successes, 0) + coalesce(m.failures, 0) > 0
                      AND ($project IS NULL OR m.project = $project) RETURN m
}
WITH m WHERE NOT EXISTS { (m)<-[:ABOUT]-(:OutcomeReport) }
CALL (m) {
  UNWIND [[true, coalesce(m.successes, 0)], [false, coalesce(m.failures, 0)]] AS kind
  WITH m, kind WHERE kind[1] > 0
  CREATE (o:OutcomeReport {project: m.project, memory_id: m.id, success: kind[0],
                           count: kind[1], context: 'legacy',
                           at: coalesce(m.last_used_at, m.active_at, datetime()),
                           key: 'legacy:' + m.id + ':' + toString(kind[0]),
                           label: CASE WHEN m:Episode THEN 'Episode' ELSE 'Snippet' END})
  CREATE (o)-[:ABOUT]->(m)
} IN TRANSACTIONS OF $batch ROWS
RETURN count(*) AS memories

// name: memories_reported
// mode: read
// The memories of one kind with any outcome report, for a recount (keyset pages).
MATCH (o:OutcomeReport {label: $label}) WHERE $project IS NULL OR o.project = $project
WITH DISTINCT o.project AS project, o.memory_id AS id
WHERE project > $after_project OR (project = $after_project AND id > $after_id)
RETURN project, id ORDER BY project, id LIMIT $limit

// name: migrate_project_clocks
// mode: batch
// A project's clock starts at its latest memory's last sign of life. (`e.id IS NOT NULL`
// lets the episode key index find a project's episodes: without it every project scanned
// every episode, and a large store passed the transaction timeout.)
MATCH (p:Project) WHERE p.active_at IS NULL AND ($project IS NULL OR p.name = $project)
CALL (p) {
  OPTIONAL MATCH (e:Episode) WHERE e.project = p.name AND e.id IS NOT NULL
  WITH p, max(e.active_at) AS last
  SET p.active_at = coalesce(last, p.created_at, datetime())
} IN TRANSACTIONS OF $batch ROWS
RETURN count(*) AS projects

// name: lineage_links_count
// mode: read
// Migration 4's before and after: the fix links of the store.
RETURN COUNT { ()-[l:RESOLVED]->(:Error) WHERE l.kind IS NULL } AS unkinded_resolved,
       COUNT { ()-[l:RESOLVED]->(:Error) WHERE l.kind = 'fixed' } AS fixed,
       COUNT { ()-[l:RESOLVED]->(:Error) WHERE l.kind = 'workaround' } AS workaround,
       COUNT { ()-[:ATTEMPTED]->(:Error) } AS attempted,
       COUNT { (:Snippet)-[:FIXES]->(:Error) } AS snippet_fixes,
       COUNT { MATCH (r:Error) WHERE EXISTS { (:Episode)-[:RESOLVED]->(r) }
                                  OR EXISTS { (:Snippet)-[:FIXES]->(r) } } AS errors_with_fix

// name: lineage_tasks_page
// mode: read
// Every task with steps, a page at a time in (project, id) order: migration 4 derives their
// links again.
MATCH (t:Task)
WHERE ($after IS NULL OR t.project > $after.project
       OR (t.project = $after.project AND t.id > $after.id))
  AND EXISTS { (t)-[:HAS_EPISODE]->(:Episode) }
WITH t ORDER BY t.project, t.id
LIMIT $limit
RETURN t.project AS project, t.id AS id

// name: lineage_unkinded_resolved_delete
// mode: write
// RESOLVED links written before attribution (a resolved task's last step to every error the
// task met) that no task's derivation removed: a batch at a time.
MATCH ()-[l:RESOLVED]->(:Error)
WHERE l.kind IS NULL
WITH l LIMIT $limit
DELETE l
RETURN count(*) AS deleted

// ------------------------------------------------ one vector index for an episode's vectors

// name: migrate_episode_vectors
// mode: batch
// Migration 5: every episode's vectors (text, title, with its neighbours) copied onto
// EpisodeVector nodes, the one index recall searches (episode_vectors). MERGE: a run cut
// short is finished by the next.
MATCH (e:Episode)
WHERE e.embedding IS NOT NULL OR e.title_embedding IS NOT NULL OR e.context_embedding IS NOT NULL
CALL (e) {
  UNWIND [{of: 'text', vector: e.embedding}, {of: 'title', vector: e.title_embedding},
          {of: 'context', vector: e.context_embedding}] AS made
  WITH made WHERE made.vector IS NOT NULL
  MERGE (v:EpisodeVector {project: e.project, episode: e.id, of: made.of})
  SET v.embedding = made.vector
} IN TRANSACTIONS OF 1000 ROWS
RETURN count(*) AS episodes

// name: forget_instance_details
// mode: batch
// Migration 6: the originals behind <HOST>, <IP>, <EMAIL>, <HOME> … were kept on every
// episode without anyone asking; none is kept unless an operator opts in
// (METISGRAPH_KEEP_INSTANCE_DETAILS), so what was kept before goes.
MATCH (e:Episode) WHERE e.details IS NOT NULL
CALL (e) { REMOVE e.details } IN TRANSACTIONS OF 1000 ROWS
RETURN count(*) AS episodes_cleared

// name: forget_episode_vector_copies
// mode: batch
// Migration 8: an episode's title and context vectors were kept twice, on the episode and
// on its EpisodeVector nodes (migration 5); only the latter are read, so the episode's
// copies go (the vector indexes over them are dropped at start-up: RETIRED_INDEXES). Runs
// after 5 has made the EpisodeVector nodes from them.
MATCH (e:Episode)
WHERE e.title_embedding IS NOT NULL OR e.context_embedding IS NOT NULL
CALL (e) { REMOVE e.title_embedding, e.context_embedding } IN TRANSACTIONS OF 1000 ROWS
RETURN count(*) AS episodes_cleared

// name: migrate_sighting_keys
// mode: batch
// Migration 9: every HIT and RESOLVED link keeps its error's project and key and its
// episode's created_at (a RESOLVED link kept the time already), so an error's most recent
// sightings are read newest first by an index (schema.cypher hit_sighting,
// resolved_sighting; cypher/situations.cypher relate_situations), not all of them.
MATCH (e:Episode)-[h:HIT|RESOLVED]->(r:Error)
WHERE h.project IS NULL OR h.error IS NULL OR h.at IS NULL OR h.error <> r.key
CALL (e, h, r) {
  SET h.project = r.project, h.error = r.key, h.at = coalesce(h.at, e.created_at)
} IN TRANSACTIONS OF 1000 ROWS
RETURN count(*) AS links_keyed

// name: migrate_report_environments
// mode: batch
// Migration 10: every outcome report keeps the key of the environment it speaks for: the
// environment of the episode it was applied in, or the one its sandbox run ran in (its
// context names it), so a snippet's last word from one environment is read by the index
// outcome_report_env_at (cypher/staleness.cypher stale_facts), not among all its reports.
MATCH (o:OutcomeReport)
WHERE o.env IS NULL AND (o.applied_in IS NOT NULL OR o.context STARTS WITH 'sandbox|')
CALL (o) {
  OPTIONAL MATCH (:Episode {project: o.applied_project, id: o.applied_in})-[:IN_ENV]->(v:Environment)
  WITH o, head(collect(v.key)) AS applied
  SET o.env = CASE WHEN o.context = 'sandbox|-' THEN null
                   WHEN o.context STARTS WITH 'sandbox|' THEN substring(o.context, 8)
                   ELSE applied END
} IN TRANSACTIONS OF 1000 ROWS
RETURN count(*) AS reports_placed
