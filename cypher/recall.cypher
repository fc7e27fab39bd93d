// Recall: the candidate channels, the filters they share, and the expansion across the
// bridge. Reads only.
//
// A channel is one named query, `channel_<channel>` (and its variants for older servers or
// a failed search), returning one row: its name and its candidates as [project, id, score].
// graph/channels.py asks several at once with cypher.union_all; the parameters are already
// named for the channel ($vector_limit, $tags_words ...), so the pieces never clash. Shared
// values keep their names: $projects, and the filters' ($outcomes, $review, $since, $until,
// $min_confidence, $kinds, $warm, $cold).
//
// {{filters}}: the caller's filters that narrow anything, from the `filter_*` pieces below
// (graph/channels.filters_clause): a filter left at its default costs the index nothing.
// Vector scores are returned as cosine similarity (Neo4j's index score for cosine is
// (1 + cosine) / 2).

// name: filter_outcomes
// mode: read
e.outcome IN $outcomes

// name: filter_review
// mode: read
// Rejected memory is never recallable (e.recallable, in every channel), whatever is asked.
e.review_status IN $review

// name: filter_since
// mode: read
e.created_at >= $since

// name: filter_until
// mode: read
e.created_at <= $until

// name: filter_min_confidence
// mode: read
e.confidence >= $min_confidence

// name: filter_kinds
// mode: read
e.kind IN $kinds

// name: filter_warm
// mode: read
// The warm tier: stored, used or confirmed since $warm (graph/decay.py).
e.active_at >= $warm

// name: filter_cold
// mode: read
// The cold tier alone: idle since before $cold.
e.active_at < $cold

// name: project_clocks
// mode: read
// Each project's clock: the last time anything in it was stored or used.
UNWIND $projects AS name
MATCH (p:Project {name: name})
RETURN p.name AS project, p.active_at AS active_at

// name: search_episode_vectors
// mode: read
// The vector channels (vector, title, context) in ONE search of episode_vectors, which holds
// every episode's text, title and neighbourhood vectors as EpisodeVector nodes: the search
// cost is paid once per question, not once per channel. Filtered in-index by project (a
// project with episodes always has their text vectors, so the filter matches live vectors);
// the episode's own filters are checked on the episode, so $episode_vectors_fetch asks for
// more than the channels keep. $episode_vectors_channels maps a vector's kind (`of`) to the
// channel it answers for. A title is scored against the question's first line
// ($episode_vectors_title, when the question has one).
CALL () {
  MATCH (v:EpisodeVector)
    SEARCH v IN (
      VECTOR INDEX episode_vectors
      FOR $episode_vectors_vector
      WHERE v.project IN $projects
      LIMIT $episode_vectors_fetch
    ) SCORE AS score
  WITH v, score WHERE v.of IN keys($episode_vectors_channels)
  MATCH (e:Episode {project: v.project, id: v.episode})
  WHERE e.recallable = true {{filters}}
  RETURN $episode_vectors_channels[v.of] AS channel, e.project AS project, e.id AS id,
         CASE WHEN v.of = 'title' AND $episode_vectors_title IS NOT NULL
              THEN 2 * vector.similarity.cosine(v.embedding, $episode_vectors_title) - 1
              ELSE 2 * score - 1 END AS score
  ORDER BY score DESC
}
WITH channel, collect([project, id, score]) AS found
RETURN channel, found[..$episode_vectors_limit] AS found

// name: search_episode_vectors_overfetch
// mode: read
// search_episode_vectors without the in-index filter: servers before 2026.02, and a filtered
// search Neo4j could not answer (graph/channels.py). Filtered by project after.
CALL () {
  CALL db.index.vector.queryNodes('episode_vectors', $episode_vectors_fetch, $episode_vectors_vector) YIELD node AS v, score
  WHERE v.project IN $projects AND v.of IN keys($episode_vectors_channels)
  MATCH (e:Episode {project: v.project, id: v.episode})
  WHERE e.recallable = true {{filters}}
  RETURN $episode_vectors_channels[v.of] AS channel, e.project AS project, e.id AS id,
         CASE WHEN v.of = 'title' AND $episode_vectors_title IS NOT NULL
              THEN 2 * vector.similarity.cosine(v.embedding, $episode_vectors_title) - 1
              ELSE 2 * score - 1 END AS score
  ORDER BY score DESC
}
WITH channel, collect([project, id, score]) AS found
RETURN channel, found[..$episode_vectors_limit] AS found

// name: channel_vector
// mode: read
// One vector channel alone (its kind filtered in-index), when the others are not asked: the
// episode's own text. The episode's filters are checked after; $vector_fetch asks for more.
CALL () {
  MATCH (v:EpisodeVector)
    SEARCH v IN (
      VECTOR INDEX episode_vectors
      FOR $vector_vector
      WHERE v.project IN $projects AND v.of = 'text'
      LIMIT $vector_fetch
    ) SCORE AS score
  MATCH (e:Episode {project: v.project, id: v.episode})
  WHERE e.recallable = true {{filters}}
  RETURN e.project AS project, e.id AS id, 2 * score - 1 AS score
  ORDER BY score DESC
  LIMIT $vector_limit
}
RETURN 'vector' AS channel, collect([project, id, score]) AS found

// name: channel_title
// mode: read
// channel_vector over the titles: an episode's title against the question's first line.
CALL () {
  MATCH (v:EpisodeVector)
    SEARCH v IN (
      VECTOR INDEX episode_vectors
      FOR $title_vector
      WHERE v.project IN $projects AND v.of = 'title'
      LIMIT $title_fetch
    ) SCORE AS score
  MATCH (e:Episode {project: v.project, id: v.episode})
  WHERE e.recallable = true {{filters}}
  RETURN e.project AS project, e.id AS id, 2 * score - 1 AS score
  ORDER BY score DESC
  LIMIT $title_limit
}
RETURN 'title' AS channel, collect([project, id, score]) AS found

// name: channel_context
// mode: read
// channel_vector over each episode with its neighbouring steps (their summed vectors).
CALL () {
  MATCH (v:EpisodeVector)
    SEARCH v IN (
      VECTOR INDEX episode_vectors
      FOR $context_vector
      WHERE v.project IN $projects AND v.of = 'context'
      LIMIT $context_fetch
    ) SCORE AS score
  MATCH (e:Episode {project: v.project, id: v.episode})
  WHERE e.recallable = true {{filters}}
  RETURN e.project AS project, e.id AS id, 2 * score - 1 AS score
  ORDER BY score DESC
  LIMIT $context_limit
}
RETURN 'context' AS channel, collect([project, id, score]) AS found

// name: channel_vector_overfetch
// mode: read
// Servers before 2026.02 have no filters inside the vector index: ask for more, filter
// after, and the caller widens the fetch while filtered results are short.
CALL () {
  CALL db.index.vector.queryNodes('episode_vectors', $vector_fetch, $vector_vector) YIELD node AS v, score
  WHERE v.project IN $projects AND v.of = 'text'
  MATCH (e:Episode {project: v.project, id: v.episode})
  WHERE e.recallable = true {{filters}}
  RETURN e.project AS project, e.id AS id, 2 * score - 1 AS score
  ORDER BY score DESC
  LIMIT $vector_limit
}
RETURN 'vector' AS channel, collect([project, id, score]) AS found

// name: channel_title_overfetch
// mode: read
// channel_vector_overfetch over the titles.
CALL () {
  CALL db.index.vector.queryNodes('episode_vectors', $title_fetch, $title_vector) YIELD node AS v, score
  WHERE v.project IN $projects AND v.of = 'title'
  MATCH (e:Episode {project: v.project, id: v.episode})
  WHERE e.recallable = true {{filters}}
  RETURN e.project AS project, e.id AS id, 2 * score - 1 AS score
  ORDER BY score DESC
  LIMIT $title_limit
}
RETURN 'title' AS channel, collect([project, id, score]) AS found

// name: channel_context_overfetch
// mode: read
// channel_vector_overfetch over the episodes with their neighbours.
CALL () {
  CALL db.index.vector.queryNodes('episode_vectors', $context_fetch, $context_vector) YIELD node AS v, score
  WHERE v.project IN $projects AND v.of = 'context'
  MATCH (e:Episode {project: v.project, id: v.episode})
  WHERE e.recallable = true {{filters}}
  RETURN e.project AS project, e.id AS id, 2 * score - 1 AS score
  ORDER BY score DESC
  LIMIT $context_limit
}
RETURN 'context' AS channel, collect([project, id, score]) AS found

// name: channel_fulltext
// mode: read
// The question's terms searched first without the projects' scope ($fulltext_open): a
// required term every episode of a project carries made Lucene visit each of them (the
// conjunction's cost grew with the project: 6 -> 19 ms at 100k, the terms alone 6 and flat),
// while the terms alone are scored top-k and pruned. When the episodes of the projects asked
// among the first $fulltext_fetch found are at least $fulltext_limit once filtered, or the
// index had no more, they are exactly those the scoped search keeps (a project's scope adds
// the same score to each of its episodes: the order among them is the same); otherwise (other
// projects' episodes filled the fetch) the scoped search $fulltext_text, +scope:(...), filters
// by project inside the index, cheap where the projects asked are a small part of it.
CALL () {
  CALL db.index.fulltext.queryNodes('episode_text', $fulltext_open, {limit: $fulltext_fetch}) YIELD node AS e, score
  WITH count(*) AS seen,
       collect(CASE WHEN e.project IN $projects AND e.recallable = true {{filters}}
                    THEN [e.project, e.id, score] END) AS kept
  CALL (seen, kept) {
    WHEN size(kept) >= $fulltext_limit OR seen < $fulltext_fetch THEN {
      UNWIND kept AS row
      RETURN row[0] AS project, row[1] AS id, row[2] AS score
    }
    ELSE {
      CALL db.index.fulltext.queryNodes('episode_text', $fulltext_text, {limit: $fulltext_fetch}) YIELD node AS e, score
      WHERE e.project IN $projects AND e.recallable = true {{filters}}
      RETURN e.project AS project, e.id AS id, score
    }
  }
  RETURN project, id, score
  ORDER BY score DESC
  LIMIT $fulltext_limit
}
RETURN 'fulltext' AS channel, collect([project, id, score]) AS found

// name: channel_context_text
// mode: read
// channel_fulltext over each episode with its neighbouring steps: the terms alone first.
CALL () {
  CALL db.index.fulltext.queryNodes('episode_context', $context_text_open, {limit: $context_text_fetch}) YIELD node AS e, score
  WITH count(*) AS seen,
       collect(CASE WHEN e.project IN $projects AND e.recallable = true {{filters}}
                    THEN [e.project, e.id, score] END) AS kept
  CALL (seen, kept) {
    WHEN size(kept) >= $context_text_limit OR seen < $context_text_fetch THEN {
      UNWIND kept AS row
      RETURN row[0] AS project, row[1] AS id, row[2] AS score
    }
    ELSE {
      CALL db.index.fulltext.queryNodes('episode_context', $context_text_text, {limit: $context_text_fetch}) YIELD node AS e, score
      WHERE e.project IN $projects AND e.recallable = true {{filters}}
      RETURN e.project AS project, e.id AS id, score
    }
  }
  RETURN project, id, score
  ORDER BY score DESC
  LIMIT $context_text_limit
}
RETURN 'context_text' AS channel, collect([project, id, score]) AS found

// name: channel_errors
// mode: read
// Episodes that hit or resolved the same error signatures as the question (exact keys),
// or errors whose templates are close in meaning (error_embedding, filtered in-index).
// Rare errors weigh more.
CALL () {
  UNWIND $projects AS project
  CALL (project) {
    UNWIND $errors_keys AS key
    MATCH (r:Error {project: project, key: key})
    RETURN r, 1.0 AS similarity
    UNION
    MATCH (r:Error)
      SEARCH r IN (VECTOR INDEX error_embedding FOR $errors_vector WHERE r.project = project LIMIT 5)
      SCORE AS score
    WITH r, 2 * score - 1 AS similarity WHERE similarity >= $errors_min_similarity
    RETURN r, similarity
  }
  WITH r, max(similarity) AS similarity
  CALL (r) {
    MATCH (r)<-[:HIT|RESOLVED]-(e:Episode)
    WHERE e.project = r.project AND e.recallable = true {{filters}}
    RETURN e LIMIT $errors_fanout
  }
  WITH e, r, similarity, COUNT { (r)<-[:HIT]-() } AS seen
  RETURN e.project AS project, e.id AS id, sum(similarity / log(2.0 + seen)) AS score
  ORDER BY score DESC
  LIMIT $errors_limit
}
RETURN 'errors' AS channel, collect([project, id, score]) AS found

// name: channel_errors_overfetch
// mode: read
// error_episodes when the filtered search fails: the unfiltered index over-fetched
// ($fetch templates), filtered by project after.
CALL () {
  UNWIND $projects AS project
  CALL (project) {
    UNWIND $errors_keys AS key
    MATCH (r:Error {project: project, key: key})
    RETURN r, 1.0 AS similarity
    UNION
    CALL db.index.vector.queryNodes('error_embedding', $errors_fetch, $errors_vector) YIELD node AS r, score
    WITH r, 2 * score - 1 AS similarity
    WHERE r.project = project AND similarity >= $errors_min_similarity
    RETURN r, similarity ORDER BY similarity DESC LIMIT 5
  }
  WITH r, max(similarity) AS similarity
  CALL (r) {
    MATCH (r)<-[:HIT|RESOLVED]-(e:Episode)
    WHERE e.project = r.project AND e.recallable = true {{filters}}
    RETURN e LIMIT $errors_fanout
  }
  WITH e, r, similarity, COUNT { (r)<-[:HIT]-() } AS seen
  RETURN e.project AS project, e.id AS id, sum(similarity / log(2.0 + seen)) AS score
  ORDER BY score DESC
  LIMIT $errors_limit
}
RETURN 'errors' AS channel, collect([project, id, score]) AS found

// name: channel_errors_exact
// mode: read
// The same channel for servers without filtered vector search: exact signatures only.
CALL () {
  UNWIND $projects AS project
  UNWIND $errors_keys AS key
  MATCH (r:Error {project: project, key: key})
  CALL (r) {
    MATCH (r)<-[:HIT|RESOLVED]-(e:Episode)
    WHERE e.project = r.project AND e.recallable = true {{filters}}
    RETURN e LIMIT $errors_fanout
  }
  WITH e, r, COUNT { (r)<-[:HIT]-() } AS seen
  RETURN e.project AS project, e.id AS id, sum(1.0 / log(2.0 + seen)) AS score
  ORDER BY score DESC
  LIMIT $errors_limit
}
RETURN 'errors' AS channel, collect([project, id, score]) AS found

// name: channel_symbols
// mode: read
// Episodes about the same code locations (classes, modules, files) as the question. Each
// match weighs what the symbol means to the question ($symbols[].weight: its innermost
// frames most) times what it means to the episode (symbol_weights, parallel to symbols: a
// changed file or a named class more than a frame its trace passed through); rare symbols
// weigh more.
CALL () {
  UNWIND $projects AS project
  UNWIND $symbols_symbols AS wanted
  MATCH (s:Symbol {project: project, name: wanted.name})
  CALL (s) {
    MATCH (s)<-[:MENTIONS]-(e:Episode)
    WHERE e.project = s.project AND e.recallable = true {{filters}}
    RETURN e LIMIT $symbols_fanout
  }
  WITH e, wanted, s, COUNT { (s)<-[:MENTIONS]-() } AS mentions,
       coalesce(e.symbol_weights[head([i IN range(0, size(e.symbols) - 1)
                                       WHERE e.symbols[i] = wanted.name])], 1.0) AS role
  RETURN e.project AS project, e.id AS id, sum(wanted.weight * role / log(2.0 + mentions)) AS score
  ORDER BY score DESC
  LIMIT $symbols_limit
}
RETURN 'symbols' AS channel, collect([project, id, score]) AS found

// name: channel_tags
// mode: read
// Episodes tagged as the caller asked (context tags), or with a tag whose value the
// question names (an entity: a component, a person, an OS).
CALL () {
  UNWIND $projects AS project
  MATCH (g:Tag {project: project})
  WHERE g.name IN $tags_tags OR g.value IN $tags_words
  CALL (g) {
    MATCH (g)<-[:TAGGED]-(e:Episode)
    WHERE e.project = g.project AND e.recallable = true {{filters}}
    RETURN e LIMIT $tags_fanout
  }
  WITH e, g, COUNT { (g)<-[:TAGGED]-() } AS tagged
  RETURN e.project AS project, e.id AS id,
         sum(CASE WHEN g.name IN $tags_tags THEN 2.0 ELSE 1.0 END / log(2.0 + tagged)) AS score
  ORDER BY score DESC
  LIMIT $tags_limit
}
RETURN 'tags' AS channel, collect([project, id, score]) AS found

// name: channel_tools
// mode: read
CALL () {
  UNWIND $projects AS project
  UNWIND $tools_tools AS name
  MATCH (t:Tool {project: project, name: name})
  CALL (t) {
    MATCH (t)<-[:USED_TOOL]-(e:Episode)
    WHERE e.project = t.project AND e.recallable = true {{filters}}
    RETURN e LIMIT $tools_fanout
  }
  WITH e, t, COUNT { (t)<-[:USED_TOOL]-() } AS used
  RETURN e.project AS project, e.id AS id, sum(1.0 / log(2.0 + used)) AS score
  ORDER BY score DESC
  LIMIT $tools_limit
}
RETURN 'tools' AS channel, collect([project, id, score]) AS found

// name: channel_environment
// mode: read
// Episodes from environments like the caller's: same OS, architecture and runtime, shared
// package versions. It only lifts: a memory whose conditions do not hold is ranked down by
// recall's `applies` trust factor (graph/applicability.py). An OS alone matches most
// environments of a project: the channel reads at most $environment_fanout episodes in all,
// from the environments most like the caller's first.
CALL () {
  UNWIND $projects AS project
  MATCH (v:Environment {project: project})
  WHERE ($environment_os IS NOT NULL AND toLower(v.os) = $environment_os)
     OR ($environment_runtime IS NOT NULL AND toLower(v.runtime) = $environment_runtime)
     OR ($environment_arch IS NOT NULL AND toLower(v.arch) = $environment_arch)
  WITH v,
       (CASE WHEN $environment_os IS NOT NULL AND toLower(v.os) = $environment_os THEN 1.0 ELSE 0.0 END) +
       (CASE WHEN $environment_arch IS NOT NULL AND toLower(v.arch) = $environment_arch THEN 1.0 ELSE 0.0 END) +
       (CASE WHEN $environment_runtime IS NOT NULL AND toLower(v.runtime) = $environment_runtime THEN 1.0 ELSE 0.0 END) +
       (CASE WHEN $environment_runtime_version IS NOT NULL AND v.runtime_version STARTS WITH $environment_runtime_version
             THEN 1.0 ELSE 0.0 END) +
       COUNT { (v)-[h:HAS_PACKAGE]->(k:Package {project: project})
               WHERE [k.name, h.version] IN $environment_packages } AS match
  ORDER BY match DESC
  CALL (v) {
    MATCH (v)<-[:IN_ENV]-(e:Episode)
    WHERE e.project = v.project AND e.recallable = true {{filters}}
    RETURN e LIMIT $environment_fanout
  }
  WITH e, match LIMIT $environment_fanout
  RETURN e.project AS project, e.id AS id, max(match) AS score
  ORDER BY score DESC
  LIMIT $environment_limit
}
RETURN 'environment' AS channel, collect([project, id, score]) AS found

// name: vector_live
// mode: read
// Whether any recallable episode of the projects passes the filters and has a vector of one
// of the kinds asked ($of: text, title, context) in episode_vectors. A vector index that
// holds deletions fails a filtered search that matches no live vector (Neo4j 2026.08,
// issue 12): such a search has nothing to find.
RETURN EXISTS {
  MATCH (e:Episode)
  WHERE e.project IN $projects AND e.recallable = true {{filters}}
    AND EXISTS { MATCH (v:EpisodeVector {project: e.project, episode: e.id}) WHERE v.of IN $of }
} AS live

// name: recall_expand
// mode: read
// Everything recall returns about its hits, in one round trip: the episode (its facts and
// action parameters as stored JSON), its task, its constraints and how it ended (the tests
// its harness verdict failed), its errors, environment, neighbouring steps, contradictions, the newer
// fixes that superseded it, the recallable episodes it CONTRADICTS or SUPERSEDES either way
// (`linked`: a hit's conflict partners), its project's clock (for decay), the tools it used with their
// statistics (recount_tools) and the snippets across the
// bridge ({{episode_snippets}}: that query's text, cypher/snippets.cypher).
// {{steps}}: the neighbouring steps (`recall_steps`) when the caller shows them, else
// `recall_no_steps`: two lookups a hit fewer.
// Instants come back as microseconds since the epoch (graph/rows.moment_of_micros): the
// driver builds each DateTime in pure Python (~0.1 ms apiece, ~60 per recall).
// {{keys}}: `recall_keys`, the keys asked and the conflict partners of those in $linked.
{{keys}}
MATCH (e:Episode {project: key.project, id: key.id})
OPTIONAL MATCH (t:Task {project: e.project})-[:HAS_EPISODE]->(e)
CALL (e) {
  OPTIONAL MATCH (e)-[rel:HIT|RESOLVED]->(r:Error {project: e.project})
  RETURN collect(DISTINCT CASE WHEN r IS NULL THEN null ELSE
    {relation: type(rel), key: r.key, kind: r.kind, category: r.category, family: r.family,
     template: r.template, frames: r.frames} END) AS errors
}
CALL (e) {
  OPTIONAL MATCH (e)-[:IN_ENV]->(v:Environment {project: e.project})
  WITH v LIMIT 1
  RETURN CASE WHEN v IS NULL THEN null ELSE
    v {.key, .os, .os_version, .arch, .runtime, .runtime_version,
       packages: [(v)-[h:HAS_PACKAGE]->(k:Package {project: v.project})
                  | {name: k.name, version: h.version}][..50]}
  END AS environment
}
{{steps}}
CALL (e) {
  OPTIONAL MATCH (e)-[x:CONTRADICTS]-(c:Episode {project: e.project})
  RETURN collect(DISTINCT CASE WHEN c IS NULL THEN null ELSE {id: c.id, reason: x.reason} END)
         AS contradicts
}
CALL (e) {
  OPTIONAL MATCH (n:Episode {project: e.project})-[:SUPERSEDES]->(e)
  RETURN collect(DISTINCT n.id) AS superseded_by
}
CALL (e) {
  OPTIONAL MATCH (e)-[:CONTRADICTS|SUPERSEDES]-(c:Episode {project: e.project})
  WHERE c.recallable = true
  RETURN collect(DISTINCT c.id) AS linked
}
CALL (e) {
  // What fixed the errors this step hit, by the lineage's fix links (RESOLVED {kind:
  // 'fixed'|'workaround', task, why, confidence}; a link without a kind — written before
  // the evidence rules — counts as 'resolved'): the fixing steps grouped by their action,
  // fixes first, then by the runs (tasks) where the action fixed it; three at most.
  // At most 200 links are read, the first the store gives: in a COLLECT so that the ORDER BY
  // below cannot be planned under the LIMIT (Neo4j sorted every link of an error first: 37k
  // for a step of a 1M store's largest error family, 0.2-0.3 s of a recall's expansion).
  UNWIND COLLECT {
    MATCH (e)-[:HIT]->(r:Error {project: e.project})<-[x:RESOLVED]-(f:Episode {project: e.project})
    WHERE f <> e
    RETURN [r, f, x] AS link LIMIT 200
  } AS link
  WITH link[0] AS r, link[1] AS f, link[2] AS x
  WITH coalesce(x.kind, 'resolved') AS kind, coalesce(f.action_command, f.summary) AS action,
       r, f, x ORDER BY x.confidence DESC, f.created_at DESC, f.id
  WITH kind, action, collect(DISTINCT coalesce(x.task, f.task_id)) AS tasks, count(x) AS links,
       max(x.confidence) AS confidence,
       collect({id: f.id, summary: f.summary, parameters: f.action_parameters, why: x.why,
                error: coalesce(r.template, r.key)})[0] AS step
  WHERE action IS NOT NULL
  ORDER BY CASE kind WHEN 'fixed' THEN 0 WHEN 'resolved' THEN 1 ELSE 2 END, size(tasks) DESC,
           confidence DESC
  RETURN collect({kind: kind, action: action, runs: size(tasks), links: links,
                  confidence: confidence, episode: step.id, summary: step.summary,
                  parameters: step.parameters, why: step.why, error: step.error})[..3] AS fixed_by
}
CALL (e) {
  OPTIONAL MATCH (p:Project {name: e.project})
  RETURN p.active_at.epochSeconds * 1000000 + p.active_at.microsecond AS clock
}
CALL (e) {
  OPTIONAL MATCH (e)-[:TAGGED]->(g:Tag {project: e.project})
  RETURN collect(g.name) AS tag_names
}
CALL (e) {
  OPTIONAL MATCH (e)-[:USED_TOOL]->(u:Tool {project: e.project})
  WITH u ORDER BY u.name
  RETURN collect(u {.name, .kind, .uses, .successes, .failures, .failure_rate,
                    last_used_at: u.last_used_at.epochSeconds * 1000000
                                  + u.last_used_at.microsecond})[..10] AS tools
}
CALL (e) {
  OPTIONAL MATCH (d:Episode {project: e.project})-[:DUPLICATE_OF]->(e)
  WITH d ORDER BY d.id
  RETURN collect(d.id) AS duplicates
}
RETURN key.project AS project, key.id AS id,
       e {.id, .project, .task_id, .step, .kind, .title, .summary, .reasoning, .action_type,
          .action_command, .action_parameters, .facts, .observation, .error_text, .outcome,
          .tags, .source, .confidence,
          .review_status, .uses, .successes, .failures, .resolution,
          .resolved_by, .duplicate_of, .prior_confidence, .prior_strength,
          .evidence_for, .evidence_against, .contexts,
          created_at: e.created_at.epochSeconds * 1000000 + e.created_at.microsecond,
          last_used_at: e.last_used_at.epochSeconds * 1000000 + e.last_used_at.microsecond,
          confirmed_at: e.confirmed_at.epochSeconds * 1000000 + e.confirmed_at.microsecond,
          active_at: e.active_at.epochSeconds * 1000000 + e.active_at.microsecond,
          duplicates: duplicates} AS episode,
       CASE WHEN t IS NULL THEN null ELSE
         t {.id, .goal, .status, .outcome, .constraints,
            tests_failed: COLLECT { MATCH (t)-[:JUDGED_BY]->(v:Verdict {project: t.project})
                                    UNWIND v.tests_failed AS name RETURN DISTINCT name }[..20],
            started_at: t.started_at.epochSeconds * 1000000 + t.started_at.microsecond,
            ended_at: t.ended_at.epochSeconds * 1000000 + t.ended_at.microsecond,
            steps: COUNT { (t)-[:HAS_EPISODE]->() }} END AS task,
       errors, environment, previous, next, contradicts, superseded_by, linked, fixed_by, clock,
       tools,
       {{episode_snippets}} AS snippets

// name: recall_keys
// mode: read
// A slot's text (recall_expand, episode_similarities): each key of $keys, and the
// recallable episodes the keys of $linked CONTRADICT or SUPERSEDE either way — the
// conflict partners recall shows beside its best hits, read in the same round trip.
CALL () {
  UNWIND $keys AS key
  RETURN key
  UNION
  UNWIND $linked AS key
  MATCH (:Episode {project: key.project, id: key.id})-[:CONTRADICTS|SUPERSEDES]-(c:Episode)
  WHERE c.project = key.project AND c.recallable = true
  RETURN {project: c.project, id: c.id} AS key
}

// name: recall_steps
// mode: read
// recall_expand's neighbouring steps of each hit `e`: the one before it and the one after.
CALL (e) {
  OPTIONAL MATCH (p:Episode {project: e.project})-[:NEXT]->(e)
  WITH p LIMIT 1
  RETURN CASE WHEN p IS NULL THEN null ELSE p {.id, .step, .summary, .outcome} END AS previous
}
CALL (e) {
  OPTIONAL MATCH (e)-[:NEXT]->(n:Episode {project: e.project})
  WITH n LIMIT 1
  RETURN CASE WHEN n IS NULL THEN null ELSE n {.id, .step, .summary, .outcome} END AS next
}

// name: recall_no_steps
// mode: read
// recall_expand without the neighbouring steps: the caller does not show them.
WITH *, null AS previous, null AS next

// name: channel_patterns
// mode: read
// Episodes through the patterns that summarize them: patterns close to the question (their
// centroid, filtered in-index by project), each member scored with its pattern's cosine.
// Consolidated evidence: a lesson seen in several tasks lifts each of its episodes.
CALL () {
  MATCH (p:Pattern)
    SEARCH p IN (
      VECTOR INDEX pattern_embedding
      FOR $patterns_vector
      WHERE p.project IN $projects
      LIMIT $patterns_limit
    ) SCORE AS score
  WITH p, 2 * score - 1 AS similarity
  WHERE p.support >= $patterns_min_support
  MATCH (p)-[:SUMMARIZES]->(e:Episode)
  WHERE e.project = p.project AND e.recallable = true {{filters}}
  RETURN e.project AS project, e.id AS id, max(similarity) AS score
  ORDER BY score DESC
  LIMIT $patterns_limit
}
RETURN 'patterns' AS channel, collect([project, id, score]) AS found

// name: channel_patterns_overfetch
// mode: read
// channel_patterns for servers without filters inside the vector index.
CALL () {
  CALL db.index.vector.queryNodes('pattern_embedding', $patterns_fetch, $patterns_vector) YIELD node AS p, score
  WITH p, 2 * score - 1 AS similarity
  WHERE p.project IN $projects AND p.support >= $patterns_min_support
  MATCH (p)-[:SUMMARIZES]->(e:Episode)
  WHERE e.project = p.project AND e.recallable = true {{filters}}
  RETURN e.project AS project, e.id AS id, max(similarity) AS score
  ORDER BY score DESC
  LIMIT $patterns_limit
}
RETURN 'patterns' AS channel, collect([project, id, score]) AS found

// name: recall_patterns
// mode: read
// The well-supported patterns that summarize some of recall's hits, with what recall shows
// of each: statistics, environments, the snippet it recommends, and its recallable members
// closest to the question first.
UNWIND $keys AS key
MATCH (p:Pattern {project: key.project})-[:SUMMARIZES]->(:Episode {project: key.project, id: key.id})
WHERE p.support >= $min_support
WITH DISTINCT p
CALL (p) {
  MATCH (p)-[:SUMMARIZES]->(e:Episode {project: p.project})
  WHERE e.recallable = true
  WITH e ORDER BY vector.similarity.cosine(e.embedding, $vector) DESC, e.id
  RETURN collect(e.id)[..$members] AS members
}
CALL (p) {
  OPTIONAL MATCH (p)-[r:RECOMMENDS]->(s:Snippet {project: p.project})
  WHERE s.recallable = true
  RETURN CASE WHEN s IS NULL THEN null ELSE
    s {.id, .name, .language, .kind, .template, .success_rate, .risk, members: r.members} END
    AS snippet
}
RETURN p.project AS project, p.id AS id,
       p {.id, .project, .title, .summary, .support, .episodes, .successes, .failures,
          .success_rate, .outcome, .kind, .environments, .tools, .error_keys, .seed,
          .confidence} AS pattern,
       members, snippet

// name: recall_shortlist
// mode: read
// Everything recall reads of its fused shortlist after the channels, in ONE round trip
// (graph/recall_reads.shortlist_reads): the expansion of the keys not read early
// ({{expand}}: recall_expand over `recall_keys` less $done), the patterns that summarize some
// of $keys ({{patterns}}: recall_shortlist_patterns, or recall_shortlist_no_patterns), and
// how alike each pair of $keys and the conflict partners of $linked is ({{similarities}}:
// recall_shortlist_similarities, or recall_shortlist_no_similarities). Three statements
// asked at once cost the API their driver and socket work each (issue 23: 1.5-2 ms of the
// API's CPU an answer under 8 clients); the parts are the queries they were, each run once.
// One row: the expansion's rows, the patterns' rows, and the pairs.
CALL () {
  CALL () {
{{expand}}
  }
  RETURN collect({project: project, id: id, episode: episode, task: task, errors: errors,
                  environment: environment, previous: previous, next: next,
                  contradicts: contradicts, superseded_by: superseded_by, linked: linked,
                  fixed_by: fixed_by, clock: clock, tools: tools, snippets: snippets})
         AS expanded
}
{{patterns}}
{{similarities}}
RETURN expanded, patterns, pairs

// name: recall_keys_left
// mode: read
// A slot's text (recall_shortlist's expansion, after `recall_keys`): the keys the early
// expansion did not read ($done).
WITH key WHERE NOT key IN $done

// name: recall_shortlist_patterns
// mode: read
// recall_shortlist's patterns: the rows of recall_patterns ({{patterns}}) as one list.
CALL () {
  CALL () {
{{patterns}}
  }
  RETURN collect({project: project, id: id, pattern: pattern, members: members,
                  snippet: snippet}) AS patterns
}

// name: recall_shortlist_no_patterns
// mode: read
// recall_shortlist without patterns: the caller asked for none.
WITH *, [] AS patterns

// name: recall_shortlist_similarities
// mode: read
// recall_shortlist's pairs: episode_similarities ({{similarities}}), its one row.
CALL () {
{{similarities}}
}

// name: recall_shortlist_no_similarities
// mode: read
// recall_shortlist without the pairs: the caller looks for no conflicts.
WITH *, [] AS pairs

// name: warm_up_episodes
// mode: read
// Start-up's warm-up (graph/warm_reads.py): stored episodes of the largest project, each
// made a question (its words, its vectors) that recall is asked before the first caller's.
MATCH (p:Project)
WITH p ORDER BY COUNT { (:Episode {project: p.name}) } DESC LIMIT 1
MATCH (e:Episode {project: p.name})
WHERE e.recallable = true AND e.embedding IS NOT NULL
WITH e LIMIT $limit
RETURN e.project AS project, e.embedding AS vector,
       COLLECT { MATCH (v:EpisodeVector {project: e.project, episode: e.id, of: 'title'})
                 RETURN v.embedding }[0] AS title,
       trim(coalesce(e.title, '') + ' ' + left(coalesce(e.summary, ''), 300)) AS text

// name: eval_episode_vectors
// mode: read
// Every recallable episode of `$project` with its own text vector: `eval retrieval`'s dense
// baseline (api/eval/baselines.py) ranks them by cosine, nothing else.
MATCH (e:Episode {project: $project})
WHERE e.recallable = true AND e.embedding IS NOT NULL
RETURN e.id AS id, e.embedding AS embedding
