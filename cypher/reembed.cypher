// Re-embedding the store with another model (ingest/reembed.py). A node done carries
// `_embedded_with` (the new weights' digest) until the whole store is done, so a run that
// stops part way resumes where it stopped; the marks go at the end.

// name: vectors_to_reembed
// mode: read
CALL () {
  MATCH (n:Episode) WHERE n.embedding IS NOT NULL AND coalesce(n._embedded_with, '') <> $fingerprint
  RETURN 'episodes' AS kind, count(n) AS todo
  UNION ALL
  MATCH (n:Snippet) WHERE n.embedding IS NOT NULL AND coalesce(n._embedded_with, '') <> $fingerprint
  RETURN 'snippets' AS kind, count(n) AS todo
  UNION ALL
  MATCH (n:Error) WHERE n.embedding IS NOT NULL AND coalesce(n._embedded_with, '') <> $fingerprint
  RETURN 'errors' AS kind, count(n) AS todo
  UNION ALL
  MATCH (n:Pattern) WHERE n.embedding IS NOT NULL AND coalesce(n._embedded_with, '') <> $fingerprint
  RETURN 'patterns' AS kind, count(n) AS todo
}
RETURN kind, todo

// name: episodes_to_reembed
// mode: read
MATCH (n:Episode)
WHERE n.embedding IS NOT NULL AND coalesce(n._embedded_with, '') <> $fingerprint
RETURN elementId(n) AS element, n.title AS title, n.summary AS summary,
       n.action_command AS action_command, n.observation AS observation,
       n.error_text AS error_text
LIMIT $limit

// name: snippets_to_reembed
// mode: read
MATCH (n:Snippet)
WHERE n.embedding IS NOT NULL AND coalesce(n._embedded_with, '') <> $fingerprint
RETURN elementId(n) AS element, n.name AS name, n.signature AS signature,
       coalesce(n.description, n.docstring) AS description, n.kind AS kind,
       n.language AS language, coalesce(n.imports, []) AS imports,
       coalesce(n.calls, []) AS calls, coalesce(n.files, []) AS paths,
       coalesce(n.template, '') AS template
LIMIT $limit

// name: errors_to_reembed
// mode: read
MATCH (n:Error)
WHERE n.embedding IS NOT NULL AND coalesce(n._embedded_with, '') <> $fingerprint
RETURN elementId(n) AS element, n.kind AS kind, n.template AS template
LIMIT $limit

// name: patterns_to_reembed
// mode: read
MATCH (n:Pattern)
WHERE n.embedding IS NOT NULL AND coalesce(n._embedded_with, '') <> $fingerprint
RETURN elementId(n) AS element, n.summary AS summary
LIMIT $limit

// name: set_reembedded
// mode: write
// The node's vector is replaced; an episode's text and title vectors in episode_vectors too
// (its title's when it has one; its context is refreshed after, by set_context).
UNWIND $rows AS row
MATCH (n) WHERE elementId(n) = row.element
SET n.embedding = row.embedding, n._embedded_with = $fingerprint
WITH n, row
CALL (n, row) {
  MATCH (v:EpisodeVector {project: n.project, episode: n.id})
  WHERE n:Episode AND v.of IN ['text', 'title']
  SET v.embedding = CASE v.of WHEN 'text' THEN row.embedding
                              ELSE coalesce(row.title_embedding, v.embedding) END
}

// name: chained_tasks_after
// mode: read
// Tasks with episodes, in (project, id) order after the last seen: their context vectors are
// means of their steps' vectors, computed again once every step is re-embedded.
MATCH (t:Task)
WHERE (t.project > $after_project OR (t.project = $after_project AND t.id > $after_id))
  AND EXISTS { (t)-[:HAS_EPISODE]->(:Episode) }
RETURN t.project AS project, t.id AS id
ORDER BY project, id
LIMIT $limit

// name: clear_reembedded_marks
// mode: batch
MATCH (n) WHERE n._embedded_with IS NOT NULL
CALL (n) { REMOVE n._embedded_with } IN TRANSACTIONS OF 5000 ROWS
