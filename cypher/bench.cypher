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
// The errors of a benchmark project with 1 to 100 sightings (bench/lineage_bench.py).
MATCH (r:Error {project: $project})
WHERE r.key IS NOT NULL
WITH r, COUNT { (r)<-[:HIT]-() } AS sightings
WHERE 0 < sightings <= 100
RETURN r.key AS key, sightings
ORDER BY key
