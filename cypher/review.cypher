// Review that people can work: the queue of pending memories, decisions, corrections.
// Values arrive only as parameters.

// name: review_queue
// mode: read
// Pending episodes and snippets of a project, in id order after the cursor ($after), one
// more than asked (to tell whether a next page exists). $kind: 'Episode', 'Snippet' or null.
// The pending are sought by (project, review_status): ordered by id, the planner preferred
// reading every memory of the project after the cursor in id order.
CALL () {
  MATCH (m:Episode {project: $project, review_status: 'pending'})
  USING INDEX SEEK m:Episode(project, review_status)
  WHERE ($kind IS NULL OR $kind = 'Episode') AND m.id > $after
  RETURN m, 'Episode' AS kind
  UNION
  MATCH (m:Snippet {project: $project, review_status: 'pending'})
  USING INDEX SEEK m:Snippet(project, review_status)
  WHERE ($kind IS NULL OR $kind = 'Snippet') AND m.id > $after
  RETURN m, 'Snippet' AS kind
}
WITH m, kind ORDER BY m.id LIMIT $first
RETURN kind, m.id AS id,
       coalesce(m.title, m.summary, m.name, m.description) AS title,
       m.summary AS summary, m.action_command AS command, m.template AS code,
       m.outcome AS outcome, m.risk AS risk, [f IN coalesce(m.findings, []) | toString(f)] AS findings,
       coalesce(m.review_reason,
                CASE WHEN m.risk IN ['high', 'critical'] THEN 'risk ' + m.risk END) AS reason,
       toString(coalesce(m.created_at, m.recorded_at)) AS recorded

// name: review_pending_count
// mode: read
RETURN COUNT { MATCH (m:Episode {project: $project, review_status: 'pending'})
               USING INDEX SEEK m:Episode(project, review_status)
               WHERE $kind IS NULL OR $kind = 'Episode' }
     + COUNT { MATCH (m:Snippet {project: $project, review_status: 'pending'})
               USING INDEX SEEK m:Snippet(project, review_status)
               WHERE $kind IS NULL OR $kind = 'Snippet' } AS total

// name: review_memory_source
// mode: read
// What a correction starts from: the memory's stored fields.
CALL () {
  MATCH (m:Episode {project: $project, id: $id}) RETURN m, 'Episode' AS kind
  UNION
  MATCH (m:Snippet {project: $project, id: $id}) RETURN m, 'Snippet' AS kind
}
RETURN kind,
       m {.*, embedding: null, title_embedding: null, context_embedding: null, details: null}
         AS memory,
       head([(e:Episode)-[:GENERATED|USED|MODIFIED]->(m) | e.id]) AS episode_id

// name: review_link_correction
// mode: write
// The corrected memory is a new version of the old: VERSION_OF {reason, reviewer, note, at};
// the new one approved (a reviewer wrote it), the old one kept, out of recall.
CALL () {
  MATCH (n:Episode {project: $project, id: $new}) MATCH (o:Episode {project: $project, id: $old})
  RETURN n, o
  UNION
  MATCH (n:Snippet {project: $project, id: $new}) MATCH (o:Snippet {project: $project, id: $old})
  RETURN n, o
}
MERGE (n)-[v:VERSION_OF]->(o)
SET v.reason = $reason, v.reviewer = $reviewer, v.note = $note, v.created_at = datetime(),
    n.review_status = 'approved', n.recallable = true, n.reviewer = $reviewer,
    n.reviewed_at = datetime(), n.review_note = $note,
    o.review_status = 'corrected', o.recallable = false, o.corrected_by = n.id,
    o.reviewer = $reviewer, o.reviewed_at = datetime(), o.review_note = $note
RETURN n.id AS id, o.id AS previous

// name: review_detail
// mode: read
// A memory's review: its status, who decided and why, the version it corrects and the one
// that corrected it.
CALL () {
  MATCH (m:Episode {project: $project, id: $id}) RETURN m, 'Episode' AS kind
  UNION
  MATCH (m:Snippet {project: $project, id: $id}) RETURN m, 'Snippet' AS kind
}
OPTIONAL MATCH (m)-[v:VERSION_OF]->(o)
RETURN kind, m.id AS id, coalesce(m.review_status, 'unreviewed') AS status,
       m.reviewer AS reviewer, m.review_note AS note, toString(m.reviewed_at) AS reviewed_at,
       m.review_reason AS reason, m.corrected_by AS corrected_by,
       CASE WHEN o IS NULL THEN null ELSE
         {id: o.id, reason: v.reason, reviewer: v.reviewer, note: v.note,
          at: toString(v.created_at)} END AS version_of
