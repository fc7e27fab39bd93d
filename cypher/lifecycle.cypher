// Keeping memory healthy: review decisions by people.

// name: review_memory
// mode: write
// A reviewer approves, rejects or marks pending an episode or a snippet. Rejected memory
// never comes back from recall (recallable = false) but stays for the record.
CALL () {
  MATCH (m:Episode {project: $project, id: $id}) RETURN m
  UNION
  MATCH (m:Snippet {project: $project, id: $id}) RETURN m
}
SET m.review_status = $status,
    m.recallable = $status <> 'rejected' AND m.retired IS NULL AND m.corrected_by IS NULL,
    m.reviewed_at = datetime(),
    m.review_note = $note,
    m.reviewer = $reviewer
RETURN CASE WHEN m:Episode THEN 'Episode' ELSE 'Snippet' END AS kind, m.id AS id,
       m.review_status AS status
