// Code memory: snippets, the bridge to episodes, their structure, versions and reuse.
// Every row carries `project`; values arrive only as parameters.

// ---------------------------------------------------------------------------- writes
// `CYPHER replan=skip` as in write.cypher: plans that start from a uniqueness-constraint seek.

// name: upsert_snippets
// mode: write
// One node per (project, content key). What the code is (template, structure, risk) is set
// when the node is created; a name, a description or the test command its run used fills in
// when missing; tests, examples and the files it was written to accumulate (bounded); a
// reviewer's decision is never overwritten by a re-ingest. `recorded` (distinct episodes
// linked + distinct records) gains the records new to it here, and link_snippet_episodes
// adds the episodes: counted as they come, never by rereading a reused snippet's users.
CYPHER replan=skip
UNWIND $rows AS row
MERGE (s:Snippet {project: row.project, id: row.id})
ON CREATE SET s += row.props, s.lineage = row.lineage, s.version = row.version, s.latest = true,
              s.recorded_at = datetime(), s.uses = 0, s.successes = 0, s.failures = 0,
              s.review_status = row.review_status, s.tests = [], s.examples = [],
              s.record_keys = [], s.files = [], s.source = row.prior.source,
              s.prior_confidence = row.prior.mean, s.prior_strength = row.prior.strength,
              s.confidence = row.prior.mean, s.active_at = datetime(), s.recorded = 0
SET s.recorded = s.recorded + size([k IN row.record_keys WHERE NOT k IN s.record_keys])
SET s.name = coalesce(s.name, row.name),
    s.description = coalesce(s.description, row.description),
    s.test_command = coalesce(s.test_command, row.test_command),
    s.review_status = CASE WHEN s.review_status = 'unreviewed' THEN row.review_status
                           ELSE s.review_status END,
    s.tests = (s.tests + [t IN row.tests WHERE NOT t IN s.tests])[..20],
    s.examples = (s.examples + [x IN row.examples WHERE NOT x IN s.examples])[..20],
    s.record_keys = s.record_keys + [k IN row.record_keys WHERE NOT k IN s.record_keys],
    s.files = (s.files + [f IN row.files WHERE NOT f IN s.files])[..50],
    s.embedding = coalesce(row.embedding, s.embedding),
    s.scope = row.scope
SET s.recallable = s.review_status <> 'rejected' AND s.retired IS NULL

// name: link_snippet_episodes
// mode: write
// The bridge. Code that ran in an episode that succeeded was verified in its environment.
// The episode's code is part of its situation: a new link clears its `situated` stamp, so it
// is related again (graph/situations.py); a link written again changes nothing. An episode
// linked to the snippet for the first time (by no relation before) adds one to `recorded`
// (rows are one per episode and snippet), read from the episode's few links.
CYPHER replan=skip
UNWIND $rows AS row
MATCH (e:Episode {project: row.project, id: row.episode_id})
MATCH (s:Snippet {project: row.project, id: row.id})
WITH e, s, row, row.relation IN ['GENERATED', 'USED', 'MODIFIED']
                AND NOT EXISTS { (e)-[:GENERATED|USED|MODIFIED]->(s) } AS first
CALL (e, s, row) {
  WITH e, s, row WHERE row.relation = 'GENERATED'
  MERGE (e)-[r:GENERATED]->(s)
  ON CREATE SET e.situated = null
  SET r.outcome = row.outcome
}
CALL (e, s, row) {
  WITH e, s, row WHERE row.relation = 'USED'
  MERGE (e)-[r:USED]->(s)
  ON CREATE SET e.situated = null
  SET r.outcome = row.outcome
}
CALL (e, s, row) {
  WITH e, s, row WHERE row.relation = 'MODIFIED'
  MERGE (e)-[r:MODIFIED]->(s)
  ON CREATE SET e.situated = null
  SET r.outcome = row.outcome
}
CALL (e, s, row) {
  WITH e, s, row WHERE row.verified AND e.outcome = 'success'
  MATCH (e)-[:IN_ENV]->(v:Environment {project: row.project})
  MERGE (s)-[:VERIFIED_IN]->(v)
}
WITH s, first WHERE first
SET s.recorded = s.recorded + 1

// name: link_snippet_requirements
// mode: write
// `spec` is the first range the package was pinned to; `specs` every range it was verified
// in ('' where the version was not known), so a caller matching any of them is compatible.
CYPHER replan=skip
UNWIND $rows AS row
MATCH (s:Snippet {project: row.project, id: row.id})
MERGE (k:Package {project: row.project, name: row.name})
MERGE (s)-[r:REQUIRES]->(k)
ON CREATE SET r.spec = CASE WHEN head(row.specs) = '' THEN null ELSE head(row.specs) END,
              r.specs = []
SET r.specs = (r.specs + [x IN row.specs WHERE NOT x IN r.specs])[..10]

// name: link_snippet_structure
// mode: write
// Imports, calls and the definitions a patch touches as Symbol nodes, so structural search
// starts from an index seek on the symbol instead of scanning every snippet's lists. Symbol
// nodes are shared with recall (episodes MENTION them), which may create one first: the
// tail is filled in whoever did.
CYPHER replan=skip
UNWIND $rows AS row
MATCH (s:Snippet {project: row.project, id: row.id})
CALL (s, row) {
  UNWIND row.imports AS symbol
  MERGE (y:Symbol {project: row.project, name: symbol.name})
  SET y.tail = coalesce(y.tail, symbol.tail)
  MERGE (s)-[:IMPORTS]->(y)
}
CALL (s, row) {
  UNWIND row.calls AS symbol
  MERGE (y:Symbol {project: row.project, name: symbol.name})
  SET y.tail = coalesce(y.tail, symbol.tail)
  MERGE (s)-[:CALLS]->(y)
}
CALL (s, row) {
  UNWIND row.touched AS symbol
  MERGE (y:Symbol {project: row.project, name: symbol.name})
  SET y.tail = coalesce(y.tail, symbol.tail)
  MERGE (s)-[:TOUCHES]->(y)
}

// name: link_snippet_files
// mode: write
CYPHER replan=skip
UNWIND $rows AS row
MATCH (s:Snippet {project: row.project, id: row.id})
MERGE (f:File {project: row.project, path: row.path})
MERGE (s)-[t:TOUCHES]->(f)
SET t.hunks = row.hunks, t.added = row.added, t.removed = row.removed, t.symbols = row.symbols

// name: link_snippet_versions
// mode: write
CYPHER replan=skip
UNWIND $rows AS row
MATCH (s:Snippet {project: row.project, id: row.id})
MATCH (p:Snippet {project: row.project, id: row.parent_id})
MERGE (s)-[v:VERSION_OF]->(p)
ON CREATE SET v.reason = row.reason, v.created_at = datetime()
SET p.latest = false

// name: count_unset_snippet_recordings
// mode: write
// The write path counts `recorded` as links and records come (upsert_snippets,
// link_snippet_episodes); a snippet that never had it set (one imported without it) is
// counted here, once, as count_snippet_recordings would.
CYPHER replan=skip
UNWIND $rows AS row
MATCH (s:Snippet {project: row.project, id: row.id})
WHERE s.recorded IS NULL
SET s.recorded = COUNT { MATCH (e:Episode)-[:GENERATED|USED|MODIFIED]->(s) RETURN DISTINCT e }
                 + size(coalesce(s.record_keys, []))

// name: count_snippet_recordings
// mode: write
// Recorded = distinct episodes linked + distinct snippet records; recounted, so idempotent
// (after forgetting: the write path counts as it goes).
CYPHER replan=skip
UNWIND $rows AS row
MATCH (s:Snippet {project: row.project, id: row.id})
SET s.recorded = COUNT { MATCH (e:Episode)-[:GENERATED|USED|MODIFIED]->(s) RETURN DISTINCT e }
                 + size(coalesce(s.record_keys, []))

// ----------------------------------------------------------------------------- reads

// name: snippet_state
// mode: read
CYPHER replan=skip
UNWIND $keys AS key
MATCH (s:Snippet {project: key.project, id: key.id})
RETURN key.project AS project, key.id AS id, key.record_key AS record_key,
       s.embedding IS NOT NULL AS embedded,
       key.record_key IS NOT NULL AND key.record_key IN coalesce(s.record_keys, [])
         AS known_record,
       coalesce(s.successes, 0) > 0 OR EXISTS { (s)-[:VERIFIED_IN]->() } AS worked

// name: snippet_lineage_heads
// mode: read
UNWIND $keys AS key
MATCH (s:Snippet {project: key.project, lineage: key.lineage})
WITH key, s ORDER BY s.version DESC
WITH key, head(collect(s)) AS s
RETURN key.project AS project, key.lineage AS lineage,
       s {.id, .version, .template, .signature, .imports, .calls} AS head

// name: snippets_for_episodes
// mode: read
// The snippets across the bridge of the episodes in $keys ({{episode_snippets}}).
UNWIND $keys AS key
MATCH (e:Episode {project: key.project, id: key.id})
RETURN key.project AS project, key.id AS episode_id, {{episode_snippets}} AS snippets

// name: episode_snippets
// mode: read
// A slot's text (recall_expand, snippets_for_episodes): what episode `e` generated, used or
// modified, at most 20, each with its relation and requirements. Rejected snippets never come
// back, and a snippet stale in some environment (graph/staleness.py) comes after the fresh
// ones; then by how reuse went.
COLLECT {
  MATCH (e)-[r:GENERATED|USED|MODIFIED]->(s:Snippet)
  WHERE s.project = e.project AND s.recallable = true
  WITH r, s
  ORDER BY EXISTS { (s)-[:STALE_IN]->() }, coalesce(s.success_rate, -1.0) DESC,
           s.recorded DESC, s.id
  LIMIT 20
  RETURN s {.id, .project, .name, .language, .kind, .template, .description, .signature,
            .parameters, .template_parameters, .imports, .calls, .size, .risk, .findings,
            .review_status, .recallable, .version, .latest, .uses, .successes, .failures,
            .success_rate, .recorded, .files, .symbols, .tests, .examples, .origin, .test_command,
            stale_in: [(s)-[x:STALE_IN]->(v:Environment) | {environment: v.key,
                       package: x.package, verified: x.verified, found: x.found,
                       reason: x.reason, since: x.since}],
            relation: type(r),
            requires: COLLECT { MATCH (s)-[q:REQUIRES]->(k:Package {project: s.project})
                                RETURN {name: k.name, spec: q.spec, specs: q.specs} },
            // where it worked: its conditions (graph/applicability.py)
            worked_in: [(s)-[:VERIFIED_IN]->(v:Environment) WHERE v.project = s.project
                        | v {.os, .os_version, .arch, .runtime, .runtime_version}][..10]}
}

// name: snippets_by_id
// mode: read
UNWIND $ids AS id
MATCH (s:Snippet {project: $project, id: id})
WHERE s.recallable = true
RETURN s {.id, .project, .name, .language, .kind, .template, .description, .signature,
          .parameters, .template_parameters, .imports, .calls, .size, .risk, .findings,
          .review_status, .recallable, .version, .latest, .uses, .successes, .failures,
          .success_rate, .recorded, .files, .symbols, .tests, .examples, .origin, .test_command,
          stale_in: [(s)-[x:STALE_IN]->(v:Environment) | {environment: v.key,
                     package: x.package, verified: x.verified, found: x.found,
                     reason: x.reason, since: x.since}],
          worked_in: [(s)-[:VERIFIED_IN]->(v:Environment) WHERE v.project = s.project
                      | v {.os, .os_version, .arch, .runtime, .runtime_version}][..10]} AS snippet,
       COLLECT { MATCH (s)-[q:REQUIRES]->(k:Package {project: s.project})
                 RETURN {name: k.name, spec: q.spec, specs: q.specs} } AS requires

// name: snippet_conditions
// mode: read
// What a snippet's applicability is judged from (graph/applicability.py): the package
// ranges it requires and the environments it worked in.
UNWIND $ids AS id
MATCH (s:Snippet {project: $project, id: id})
RETURN s.id AS id,
       COLLECT { MATCH (s)-[q:REQUIRES]->(k:Package {project: s.project})
                 RETURN {name: k.name, spec: q.spec, specs: q.specs} } AS requires,
       [(s)-[:VERIFIED_IN]->(v:Environment) WHERE v.project = s.project
        | v {.os, .os_version, .arch, .runtime, .runtime_version}][..10] AS worked_in

// name: snippet_detail
// mode: read
// One snippet with its versions (its lineage), requirements, episodes and where it worked.
MATCH (s:Snippet {project: $project, id: $id})
RETURN s {.id, .project, .name, .language, .kind, .template, .description, .signature,
          .parameters, .template_parameters, .imports, .calls, .size, .risk, .findings,
          .review_status, .recallable, .version, .latest, .uses, .successes, .failures,
          .success_rate, .recorded, .files, .symbols, .tests, .examples, .origin, .test_command,
          .outcome_notes, .last_failure,
          stale_in: [(s)-[x:STALE_IN]->(v:Environment) | {environment: v.key,
                     package: x.package, verified: x.verified, found: x.found,
                     reason: x.reason, since: x.since}]} AS snippet,
       COLLECT { MATCH (s)-[q:REQUIRES]->(k:Package {project: s.project})
                 RETURN {name: k.name, spec: q.spec, specs: q.specs} } AS requires,
       COLLECT { MATCH (v:Snippet {project: $project, lineage: s.lineage})
                 OPTIONAL MATCH (v)-[o:VERSION_OF]->(p:Snippet {project: $project})
                 RETURN {id: v.id, version: v.version, latest: v.latest, parent_id: p.id,
                         reason: o.reason, review_status: v.review_status}
                 ORDER BY v.version } AS versions,
       COLLECT { MATCH (e:Episode {project: $project})-[r:GENERATED|USED|MODIFIED]->(s)
                 RETURN {id: e.id, relation: type(r), outcome: e.outcome, summary: e.summary,
                         task_id: e.task_id, created_at: e.created_at}
                 ORDER BY e.created_at DESC, e.id LIMIT 50 } AS episodes,
       COLLECT { MATCH (s)-[r:VERIFIED_IN]->(v:Environment {project: $project})
                 RETURN {key: v.key, os: v.os, os_version: v.os_version, arch: v.arch,
                         runtime: v.runtime, runtime_version: v.runtime_version,
                         packages: [(v)-[h:HAS_PACKAGE]->(k:Package {project: v.project})
                                    | {name: k.name, version: h.version}][..50],
                         verified_at: r.verified_at, command: r.command, exit_code: r.exit_code,
                         duration_ms: r.duration_ms, output_tail: r.output_tail}
                 ORDER BY r.verified_at IS NULL, r.verified_at DESC, v.key } AS environments,
       COLLECT { MATCH (s)-[t:TOUCHES]->(f:File {project: $project})
                 RETURN {path: f.path, hunks: t.hunks, added: t.added, removed: t.removed,
                         symbols: t.symbols} ORDER BY f.path } AS touched

// ---------------------------------------------------------------------------- search

// name: snippets_by_structure
// mode: read
// Snippets that import every module in $imports (or a submodule of it), call every function
// in $calls (its full dotted name, or a bare name matching the last part), touch every
// symbol in $symbols (a definition a patch changed, or the one the snippet defines), were
// written to every file in $files (the path, or its trailing components), are named $name
// (or end in `.name`) and take every parameter in $parameters (by name, as analysed).
// Ranked by how reuse went: success rate, then uses, then how often it was recorded.
// A name or a path is found by its text index (schema.cypher) among every project's, the
// project checked after: what ends with the string, never the project's every snippet or
// file. A parameter is looked for in each of the project's snippets (no index: see there).
CALL () {
  UNWIND $imports AS wanted
  MATCH (y:Symbol {project: $project})
  WHERE y.name = wanted OR y.name STARTS WITH wanted + '.'
  MATCH (s:Snippet {project: $project})-[:IMPORTS]->(y)
  RETURN s, 'imports' AS facet, wanted, y.name AS found
  UNION
  UNWIND $calls AS wanted
  MATCH (y:Symbol {project: $project})
  WHERE y.name = wanted OR y.tail = wanted
  MATCH (s:Snippet {project: $project})-[:CALLS]->(y)
  RETURN s, 'calls' AS facet, wanted, y.name AS found
  UNION
  UNWIND $symbols AS wanted
  MATCH (y:Symbol {project: $project})
  WHERE y.name = wanted OR y.tail = wanted
  MATCH (s:Snippet {project: $project})-[:TOUCHES]->(y)
  RETURN s, 'symbol' AS facet, wanted, y.name AS found
  UNION
  UNWIND $symbols AS wanted
  MATCH (s:Snippet)
  USING TEXT INDEX s:Snippet(name)
  WHERE s.name ENDS WITH wanted AND s.project = $project
    AND (s.name = wanted OR s.name ENDS WITH '.' + wanted)
  RETURN s, 'symbol' AS facet, wanted, s.name AS found
  UNION
  UNWIND $files AS wanted
  MATCH (f:File)
  USING TEXT INDEX f:File(path)
  WHERE f.path ENDS WITH wanted AND f.project = $project
    AND (f.path = wanted OR f.path ENDS WITH '/' + wanted)
  MATCH (s:Snippet {project: $project})-[:TOUCHES]->(f)
  RETURN s, 'file' AS facet, wanted, f.path AS found
  UNION
  UNWIND $names AS wanted
  MATCH (s:Snippet)
  USING TEXT INDEX s:Snippet(name)
  WHERE s.name ENDS WITH wanted AND s.project = $project
    AND (s.name = wanted OR s.name ENDS WITH '.' + wanted)
  RETURN s, 'name' AS facet, wanted, s.name AS found
  UNION
  // `parameters` is the analysed list as JSON text: a name is matched with its closing quote,
  // so `path` does not match `paths`, and a quote inside a default is escaped, never matched.
  UNWIND $parameters AS wanted
  MATCH (s:Snippet {project: $project})
  WHERE s.parameters CONTAINS '"name": "' + wanted + '"'
  RETURN s, 'parameters' AS facet, wanted, wanted AS found
}
WITH s, collect(DISTINCT facet + ' ' + wanted) AS met,
     collect({facet: facet, wanted: wanted, found: found}) AS matched
WHERE size(met) = $needed AND s.recallable = true
  AND ($language IS NULL OR s.language = $language) AND ($kind IS NULL OR s.kind = $kind)
RETURN s.id AS id, matched, s.success_rate AS success_rate, s.uses AS uses
ORDER BY coalesce(s.success_rate, -1.0) DESC, s.uses DESC, s.recorded DESC, s.id
LIMIT $limit

// name: verified_snippets
// mode: read
// Snippets a sandboxed run passed (VERIFIED_IN with evidence: links drawn from successful
// episodes alone have none) in at least one environment that does not contradict the
// caller's: the same os, arch and runtime where both are known, the runtime's version equal
// to its minor ($runtime_minor, e.g. '3.11') or within it. Ranked by how reuse went.
MATCH (s:Snippet {project: $project})-[r:VERIFIED_IN]->(v:Environment {project: $project})
WHERE r.verified_at IS NOT NULL AND s.recallable = true
  AND ($language IS NULL OR s.language = $language) AND ($kind IS NULL OR s.kind = $kind)
  AND ($os IS NULL OR v.os IS NULL OR v.os = $os)
  AND ($arch IS NULL OR v.arch IS NULL OR v.arch = $arch)
  AND ($runtime IS NULL OR v.runtime IS NULL OR v.runtime = $runtime)
  AND ($runtime_minor IS NULL OR v.runtime_version IS NULL
       OR v.runtime_version = $runtime_minor OR v.runtime_version STARTS WITH $runtime_minor + '.')
WITH DISTINCT s
RETURN s.id AS id, s.success_rate AS success_rate
ORDER BY coalesce(s.success_rate, -1.0) DESC, s.uses DESC, s.id
LIMIT $limit

// name: vector_snippets
// mode: read
// In-index filters. SEARCH ... WHERE takes only AND-ed property predicates, so "any
// language" is the range of every string ($language_from = '', $language_to = the last
// code point) and one language is the range from it to itself. Likewise for kind.
CYPHER 25
MATCH (s:Snippet)
  SEARCH s IN (
    VECTOR INDEX snippet_embedding
    FOR $vector
    WHERE s.project = $project AND s.recallable = true
      AND s.language >= $language_from AND s.language <= $language_to
      AND s.kind >= $kind_from AND s.kind <= $kind_to
    LIMIT $limit
  ) SCORE AS score
RETURN s.id AS id, score
ORDER BY score DESC

// name: vector_snippets_any
// mode: read
// Any language and any kind (every snippet has both): no range to check in the index, which
// costs a fifth of the search (2.1 of 12.0 ms p50 on the 10k bench store, the same snippets).
CYPHER 25
MATCH (s:Snippet)
  SEARCH s IN (
    VECTOR INDEX snippet_embedding
    FOR $vector
    WHERE s.project = $project AND s.recallable = true
    LIMIT $limit
  ) SCORE AS score
RETURN s.id AS id, score
ORDER BY score DESC

// name: vector_snippets_overfetch
// mode: read
// Servers before 2026.02: ask the index for more than needed and filter after.
CALL db.index.vector.queryNodes('snippet_embedding', $fetch, $vector) YIELD node AS s, score
WHERE s.project = $project AND s.recallable = true
  AND s.language >= $language_from AND s.language <= $language_to
  AND s.kind >= $kind_from AND s.kind <= $kind_to
RETURN s.id AS id, score
ORDER BY score DESC
LIMIT $limit

// name: fulltext_snippets
// mode: read
// The terms alone first ($open), then within the project's scope ($text, +scope:(...))
// when other projects' code filled that search: a required scope term every snippet of the
// project carries makes Lucene visit each of them, the terms alone are scored top-k (as
// recall's channel_fulltext, cypher/recall.cypher). A scope adds the same score to each of
// the project's snippets: the first search's, when enough, are the scoped search's.
CYPHER 25
CALL db.index.fulltext.queryNodes('snippet_text', $open, {limit: $fetch}) YIELD node AS s, score
WITH count(*) AS seen,
     collect(CASE WHEN s.project = $project AND s.recallable = true
                       AND ($language IS NULL OR s.language = $language)
                       AND ($kind IS NULL OR s.kind = $kind)
                  THEN [s.id, score] END) AS kept
CALL (seen, kept) {
  WHEN size(kept) >= $limit OR seen < $fetch THEN {
    UNWIND kept AS row
    RETURN row[0] AS id, row[1] AS score
  }
  ELSE {
    CALL db.index.fulltext.queryNodes('snippet_text', $text, {limit: $fetch}) YIELD node AS s, score
    WHERE s.project = $project AND s.recallable = true
      AND ($language IS NULL OR s.language = $language) AND ($kind IS NULL OR s.kind = $kind)
    RETURN s.id AS id, score
  }
}
RETURN id, score
ORDER BY score DESC
LIMIT $limit

// name: snippet_similarity
// mode: read
// The meaning score of structural matches: the same cosine the vector index reports.
UNWIND $ids AS id
MATCH (s:Snippet {project: $project, id: id})
WHERE s.embedding IS NOT NULL
RETURN s.id AS id, vector.similarity.cosine(s.embedding, $vector) AS score
ORDER BY score DESC

// ---------------------------------------------------------------------------- upkeep

// name: snippet_projects_unscoped
// mode: read
// Snippets written before they carried their project's full-text scope token.
MATCH (s:Snippet) WHERE s.scope IS NULL
RETURN DISTINCT s.project AS project

// name: scope_snippets
// mode: batch
MATCH (s:Snippet {project: $project}) WHERE s.scope IS NULL
CALL (s) { SET s.scope = $scope } IN TRANSACTIONS OF 10000 ROWS

// name: trim_long_snippet_names
// mode: batch
// Before snippet_name_text is built: a name longer than ingest now keeps ($chars) keeps its
// end, so that no stored value stops the text index from populating (a value past ~32 KB
// fails it, and a failed index stops the start).
MATCH (s:Snippet) WHERE size(s.name) > $chars
CALL (s) { SET s.name = right(s.name, $chars) } IN TRANSACTIONS OF 10000 ROWS
