// Recall: candidate channels and the expansion across the bridge. Reads only.

// name: vector_episodes
// mode: read
// In-index filtering (Cypher 25 SEARCH ... WHERE): the index only sees the project's
// recallable episodes, so k results come back however large other projects are.
CYPHER 25
MATCH (e:Episode)
  SEARCH e IN (
    VECTOR INDEX episode_embedding
    FOR $vector
    WHERE e.project = $project AND e.recallable = true
    LIMIT $limit
  ) SCORE AS score
RETURN e.id AS id, e.project AS project, score
ORDER BY score DESC

// name: vector_episodes_overfetch
// mode: read
// Servers before 2026.02: ask the index for more than needed and filter after.
CALL db.index.vector.queryNodes('episode_embedding', $fetch, $vector) YIELD node AS e, score
WHERE e.project = $project AND e.recallable = true
RETURN e.id AS id, e.project AS project, score
ORDER BY score DESC
LIMIT $limit

// name: fulltext_episodes
// mode: read
CALL db.index.fulltext.queryNodes('episode_text', $text, {limit: $fetch}) YIELD node AS e, score
WHERE e.project = $project AND e.recallable = true
RETURN e.id AS id, e.project AS project, score
ORDER BY score DESC
LIMIT $limit

// name: episodes_by_id
// mode: read
UNWIND $keys AS key
MATCH (e:Episode {project: key.project, id: key.id})
OPTIONAL MATCH (t:Task)-[:HAS_EPISODE]->(e)
RETURN e {.id, .project, .task_id, .step, .kind, .title, .summary, .reasoning, .action_type,
          .action_command, .observation, .error_text, .outcome, .tags, .source, .confidence,
          .review_status, .created_at, .uses, .successes, .failures, .resolution, .resolved_by
       } AS episode,
       t {.id, .goal, .status, .outcome} AS task
