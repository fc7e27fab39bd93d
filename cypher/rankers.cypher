// A project's own learned ranker (graph/project_ranker.py): trained by `eval train-ranker`
// on the project's labelled questions and recorded use, kept on the project as the
// weights file's JSON text; recall's `learned` ranker reads it in place of the shipped one.

// name: project_rankers
// mode: read
// Each project's installed ranker (null: none), with when it was installed.
UNWIND $projects AS name
OPTIONAL MATCH (p:Project {name: name})
RETURN name AS project, p.ranker AS ranker, p.ranker_installed_at AS installed_at

// name: install_ranker
// mode: write
// Keep the ranker on the project ($ranker null: remove it, the shipped one serves again).
MATCH (p:Project {name: $project})
SET p.ranker = $ranker, p.ranker_version = $version,
    p.ranker_installed_at = CASE WHEN $ranker IS NULL THEN null ELSE datetime() END
RETURN p.name AS project
