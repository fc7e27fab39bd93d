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
