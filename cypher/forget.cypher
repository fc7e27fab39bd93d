// Forgetting, on request: a memory, a task, or a whole project, with their links.

// name: forget_project
// mode: batch
// Every node of the project, detached, in batches: a large project must not need one
// huge transaction. Runs as an implicit transaction (CALL ... IN TRANSACTIONS).
CALL () {
  MATCH (n:Episode {project: $project}) RETURN n
  UNION MATCH (n:Task {project: $project}) RETURN n
  UNION MATCH (n:Snippet {project: $project}) RETURN n
  UNION MATCH (n:Error {project: $project}) RETURN n
  UNION MATCH (n:ErrorFamily {project: $project}) RETURN n
  UNION MATCH (n:Environment {project: $project}) RETURN n
  UNION MATCH (n:Tool {project: $project}) RETURN n
  UNION MATCH (n:Package {project: $project}) RETURN n
  UNION MATCH (n:Tag {project: $project}) RETURN n
  UNION MATCH (n:Symbol {project: $project}) RETURN n
  UNION MATCH (n:Pattern {project: $project}) RETURN n
  UNION MATCH (n:File {project: $project}) RETURN n
  UNION MATCH (n:Verdict {project: $project}) RETURN n
  UNION MATCH (n:Project {name: $project}) RETURN n
}
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS
RETURN count(*) AS deleted

// name: forget_episode
// mode: write
MATCH (e:Episode {project: $project, id: $id})
DETACH DELETE e
RETURN count(*) AS deleted

// name: forget_task
// mode: write
// A task and its episodes; snippets, errors and environments stay (others may share them).
MATCH (t:Task {project: $project, id: $id})
OPTIONAL MATCH (t)-[:HAS_EPISODE]->(e:Episode {project: $project})
DETACH DELETE e, t
RETURN count(*) AS deleted
