// API keys and the audit trail. Neither carries `project` nor any relationship: reads that
// walk a project's graph (by project, by relationship, by a memory label) never meet them.
// A key keeps the digest of its secret, never the secret.

// name: create_key
// mode: write
CREATE (k:AccessKey {
  key_id: $key_id, digest: $digest, note: $note, projects: $projects, scopes: $scopes,
  per_second: $per_second, per_minute: $per_minute, records_per_day: $records_per_day,
  created_at: datetime(), created_by: $actor
})
RETURN k.key_id AS key_id

// name: key_by_id
// mode: read
MATCH (k:AccessKey {key_id: $key_id})
WHERE k.revoked_at IS NULL
RETURN k.key_id AS key_id, k.digest AS digest, k.note AS note, k.projects AS projects,
       k.scopes AS scopes, k.per_second AS per_second, k.per_minute AS per_minute,
       k.records_per_day AS records_per_day

// name: list_keys
// mode: read
MATCH (k:AccessKey)
WHERE $project IS NULL OR $project IN k.projects OR '*' IN k.projects
RETURN k.key_id AS key_id, k.note AS note, k.projects AS projects, k.scopes AS scopes,
       k.per_second AS per_second, k.per_minute AS per_minute,
       k.records_per_day AS records_per_day, k.created_at AS created_at,
       k.created_by AS created_by, k.revoked_at AS revoked_at
ORDER BY k.created_at, k.key_id

// name: revoke_key
// mode: write
MATCH (k:AccessKey {key_id: $key_id})
WHERE k.revoked_at IS NULL
SET k.revoked_at = datetime(), k.revoked_by = $actor
RETURN k.key_id AS key_id, k.projects AS projects

// name: reserve_records
// mode: write
// Take `n` records from the key's quota of the day (UTC), all or nothing: no row, no room.
MATCH (k:AccessKey {key_id: $key_id})
WITH k, CASE WHEN k.quota_day = $day THEN k.quota_used ELSE 0 END AS used
WHERE used + $n <= $limit
SET k.quota_day = $day, k.quota_used = used + $n
RETURN k.quota_used AS used

// name: record_audit
// mode: write
CREATE (:AuditEntry {
  id: $id, at: datetime(), actor: $actor, action: $action, about: $about,
  target: $target, count: $count
})

// name: audit_page
// mode: read
MATCH (a:AuditEntry {about: $about})
WHERE $after_at IS NULL OR a.at < datetime($after_at) OR (a.at = datetime($after_at) AND a.id < $after_id)
RETURN a.id AS id, a.at AS at, a.actor AS actor, a.action AS action, a.about AS about,
       a.target AS target, a.count AS count
ORDER BY a.at DESC, a.id DESC
LIMIT $limit
