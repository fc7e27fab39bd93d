// Memories of the same situation that disagree, or that a newer fix replaced: written at
// ingest for the episodes just stored, and by maintenance for a whole project
// (graph/situations.py). Idempotent: links are merged, never duplicated.
//
// The same situation: the same error (hit or resolved), environments that do not contradict
// each other (the same OS and runtime wherever both are known), the same tool where both
// name tools, in different tasks (a task's own failures led to its success).
// Opposite outcomes: CONTRADICTS, with the evidence. Two successes with different actions
// (the command, else the code across the bridge): the newer SUPERSEDES the older.

// name: relate_situations
// mode: write
// $per_error bounds the work for an error many episodes share: the most recent others of
// other tasks, read newest first from the sightings' indexes (schema.cypher hit_sighting,
// resolved_sighting: a HIT/RESOLVED link keeps its error and its episode's created_at), so
// an error thousands of episodes hit costs an index seek and the rows up to $per_error
// chosen, not its thousands of sightings.
// Each side is read once: an error's others once for all the episodes of a task of the call
// that hit it, an episode's environments, tools and code once however many pairs it is in
// (a batch's episodes share their errors' most recent others: read per pair, they cost ten
// times more).
// Each episode is stamped `situated` (graph/situations.py: what maintain need not do again).
CYPHER replan=skip
UNWIND $keys AS key
MATCH (e:Episode {project: key.project, id: key.id})
SET e.situated = coalesce(e.content_hash, '') + '|' + coalesce(e.outcome, '') + '|'
                 + toString(coalesce(e.recallable, false))
WITH e WHERE e.outcome IN ['success', 'failure'] AND e.recallable = true
WITH e, {envs: [(e)-[:IN_ENV]->(a:Environment) | {os: toLower(a.os), runtime: a.runtime}],
         tools: [(e)-[:USED_TOOL]->(t:Tool) | t.name],
         code: [(e)-[:GENERATED|USED|MODIFIED]->(s:Snippet) | s.id],
         command: coalesce(e.action_command, '')} AS side
MATCH (e)-[:HIT|RESOLVED]->(r:Error {project: e.project})
WITH r, coalesce(e.task_id, e.id) AS task, collect(DISTINCT {e: e, side: side}) AS episodes
CALL (r, task) {
  CALL (r, task) {
    MATCH (o:Episode)-[h:HIT]->()
    USING INDEX SEEK h:HIT(project, error, at)
    WHERE h.project = r.project AND h.error = r.key AND h.at IS NOT NULL
      AND o.outcome IN ['success', 'failure'] AND o.recallable = true
      AND coalesce(o.task_id, o.id) <> task
    WITH o, h ORDER BY h.project DESC, h.error DESC, h.at DESC LIMIT $per_error
    RETURN o, h.at AS at
    UNION
    MATCH (o:Episode)-[h:RESOLVED]->()
    USING INDEX SEEK h:RESOLVED(project, error, at)
    WHERE h.project = r.project AND h.error = r.key AND h.at IS NOT NULL
      AND o.outcome IN ['success', 'failure'] AND o.recallable = true
      AND coalesce(o.task_id, o.id) <> task
    WITH o, h ORDER BY h.project DESC, h.error DESC, h.at DESC LIMIT $per_error
    RETURN o, h.at AS at
  }
  WITH o, max(at) AS at ORDER BY at DESC LIMIT $per_error
  RETURN collect(o) AS chosen
}
UNWIND episodes AS one
WITH one.e AS e, one.side AS side, r, chosen
UNWIND chosen AS o
WITH e, side, o, collect(DISTINCT r) AS errors
WITH o, collect({e: e, side: side, errors: errors}) AS pairs
WITH o, pairs,
     [(o)-[:IN_ENV]->(b:Environment) | {os: toLower(b.os), runtime: b.runtime}] AS envs_o,
     [(o)-[:USED_TOOL]->(t:Tool) | t.name] AS tools_o,
     [(o)-[:GENERATED|USED|MODIFIED]->(s:Snippet) | s.id] AS code_o,
     coalesce(o.action_command, '') AS command_o
UNWIND pairs AS pair
WITH pair.e AS e, pair.side AS side, head(pair.errors) AS r, o, envs_o, tools_o, code_o,
     command_o
WHERE NOT any(a IN side.envs WHERE any(b IN envs_o WHERE
        (a.os IS NOT NULL AND b.os IS NOT NULL AND a.os <> b.os)
     OR (a.runtime IS NOT NULL AND b.runtime IS NOT NULL AND a.runtime <> b.runtime)))
  AND (size(side.tools) = 0 OR size(tools_o) = 0 OR any(t IN side.tools WHERE t IN tools_o))
WITH e, o, r,
     CASE WHEN side.command <> '' AND command_o <> ''
            THEN trim(side.command) <> trim(command_o)
          WHEN size(side.code) > 0 AND size(code_o) > 0
            THEN NOT any(s IN side.code WHERE s IN code_o)
          ELSE null END AS different
CALL (e, o, r, different) {
  WITH e, o, r, different WHERE e.outcome <> o.outcome
  MERGE (e)-[c:CONTRADICTS]-(o)
  ON CREATE SET c.at = datetime()
  SET c.error = r.key,
      c.reason = 'the same error (' + coalesce(r.kind, 'unnamed') + ') with opposite outcomes, '
                 + CASE different WHEN true THEN 'by different actions'
                                  WHEN false THEN 'by the same action'
                                  ELSE 'actions unknown' END
}
CALL (e, o, r, different) {
  WITH e, o, r WHERE e.outcome = 'success' AND o.outcome = 'success' AND different
    AND e.created_at <> o.created_at
  WITH r, CASE WHEN e.created_at > o.created_at THEN [e, o] ELSE [o, e] END AS pair
  WITH r, pair[0] AS newer, pair[1] AS older
  MERGE (newer)-[s:SUPERSEDES]->(older)
  ON CREATE SET s.at = datetime()
  SET s.error = r.key
}
RETURN count(*) AS compared

// name: situation_episodes
// mode: read
// A page of a project's episodes that could be in a situation with others (keyset order).
MATCH (e:Episode {project: $project})
WHERE e.id > $after AND e.outcome IN ['success', 'failure']
  AND EXISTS { (e)-[:HIT|RESOLVED]->(:Error) }
RETURN e.id AS id ORDER BY e.id LIMIT $limit

// name: episode_similarities
// mode: read
// How alike each pair of the given episodes is, the cosine of their text vectors, computed
// where the vectors are: recall's conflicts need that one number a pair (graph/conflicts.py),
// not 384 a hit. Neo4j's cosine is (1 + cosine) / 2. One row: [project, id, project, id, cosine].
// Each vector is read from the store once, as a value: a pair reading its two nodes'
// properties read every vector n - 1 times (the read's cost grew with the pairs, 276 for
// planContext's 24 candidates). {{keys}}: `recall_keys`, the keys and the conflict
// partners of those in $linked.
{{keys}}
MATCH (e:Episode {project: key.project, id: key.id})
WHERE e.embedding IS NOT NULL
WITH collect([e.project, e.id, e.embedding]) AS found
UNWIND range(0, size(found) - 2) AS i
WITH found, found[i] AS a, i
UNWIND range(i + 1, size(found) - 1) AS j
WITH a, found[j] AS b
RETURN collect([a[0], a[1], b[0], b[1], 2 * vector.similarity.cosine(a[2], b[2]) - 1]) AS pairs
