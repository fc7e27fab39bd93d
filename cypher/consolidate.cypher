// Consolidation (metisgraph maintain): duplicates merged, lessons grouped into patterns,
// dead snippets retired. Values arrive only as parameters. An episode is dirty while
// `consolidated` (the content hash maintain last saw) differs from its `content_hash`.

// name: maintain_pending
// mode: read
// What a run has to do: dirty episodes, and patterns whose members were forgotten since
// (the episodes to relate again are listed by maintain_unsituated itself).
RETURN COUNT { MATCH (e:Episode {project: $project})
               WHERE e.embedding IS NOT NULL
                 AND (e.consolidated IS NULL OR e.consolidated <> e.content_hash) } AS dirty,
       COUNT { MATCH (e:Episode {project: $project}) WHERE e.embedding IS NOT NULL } AS embedded,
       COUNT { MATCH (p:Pattern {project: $project})
               WHERE p.episodes <> COUNT { (p)-[:SUMMARIZES]->() } } AS shrunk

// name: maintain_projects
// mode: read
// Every project with episodes maintain has not seen, or patterns to refresh.
MATCH (p:Project)
WHERE EXISTS { MATCH (e:Episode {project: p.name})
               WHERE e.embedding IS NOT NULL
                 AND (e.consolidated IS NULL OR e.consolidated <> e.content_hash) }
   OR EXISTS { MATCH (q:Pattern {project: p.name})
               WHERE q.episodes <> COUNT { (q)-[:SUMMARIZES]->() } }
   OR EXISTS { MATCH (e:Episode {project: p.name})
               WHERE NOT coalesce(e.situated = coalesce(e.content_hash, '') + '|'
                                  + coalesce(e.outcome, '') + '|'
                                  + toString(coalesce(e.recallable, false)), false) }
RETURN p.name AS project ORDER BY project

// name: maintain_unsituated
// mode: read
// The episodes whose conflicts and supersessions are not written for what they are now: new
// or changed ones, and those a later RESOLVED link or code across the bridge unstamped.
MATCH (e:Episode {project: $project})
WHERE NOT coalesce(e.situated = coalesce(e.content_hash, '') + '|' + coalesce(e.outcome, '')
                   + '|' + toString(coalesce(e.recallable, false)), false)
RETURN e.id AS id ORDER BY id

// name: maintain_episodes
// mode: read
// One page of the project's embedded episodes, in id order, as consolidation sees them.
MATCH (e:Episode {project: $project})
WHERE e.id > $after AND e.embedding IS NOT NULL
WITH e ORDER BY e.id LIMIT $page
RETURN e.id AS id, e.embedding AS embedding, coalesce(e.outcome, 'unknown') AS outcome,
       coalesce(e.kind, 'episode') AS kind, toString(e.created_at) AS created_at,
       (e.consolidated IS NULL OR e.consolidated <> e.content_hash) AS dirty,
       e.duplicate_of AS duplicate_of, e.task_id AS task,
       [(e)-[:HIT]->(r:Error) | r.key] AS errors,
       [(e)-[:USED_TOOL]->(t:Tool) | t.name] AS tools,
       head([(p:Pattern)-[:SUMMARIZES]->(e) | p.id]) AS pattern

// name: maintain_candidates
// mode: read
// A periodic run's reading list (graph/consolidate.py), for a run with few dirty episodes:
// the dirty ones; the episodes sharing with one of them an error or a tool of at most $cap
// sightings or uses (a larger group is never compared as one: lessons.py block_cap); their
// $neighbours nearest text vectors scoring at least $score (the index's score, (1 + cosine)
// / 2); and every member of a pattern any of these belongs to (its support is recounted
// whole). What the store holds besides is not read.
CYPHER 25
MATCH (d:Episode {project: $project})
WHERE d.embedding IS NOT NULL AND (d.consolidated IS NULL OR d.consolidated <> d.content_hash)
CALL (d) {
  RETURN d.id AS id
  UNION
  MATCH (d)-[:HIT]->(r:Error) WHERE r.sightings <= $cap
  MATCH (r)<-[:HIT]-(o:Episode)
  RETURN o.id AS id
  UNION
  MATCH (d)-[:USED_TOOL]->(t:Tool) WHERE t.uses <= $cap
  MATCH (t)<-[:USED_TOOL]-(o:Episode)
  RETURN o.id AS id
  UNION
  MATCH (v:EpisodeVector)
    SEARCH v IN (
      VECTOR INDEX episode_vectors
      FOR d.embedding
      WHERE v.project = $project AND v.of = 'text'
      LIMIT $neighbours
    ) SCORE AS score
  WITH v, score WHERE score >= $score
  RETURN v.episode AS id
}
WITH DISTINCT id
CALL (id) {
  RETURN id AS member
  UNION
  MATCH (:Episode {project: $project, id: id})<-[:SUMMARIZES]-(:Pattern)-[:SUMMARIZES]->(m:Episode)
  RETURN m.id AS member
}
RETURN DISTINCT member AS id ORDER BY id

// name: maintain_episodes_by_id
// mode: read
// These episodes as consolidation sees them (maintain_episodes), with the errors and tools
// they share with more than $cap others: groups the plan must not compare as one, though
// only some of their episodes are read.
UNWIND $ids AS id
MATCH (e:Episode {project: $project, id: id})
WHERE e.embedding IS NOT NULL
RETURN e.id AS id, e.embedding AS embedding, coalesce(e.outcome, 'unknown') AS outcome,
       coalesce(e.kind, 'episode') AS kind, toString(e.created_at) AS created_at,
       (e.consolidated IS NULL OR e.consolidated <> e.content_hash) AS dirty,
       e.duplicate_of AS duplicate_of, e.task_id AS task,
       [(e)-[:HIT]->(r:Error) | r.key] AS errors,
       [(e)-[:USED_TOOL]->(t:Tool) | t.name] AS tools,
       head([(p:Pattern)-[:SUMMARIZES]->(e) | p.id]) AS pattern,
       [(e)-[:HIT]->(r:Error) WHERE NOT coalesce(r.sightings <= $cap, false) | r.key]
         AS large_errors,
       [(e)-[:USED_TOOL]->(t:Tool) WHERE NOT coalesce(t.uses <= $cap, false) | t.name]
         AS large_tools

// name: maintain_stored_patterns
// mode: read
MATCH (p:Pattern {project: $project})
RETURN p.id AS id, p.seed AS seed,
       p.episodes <> COUNT { (p)-[:SUMMARIZES]->() } AS shrunk

// name: maintain_duplicates
// mode: write
// Dirty episodes found to be the same memory as a canonical one. What pointed at a new
// duplicate now points at its canonical: a duplicate never has duplicates of its own.
UNWIND $rows AS row
MATCH (e:Episode {project: $project, id: row.id})
MATCH (c:Episode {project: $project, id: row.canonical})
OPTIONAL MATCH (e)-[old:DUPLICATE_OF]->()
DELETE old
WITH e, c, row
MERGE (e)-[d:DUPLICATE_OF]->(c)
SET d.similarity = row.similarity, d.exact = row.exact, e.duplicate_of = c.id
WITH e, c
OPTIONAL MATCH (x:Episode {project: $project})-[r:DUPLICATE_OF]->(e)
WITH c, x, r WHERE x IS NOT NULL
DELETE r
MERGE (x)-[n:DUPLICATE_OF]->(c)
SET x.duplicate_of = c.id, n.similarity = null, n.exact = false

// name: maintain_unduplicate
// mode: write
// Dirty episodes that are no longer anyone's duplicate (their content changed).
UNWIND $ids AS id
MATCH (e:Episode {project: $project, id: id})-[old:DUPLICATE_OF]->()
DELETE old
SET e.duplicate_of = null

// name: maintain_dissolve
// mode: write
UNWIND $ids AS id
MATCH (p:Pattern {project: $project, id: id})
DETACH DELETE p

// name: maintain_patterns
// mode: write
// Each touched pattern with its members and seed; SUMMARIZES follows the members exactly.
UNWIND $rows AS row
MERGE (p:Pattern {project: $project, id: row.id})
ON CREATE SET p.created_at = datetime()
SET p.seed = row.seed, p.embedding = row.embedding, p.updated_at = datetime(),
    p.active_at = datetime()
WITH p, row
OPTIONAL MATCH (p)-[old:SUMMARIZES]->(gone:Episode)
WHERE NOT gone.id IN row.members
DELETE old
WITH DISTINCT p, row
UNWIND row.members AS member
MATCH (e:Episode {project: $project, id: member})
MERGE (p)-[:SUMMARIZES]->(e)

// name: maintain_pattern_stats
// mode: write
// A pattern's statistics, read from its members: support (independent sources), episodes, the
// success rate, the environments and tools, the errors, and its extractive summary — the
// seed's own words, then what the members share. RECOMMENDS the best snippet they used.
UNWIND $ids AS id
MATCH (p:Pattern {project: $project, id: id})
MATCH (p)-[:SUMMARIZES]->(e:Episode)
WITH p, collect(e) AS members
MATCH (seed:Episode {project: $project, id: p.seed})
WITH p, members, seed,
     size([m IN members WHERE m.outcome = 'success']) AS successes,
     size([m IN members WHERE m.outcome = 'failure']) AS failures,
     size(reduce(seen = [], m IN members |
       CASE WHEN coalesce(m.task_id, '#' + m.id) IN seen THEN seen
            ELSE seen + coalesce(m.task_id, '#' + m.id) END)) AS sources
// support: independent sources (distinct tasks; an episode without a task is its own).
// The trust prior comes from the members: a Beta with their success rate (smoothed by
// one success and one failure, so four of four is 0.83, not a certainty) worth as many
// reports as independent sources; reports about the pattern itself then move it
// (graph/outcomes.py recounts it after this query).
SET p.support = sources, p.episodes = size(members), p.successes = successes,
    p.failures = failures, p.success_rate = toFloat(successes) / size(members),
    p.prior_confidence = (successes + 1.0) / (size(members) + 2.0),
    p.prior_strength = toFloat(sources),
    p.outcome = seed.outcome, p.kind = seed.kind,
    p.title = coalesce(seed.title, left(seed.summary, 160))
WITH p, members, seed
WITH p, members, seed,
     COLLECT { UNWIND members AS m MATCH (m)-[:IN_ENV]->(v:Environment)
               RETURN DISTINCT v.key AS key ORDER BY key LIMIT 20 } AS environments,
     COLLECT { UNWIND members AS m MATCH (m)-[:USED_TOOL]->(t:Tool)
               WITH t.name AS name, count(*) AS uses
               RETURN name ORDER BY uses DESC, name LIMIT 20 } AS tools,
     COLLECT { UNWIND members AS m MATCH (m)-[:HIT]->(r:Error)
               WITH r, count(*) AS hits
               RETURN r ORDER BY hits DESC, r.key LIMIT 20 } AS errors
WITH p, members, seed, environments, tools, [r IN errors | r.key] AS error_keys,
     CASE WHEN size(errors) = 0 THEN null ELSE errors[0].kind + ': ' + errors[0].template END
       AS error
SET p.environments = environments, p.tools = tools, p.error_keys = error_keys,
    p.summary = left(coalesce(seed.title + ' — ', '') + seed.summary, 600)
              + ' [' + toString(p.episodes) + ' episodes from ' + toString(p.support) + ' sources; '
              + p.outcome + ' ' + toString(toInteger(round(100 * p.success_rate))) + '%'
              + CASE WHEN error IS NULL THEN '' ELSE '; ' + left(error, 160) END
              + CASE WHEN size(tools) = 0 THEN '' ELSE '; tools: '
                     + reduce(s = '', t IN tools[..5] | s + CASE WHEN s = '' THEN '' ELSE ', ' END + t) END
              + ']'
WITH p, members
OPTIONAL MATCH (p)-[old:RECOMMENDS]->()
DELETE old
WITH DISTINCT p, members
CALL (p, members) {
  UNWIND members AS m
  MATCH (m)-[:GENERATED|USED|MODIFIED]->(s:Snippet)
  WHERE s.project = p.project AND s.recallable = true
  WITH s, count(DISTINCT m) AS shared
  ORDER BY coalesce(s.success_rate, -1.0) DESC, shared DESC, coalesce(s.recorded, 0) DESC, s.id
  LIMIT 1
  MERGE (p)-[r:RECOMMENDS]->(s)
  SET r.members = shared
}

// name: maintain_mark
// mode: write
// The episodes this run saw: clean until their content changes.
UNWIND $ids AS id
MATCH (e:Episode {project: $project, id: id})
SET e.consolidated = e.content_hash

// name: maintain_retire_snippets
// mode: write
// Snippets never reused and failing: no reported use (the failures their own episodes
// reported through the bridge, keys `bridge:…`, are not reuse), seen once, never verified,
// and every episode that produced them failed. Kept (reachable by id) but out of recall
// and search.
MATCH (s:Snippet {project: $project})
WHERE s.recallable = true AND coalesce(s.recorded, 0) <= 1
  AND NOT EXISTS { MATCH (o:OutcomeReport)-[:ABOUT]->(s) WHERE NOT o.key STARTS WITH 'bridge:' }
  AND NOT EXISTS { (s)-[:VERIFIED_IN]->() }
  AND EXISTS { (:Episode)-[:GENERATED|USED|MODIFIED]->(s) }
  AND NOT EXISTS { MATCH (e:Episode)-[r:GENERATED|USED|MODIFIED]->(s)
                   WHERE coalesce(r.outcome, e.outcome) <> 'failure' }
SET s.retired = true, s.recallable = false,
    s.retired_reason = 'never reused, and every episode that produced it failed'
RETURN count(s) AS retired

// name: maintain_revive_snippets
// mode: write
// A retired snippet that was reused, verified or worked since comes back.
MATCH (s:Snippet {project: $project})
WHERE s.retired = true
  AND (EXISTS { MATCH (o:OutcomeReport)-[:ABOUT]->(s) WHERE NOT o.key STARTS WITH 'bridge:' }
       OR coalesce(s.recorded, 0) > 1
       OR EXISTS { (s)-[:VERIFIED_IN]->() }
       OR EXISTS { MATCH (e:Episode)-[r:GENERATED|USED|MODIFIED]->(s)
                   WHERE coalesce(r.outcome, e.outcome) <> 'failure' })
SET s.retired = null, s.retired_reason = null, s.recallable = s.review_status <> 'rejected'
RETURN count(s) AS revived

// name: maintain_small_patterns
// mode: read
// Patterns left with less support than a pattern needs (or no member at all).
UNWIND $ids AS id
MATCH (p:Pattern {project: $project, id: id})
WHERE coalesce(p.support, 0) < $min OR NOT EXISTS { (p)-[:SUMMARIZES]->() }
   OR NOT EXISTS { MATCH (s:Episode {project: $project, id: p.seed}) }
RETURN p.id AS id
