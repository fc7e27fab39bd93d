// Abstention that fits the store (graph/abstention.py): each project's similarity gate.

// name: abstention_gates
// mode: read
// Each project's kept gate, with its episode count now (to tell a stale one).
UNWIND $projects AS name
OPTIONAL MATCH (p:Project {name: name})
RETURN name AS project, p.abstain_below AS threshold, p.abstain_code_below AS code_threshold,
       p.abstain_episodes AS measured_episodes,
       p.abstain_probes AS probes, p.abstain_measured_at AS measured_at,
       p.abstain_source AS source,
       COUNT { MATCH (e:Episode {project: name}) } AS episodes

// name: abstention_episodes
// mode: read
MATCH (e:Episode {project: $project})
RETURN count(e) AS episodes

// name: abstention_probe_scores
// mode: read
// Each probe's best cosine among the project's episode vectors (any kind: text, title,
// neighbourhood), as recall's vector channels score them.
CYPHER 25
UNWIND $vectors AS probe
CALL (probe) {
  MATCH (v:EpisodeVector)
    SEARCH v IN (
      VECTOR INDEX episode_vectors
      FOR probe
      WHERE v.project = $project
      LIMIT 1
    ) SCORE AS score
  RETURN max(2 * score - 1) AS best
}
RETURN best

// name: abstention_probe_scores_overfetch
// mode: read
// abstention_probe_scores for servers without in-index filters: the project's vectors
// compared one by one (a calibration, not a question: it runs once in a while).
UNWIND $vectors AS probe
CALL (probe) {
  MATCH (v:EpisodeVector {project: $project})
  RETURN max(2 * vector.similarity.cosine(v.embedding, probe) - 1) AS best
}
RETURN best

// name: abstention_neighbour_scores
// mode: read
// How close the project's memories come to each other: for up to $sample of its episodes
// (spread over the project in id order), the best cosine of another episode's vector to its
// text vector. A question naming code the project never saw is held to this level.
CYPHER 25
MATCH (t:EpisodeVector {project: $project, of: 'text'})
WITH t ORDER BY t.episode LIMIT 20000
WITH collect(t) AS texts
WITH texts, size(texts) / $sample + 1 AS stride
UNWIND [i IN range(0, size(texts) - 1) WHERE i % stride = 0 | texts[i]] AS mine
CALL (mine) {
  MATCH (v:EpisodeVector)
    SEARCH v IN (
      VECTOR INDEX episode_vectors
      FOR mine.embedding
      WHERE v.project = $project
      LIMIT 8
    ) SCORE AS score
  WITH v, score WHERE v.episode <> mine.episode
  RETURN max(2 * score - 1) AS best
}
RETURN best

// name: abstention_neighbour_scores_overfetch
// mode: read
// abstention_neighbour_scores for servers without in-index filters (compared one by one).
MATCH (t:EpisodeVector {project: $project, of: 'text'})
WITH t ORDER BY t.episode LIMIT 20000
WITH collect(t) AS texts
WITH texts, size(texts) / $sample + 1 AS stride
UNWIND [i IN range(0, size(texts) - 1) WHERE i % stride = 0 | texts[i]] AS mine
CALL (mine) {
  MATCH (v:EpisodeVector {project: $project}) WHERE v.episode <> mine.episode
  RETURN max(2 * vector.similarity.cosine(v.embedding, mine.embedding) - 1) AS best
}
RETURN best

// name: keep_abstention
// mode: write
// On the project's node, when it has one (a question about an unknown project creates none).
MATCH (p:Project {name: $project})
SET p.abstain_below = $threshold, p.abstain_code_below = $code_threshold,
    p.abstain_episodes = $episodes, p.abstain_probes = $probes, p.abstain_source = $source,
    p.abstain_measured_at = datetime()
