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
// $per_error bounds the work for an error many episodes share: the most recent others among
// the first $scan found (an error thousands of episodes hit costs $scan reads, not thousands).
CYPHER replan=skip
UNWIND $keys AS key
MATCH (e:Episode {project: key.project, id: key.id})
WHERE e.outcome IN ['success', 'failure'] AND e.recallable = true
// The episode's own side, read once (not once per other episode it is compared with).
WITH e,
     [(e)-[:IN_ENV]->(a:Environment) | {os: toLower(a.os), runtime: a.runtime}] AS envs_e,
     [(e)-[:USED_TOOL]->(t:Tool) | t.name] AS tools_e,
     [(e)-[:GENERATED|USED|MODIFIED]->(s:Snippet) | s.id] AS code_e,
     coalesce(e.action_command, '') AS command_e
MATCH (e)-[:HIT|RESOLVED]->(r:Error {project: e.project})
CALL (e, r) {
  MATCH (r)<-[:HIT|RESOLVED]-(o:Episode {project: e.project})
  WHERE o <> e AND o.outcome IN ['success', 'failure'] AND o.recallable = true
    AND coalesce(o.task_id, o.id) <> coalesce(e.task_id, e.id)
  WITH o LIMIT $scan
  RETURN o ORDER BY o.created_at DESC LIMIT $per_error
}
WITH e, envs_e, tools_e, code_e, command_e, o, collect(DISTINCT r) AS errors
WHERE NOT EXISTS {
  MATCH (o)-[:IN_ENV]->(b:Environment)
  WHERE any(a IN envs_e WHERE
        (a.os IS NOT NULL AND b.os IS NOT NULL AND a.os <> toLower(b.os))
     OR (a.runtime IS NOT NULL AND b.runtime IS NOT NULL AND a.runtime <> b.runtime))
}
WITH e, o, errors, tools_e, code_e, command_e,
     [(o)-[:USED_TOOL]->(t:Tool) | t.name] AS tools_o
WHERE size(tools_e) = 0 OR size(tools_o) = 0 OR any(t IN tools_e WHERE t IN tools_o)
WITH e, o, head(errors) AS r, code_e, command_e,
     coalesce(o.action_command, '') AS command_o,
     [(o)-[:GENERATED|USED|MODIFIED]->(s:Snippet) | s.id] AS code_o
WITH e, o, r,
     CASE WHEN command_e <> '' AND command_o <> '' THEN trim(command_e) <> trim(command_o)
          WHEN size(code_e) > 0 AND size(code_o) > 0
            THEN NOT any(s IN code_e WHERE s IN code_o)
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
