// Error families: the second level above error keys (ingest/errors/families.py decides
// which keys belong together; these queries read the candidates and record the merges).
// Every Error carries `family_bucket` (kind, own frames, token count: only errors of one
// bucket can join) and `family_tokens`; once assigned, `family` is the id of its
// (:ErrorFamily {project, id}) node. Families only merge.

// name: error_family_buckets
// mode: read
// Every error of the given buckets, oldest first, with what the family index needs.
CYPHER replan=skip
UNWIND $buckets AS b
MATCH (r:Error {project: b.project, family_bucket: b.bucket})
RETURN r.project AS project, r.family_bucket AS bucket, r.key AS key, r.kind AS kind,
       r.frames AS frames, r.family_tokens AS tokens, r.family AS family
ORDER BY project, bucket, r.first_seen, key

// name: lock_error_families
// mode: write
// Family merges of a project run one at a time: each reads the families as the previous
// one left them (the project node's write lock is held until the transaction ends).
UNWIND $projects AS name
MERGE (p:Project {name: name})
ON CREATE SET p.created_at = datetime()
SET p.families_changed_at = datetime()

// name: merge_error_families
// mode: write
// Each set is keys that belong to one family. Their families as they are now (a key with
// none founds its own) become one: it keeps the id of the oldest family already there,
// members that joined those families meanwhile come along, the others' ids are kept as
// former ids. Sets are disjoint, so rows do not touch each other's families.
CYPHER 25
UNWIND $sets AS set
MATCH (e:Error {project: set.project}) WHERE e.key IN set.keys
WITH set, collect(e) AS listed
UNWIND listed AS e
WITH set, listed, coalesce(e.family, e.key) AS id, min(e.first_seen) AS seen
OPTIONAL MATCH (f:ErrorFamily {project: set.project, id: id})
WITH set, listed, id, f, coalesce(f.since, seen) AS since
ORDER BY f IS NULL, since, id
WITH set, listed, collect(id) AS ids, collect(f) AS found
WITH set, listed, ids, ids[0] AS target, found
CALL (set, ids) {
  MATCH (m:Error {project: set.project}) WHERE m.family IN ids
  RETURN collect(m) AS joined
}
WITH set, ids, target, found,
     listed + [m IN joined WHERE NOT m IN listed] AS members
FOREACH (m IN members | SET m.family = target)
WITH set, target, members,
     [x IN found WHERE x.id <> target] AS absorbed,
     [m IN members | coalesce(m.family_tokens, [])] AS shapes
MERGE (f:ErrorFamily {project: set.project, id: target})
SET f.kind = members[0].kind,
    f.bucket = members[0].family_bucket,
    f.size = size(members),
    f.since = reduce(s = null, m IN members |
                     CASE WHEN s IS NULL OR m.first_seen < s THEN m.first_seen ELSE s END),
    f.former_ids = coalesce(f.former_ids, [])
                   + [x IN absorbed | x.id]
                   + reduce(ids = [], x IN absorbed | ids + coalesce(x.former_ids, [])),
    f.template = reduce(t = '', i IN range(0, size(shapes[0]) - 1) |
                   t + CASE WHEN i = 0 THEN '' ELSE ' ' END
                     + CASE WHEN all(s IN shapes WHERE s[i] = shapes[0][i]) THEN shapes[0][i]
                            ELSE '<*>' END)
FOREACH (x IN absorbed | DETACH DELETE x)
RETURN count(*) AS families, sum(size(members)) AS members

// name: set_error_family_shapes
// mode: write
// The bucket and tokens of errors stored before families existed (or signed anew).
CYPHER replan=skip
UNWIND $rows AS row
MATCH (r:Error {project: row.project, key: row.key})
SET r.family_bucket = row.family_bucket, r.family_tokens = row.family_tokens

// name: error_family_members
// mode: read
// What lineage calls an error's family in several projects. A pattern is a family's
// template (a placeholder where its members differ): that of each given key's own family,
// and that of any family of the same bucket, in any project asked, that covers the key.
// The answer is every family, in the projects asked, holding an error a pattern covers:
// each member once, oldest first. An error without a family yet is a family of its own.
CYPHER 25
UNWIND $projects AS project
UNWIND $keys AS key
MATCH (seed:Error {project: project, key: key})
OPTIONAL MATCH (own:ErrorFamily {project: project, id: seed.family})
WITH seed, coalesce(seed.family_tokens, []) AS tokens,
     coalesce(split(own.template, ' '), seed.family_tokens, []) AS own_pattern
CALL (seed, tokens) {
  UNWIND $projects AS other
  MATCH (f:ErrorFamily {project: other, bucket: seed.family_bucket})
  WITH split(f.template, ' ') AS covering
  WHERE size(covering) = size(tokens)
    AND all(i IN range(0, size(tokens) - 1) WHERE covering[i] IN ['<*>', tokens[i]])
  RETURN collect(covering) AS covering
}
UNWIND [own_pattern] + covering AS pattern
WITH DISTINCT seed.project AS project, coalesce(seed.family, seed.key) AS family,
     seed.family_bucket AS bucket, pattern
CALL (project, family, bucket, pattern) {
  RETURN project AS home, family AS id
  UNION
  UNWIND $projects AS other
  MATCH (m:Error {project: other, family_bucket: bucket})
  WHERE size(pattern) > 0 AND size(m.family_tokens) = size(pattern)
    AND all(i IN range(0, size(pattern) - 1) WHERE pattern[i] IN ['<*>', m.family_tokens[i]])
  RETURN other AS home, coalesce(m.family, m.key) AS id
}
WITH DISTINCT home, id
CALL (home, id) {
  MATCH (m:Error {project: home, family: id}) RETURN m
  UNION
  MATCH (m:Error {project: home, key: id}) WHERE m.family IS NULL RETURN m
}
OPTIONAL MATCH (f:ErrorFamily {project: home, id: id})
// Moments as text: the driver builds each DateTime value in Python, slowly (lineage asks
// this for every member of a family).
RETURN m.project AS project, m.key AS key, id AS family, m.kind AS kind,
       m.signature AS signature, m.template AS template,
       toString(m.first_seen) AS first_seen, toString(m.last_seen) AS last_seen,
       coalesce(f.template, m.template) AS family_template, m.key IN $keys AS matched
ORDER BY m.first_seen, project, key
LIMIT $limit
