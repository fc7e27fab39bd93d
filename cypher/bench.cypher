// The benchmark's own bookkeeping (`make bench`, bench/recall_bench.py): which corpus a
// benchmark project holds, and its episode vectors for the flat vector-store baseline.

// name: bench_corpus_signature
// mode: read
MATCH (m:BenchCorpus {project: $project})
RETURN m.signature AS signature

// name: bench_mark_corpus
// mode: write
MERGE (m:BenchCorpus {project: $project})
SET m.signature = $signature

// name: bench_episode_vectors
// mode: read
// One page of a project's episodes in id order, after $after.
MATCH (e:Episode {project: $project})
WHERE e.id > $after
RETURN e.id AS id, e.embedding AS embedding, e.summary AS summary
ORDER BY e.id
LIMIT $limit

// name: bench_lineage_sample
// mode: read
// The errors of a benchmark project that were sighted at least once (bench/lineage_bench.py
// then measures the lineage each stands for: its whole family, see bench_lineage_sightings).
MATCH (r:Error {project: $project})
WHERE r.key IS NOT NULL AND EXISTS { (r)<-[:HIT]-() }
RETURN r.key AS key
ORDER BY key

// name: bench_lineage_sightings
// mode: read
// How many sightings a lineage of these members counts (as `Lineage.sighting_count` does).
UNWIND $members AS m
MATCH (:Error {project: m.project, key: m.key})<-[:HIT]-(e:Episode {project: m.project})
RETURN count(e) AS sightings

// name: bench_text_vectors
// mode: read
// bench/vector_segments.py: stored text vectors of a project, to search with.
MATCH (v:EpisodeVector {project: $project, of: 'text'})
WITH v LIMIT $limit
RETURN v.embedding AS embedding

// name: bench_nearest_episodes
// mode: read
// The floor of a Neo4j answer (bench/neo4j_vector_server.py): the k nearest episodes of one
// project by their text vector in one search of the index recall searches (episode_vectors),
// filtered in the index and nothing else.
CYPHER 25
MATCH (v:EpisodeVector)
  SEARCH v IN (
    VECTOR INDEX episode_vectors
    FOR $vector
    WHERE v.project = $project AND v.of = 'text'
    LIMIT $k
  ) SCORE AS score
RETURN v.episode AS id
ORDER BY score DESC

// name: bench_fulltext_episodes
// mode: read
// The full-text part of the floor of a hybrid answer (bench/neo4j_vector_server.py --hybrid):
// the k best of one project's recallable episodes for the question's terms (lucene_terms) in
// episode_text, the index recall's full-text channel searches.
CALL db.index.fulltext.queryNodes('episode_text', $terms, {limit: 4 * $k}) YIELD node AS e, score
WHERE e.project = $project AND e.recallable = true
RETURN e.id AS id
ORDER BY score DESC
LIMIT $k

// name: bench_store_episodes
// mode: write
// bench/store_scale.py: episodes with only what recall's vector channel reads and filters on,
// and their text vectors in episode_vectors.
UNWIND $rows AS row
CREATE (e:Episode {project: $project, id: row.id, recallable: true, kind: 'step',
                   outcome: 'success', review_status: 'accepted', confidence: 0.5})
SET e.embedding = row.vector
CREATE (:EpisodeVector {project: $project, episode: row.id, of: 'text', embedding: row.vector})

// name: bench_store_count
// mode: read
MATCH (e:Episode {project: $project})
RETURN count(e) AS n

// name: bench_project_size
// mode: read
// bench/write_growth.py, bench/errors_page_timing.py: a project's episodes and errors.
MATCH (e:Episode {project: $project})
WITH count(e) AS episodes
RETURN episodes, COUNT { MATCH (:Error {project: $project}) } AS errors

// name: bench_mark_maintained
// mode: batch
// bench/reads_at.py: a store built in bulk was never maintained, and its first whole run
// takes minutes at 1M; every embedded episode is counted as seen (what maintain_mark writes),
// so the next run is the periodic one: only what arrives after it.
MATCH (e:Episode {project: $project})
WHERE e.embedding IS NOT NULL AND (e.consolidated IS NULL OR e.consolidated <> e.content_hash)
CALL (e) {
  SET e.consolidated = e.content_hash
} IN TRANSACTIONS OF 10000 ROWS
RETURN count(e) AS marked

// name: bench_fulltext_scoped
// mode: read
// bench/fulltext_scope.py: a full-text channel as it was before 2026-12-05 — the scoped
// search ($q holds +scope:(...)), filtered after.
CYPHER 25
CALL () {
  CALL db.index.fulltext.queryNodes($index, $q, {limit: $fetch}) YIELD node AS e, score
  WHERE e.project IN $projects AND e.recallable = true
  RETURN e.project AS project, e.id AS id, score
  ORDER BY score DESC
  LIMIT $limit
}
RETURN collect([project, id, score]) AS found

// name: bench_fulltext_terms
// mode: read
// bench/fulltext_scope.py: the Lucene search of the terms alone, nothing after.
CALL db.index.fulltext.queryNodes($index, $q, {limit: $fetch}) YIELD node, score
RETURN count(*) AS found
