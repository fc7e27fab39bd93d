// The metisgraph schema, applied idempotently at start-up (metisgraph schema apply).
// Every node carries `project` (the tenant); identity is (project, id) or (project, key)
// where identity is content (errors, environments).
// Statements are separated by semicolons.

CREATE CONSTRAINT project_name IF NOT EXISTS FOR (p:Project) REQUIRE p.name IS UNIQUE;
CREATE CONSTRAINT task_key IF NOT EXISTS FOR (t:Task) REQUIRE (t.project, t.id) IS UNIQUE;
CREATE CONSTRAINT episode_key IF NOT EXISTS FOR (e:Episode) REQUIRE (e.project, e.id) IS UNIQUE;
CREATE CONSTRAINT snippet_key IF NOT EXISTS FOR (s:Snippet) REQUIRE (s.project, s.id) IS UNIQUE;
CREATE CONSTRAINT error_key IF NOT EXISTS FOR (r:Error) REQUIRE (r.project, r.key) IS UNIQUE;
CREATE CONSTRAINT environment_key IF NOT EXISTS FOR (v:Environment) REQUIRE (v.project, v.key) IS UNIQUE;
CREATE CONSTRAINT tool_key IF NOT EXISTS FOR (t:Tool) REQUIRE (t.project, t.name) IS UNIQUE;
CREATE CONSTRAINT package_key IF NOT EXISTS FOR (k:Package) REQUIRE (k.project, k.name) IS UNIQUE;
CREATE CONSTRAINT tag_key IF NOT EXISTS FOR (g:Tag) REQUIRE (g.project, g.name) IS UNIQUE;
CREATE CONSTRAINT pattern_key IF NOT EXISTS FOR (p:Pattern) REQUIRE (p.project, p.id) IS UNIQUE;
CREATE CONSTRAINT symbol_key IF NOT EXISTS FOR (s:Symbol) REQUIRE (s.project, s.name) IS UNIQUE;
CREATE CONSTRAINT verdict_key IF NOT EXISTS FOR (v:Verdict) REQUIRE (v.project, v.id) IS UNIQUE;
// An episode's vectors as nodes of their own, one per kind (`of`: text, title, context), so
// that recall searches them all in one vector search (episode_vectors, below).
CREATE CONSTRAINT episode_vector_key IF NOT EXISTS FOR (v:EpisodeVector) REQUIRE (v.project, v.episode, v.of) IS UNIQUE;
// Service records outside every project (cypher/keys.cypher): API keys and the audit trail.
CREATE CONSTRAINT access_key_id IF NOT EXISTS FOR (k:AccessKey) REQUIRE k.key_id IS UNIQUE;
CREATE INDEX audit_about IF NOT EXISTS FOR (a:AuditEntry) ON (a.about, a.at);
// An outcome report is stored once per key (the caller's idempotency key), per project.
CREATE CONSTRAINT outcome_report_key IF NOT EXISTS FOR (o:OutcomeReport) REQUIRE (o.project, o.key) IS UNIQUE;

// Range indexes for the properties recall filters on.
CREATE INDEX episode_outcome IF NOT EXISTS FOR (e:Episode) ON (e.project, e.outcome);
CREATE INDEX episode_review IF NOT EXISTS FOR (e:Episode) ON (e.project, e.review_status);
CREATE INDEX episode_created IF NOT EXISTS FOR (e:Episode) ON (e.project, e.created_at);
CREATE INDEX episode_task IF NOT EXISTS FOR (e:Episode) ON (e.project, e.task_id);
// Harness verdicts find the tasks of their run and instance.
CREATE INDEX task_run IF NOT EXISTS FOR (t:Task) ON (t.project, t.run, t.instance);
CREATE INDEX episode_tags IF NOT EXISTS FOR (e:Episode) ON (e.tags);
// The review queue and its count (cypher/review.cypher) read a project's pending snippets,
// as episode_review does its episodes: without it every snippet of the project was read
// (100k bench store: 188 + 117 ms and 424k db hits for a queue holding none).
CREATE INDEX snippet_review IF NOT EXISTS FOR (s:Snippet) ON (s.project, s.review_status);
CREATE INDEX snippet_language IF NOT EXISTS FOR (s:Snippet) ON (s.project, s.language);
CREATE INDEX snippet_kind IF NOT EXISTS FOR (s:Snippet) ON (s.project, s.kind);
CREATE INDEX snippet_content IF NOT EXISTS FOR (s:Snippet) ON (s.project, s.content_key);
CREATE INDEX error_kind IF NOT EXISTS FOR (r:Error) ON (r.project, r.kind);
CREATE INDEX error_signature IF NOT EXISTS FOR (r:Error) ON (r.signature);
// The `errors` pages without a window (cypher/explore.cypher explore_errors_by_count,
// _by_recent) read a project's errors in the order of their kept counts, stopped after the
// page: most sightings, latest sighting; and UNRESOLVED's total takes away the fixed ones.
CREATE INDEX error_rank_count IF NOT EXISTS FOR (r:Error) ON (r.project, r.sightings, r.key);
CREATE INDEX error_rank_recent IF NOT EXISTS FOR (r:Error) ON (r.project, r.last_sighting, r.key);
CREATE INDEX error_fixed IF NOT EXISTS FOR (r:Error) ON (r.project, r.fixed_at);
// The explorer's newly appearing errors (cypher/trends.cypher trend_new_errors): a window of
// first sightings, newest first.
CREATE INDEX error_first IF NOT EXISTS FOR (r:Error) ON (r.project, r.first_sighting);
// Error families (cypher/families.cypher): the errors that may join, and a family's members.
CREATE CONSTRAINT error_family_key IF NOT EXISTS FOR (f:ErrorFamily) REQUIRE (f.project, f.id) IS UNIQUE;
CREATE INDEX error_family_bucket IF NOT EXISTS FOR (r:Error) ON (r.project, r.family_bucket);
CREATE INDEX error_family IF NOT EXISTS FOR (r:Error) ON (r.project, r.family);
CREATE INDEX error_family_node_bucket IF NOT EXISTS FOR (f:ErrorFamily) ON (f.project, f.bucket);
CREATE INDEX tag_value IF NOT EXISTS FOR (g:Tag) ON (g.project, g.value);

// Vector and full-text indexes: declared in graph/indexes.py (VECTOR_INDEXES, TEXT_INDEXES),
// created by the named statements of cypher/indexes.cypher.

// Code memory: the last part of a symbol's name (structural search by a bare function name;
// Symbol itself is keyed above), the files snippets touch, and the lineage (identity of
// purpose) that links the versions of a snippet.
CREATE CONSTRAINT file_key IF NOT EXISTS FOR (f:File) REQUIRE (f.project, f.path) IS UNIQUE;
CREATE INDEX symbol_tail IF NOT EXISTS FOR (y:Symbol) ON (y.project, y.tail);
CREATE INDEX snippet_lineage IF NOT EXISTS FOR (s:Snippet) ON (s.project, s.lineage);
// Structural search by a snippet's name or a file's trailing path (cypher/snippets.cypher
// snippets_by_structure) matches the end of a string: text indexes (trigrams) find those
// without reading every snippet or file of the project (at 100k, 44k snippets: a name took
// 278 ms, read whole). A text index refuses a value past ~32 KB: a path is held to far less
// by file_key already, a name by ingest (ingest/snippets/prepare.py _NAME_CHARS). The
// analysed parameters (JSON, unbounded) have none: a search by a parameter reads the
// project's snippets.
CREATE TEXT INDEX snippet_name_text IF NOT EXISTS FOR (s:Snippet) ON (s.name);
CREATE TEXT INDEX file_path_text IF NOT EXISTS FOR (f:File) ON (f.path);
// A task's FIXES links, found again when its links are derived (cypher/write.cypher
// attribution_links, each batch) and when it is forgotten: by their task, not by reading
// every snippet of the project (that grew with the store).
CREATE INDEX fixes_task IF NOT EXISTS FOR ()-[f:FIXES]-() ON (f.task);
// An error's sightings and fixes newest first: each HIT/RESOLVED link keeps its error's
// project and key and its episode's created_at, so relating a new episode to its situation
// (cypher/situations.cypher relate_situations) reads the most recent others of an error by
// an index seek, not every one of its sightings.
CREATE INDEX hit_sighting IF NOT EXISTS FOR ()-[h:HIT]-() ON (h.project, h.error, h.at);
CREATE INDEX resolved_sighting IF NOT EXISTS FOR ()-[l:RESOLVED]-() ON (l.project, l.error, l.at);
// A snippet's reports from one environment (the one its episode ran in, or its sandbox),
// in time order: judging where it is stale (cypher/staleness.cypher stale_facts) reads the
// last word from each environment newest first and stops there, not among all its reports
// from it (a reused snippet has thousands; at 100k one held 203 from one environment).
CREATE INDEX outcome_report_env_at IF NOT EXISTS FOR (o:OutcomeReport) ON (o.project, o.memory_id, o.env, o.at);
// A memory's reports of one outcome from one context: adding a batch's reports to a
// memory's totals (cypher/outcomes.cypher add_evidence) reads how many it had of each by a
// seek, not among all its reports (a reused snippet has thousands).
CREATE INDEX outcome_report_context IF NOT EXISTS FOR (o:OutcomeReport) ON (o.project, o.memory_id, o.context, o.success);
