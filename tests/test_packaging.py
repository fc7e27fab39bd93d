"""The package ships what it claims: the namespace, the .cypher files, the input schema."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import tomllib
from importlib import resources
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOP = {
    "metisgraph.api": "api",
    "metisgraph.cypher": "cypher",
    "metisgraph.graph": "graph",
    "metisgraph.ingest": "ingest",
}


def _pyproject() -> dict:  # type: ignore[type-arg]
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_package_list_matches_the_folders() -> None:
    config = _pyproject()["tool"]["setuptools"]
    assert config["package-dir"] == TOP
    folders = set()
    for package, folder in TOP.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            if "__pycache__" in init.parts:
                continue
            relative = init.parent.relative_to(ROOT / folder)
            folders.add(".".join((package, *relative.parts)))
    assert set(config["packages"]) == folders


def test_no_bare_top_level_packages_are_installed() -> None:
    for bare in ("graph", "api", "ingest", "cypher"):
        spec = importlib.util.find_spec(bare)
        assert spec is None or "metisgraph" not in str(spec.origin or ""), bare


def test_cypher_files_ship_in_the_installed_package() -> None:
    names = {entry.name for entry in resources.files("metisgraph.cypher").iterdir()}
    for source in (ROOT / "cypher").glob("*.cypher"):
        assert source.name in names
    assert "schema.cypher" in names


def test_launcher_sources_ship_in_the_installed_package() -> None:
    names = {entry.name for entry in resources.files("metisgraph.graph.embedded").iterdir()}
    assert {"Launcher.java", "pom.xml"} <= names


def test_shipped_input_schema_is_the_generated_one() -> None:
    from metisgraph.ingest.schema_export import input_schema, shipped_schema

    assert shipped_schema() == json.loads(json.dumps(input_schema()))


def test_demo_records_validate() -> None:
    from metisgraph.ingest.adapters import Parsed, read_path
    from metisgraph.ingest.demo import demo_file

    items = list(read_path(Path(str(demo_file())), format="native"))
    assert items and all(isinstance(i, Parsed) for i in items)


def test_docker_compose_is_valid() -> None:
    compose = ROOT / "docker-compose.yml"
    docker = shutil.which("docker")
    if (
        docker
        and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0
    ):
        result = subprocess.run(
            [docker, "compose", "-f", str(compose), "config", "--format", "json"],
            capture_output=True,
            text=True,
        )
        assert result.returncode == 0, result.stderr
        config = json.loads(result.stdout)
    else:
        yaml = pytest.importorskip("yaml")
        config = yaml.safe_load(compose.read_text())
    services = config["services"]
    assert services["neo4j"]["image"].startswith("neo4j:2026")
    api = services["api"]
    assert "build" in api
    environment = api["environment"]
    assert environment["NEO4J_URI"].startswith("bolt://neo4j:")
