"""Hard-coded hosts, paths, URLs, credentials and tables become named template parameters."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from metisgraph.ingest.code import analyze_snippet, without_secrets
from metisgraph.ingest.code import parameterize as parameterize_module
from metisgraph.ingest.code.parameterize import parameterize
from metisgraph.ingest.sanitize.redaction import Redacted, redact

FIXTURES = Path(__file__).parent / "fixtures" / "code"
PASSWORD = "Sup3r-S3cret!"


def _by_name(template_parameters: tuple) -> dict[str, tuple[str, str | None]]:
    return {p.name: (p.kind, p.example) for p in template_parameters}


def test_host_path_and_password_become_parameters_and_the_password_is_gone() -> None:
    analysis = analyze_snippet((FIXTURES / "hardcoded.py").read_text())
    params = _by_name(analysis.template_parameters)
    assert params["db_host"] == ("host", "db01.prod.example.com")
    assert params["export_dir"] == ("path", "/home/alice/exports/2024")
    assert params["password"] == ("credential", None)
    assert params["table"] == ("table", "sales.orders")
    assert 'DB_HOST = "{{db_host}}"' in analysis.template
    assert 'password="{{password}}"' in analysis.template
    # Nowhere in the analysis, not even in a field we did not think of.
    assert PASSWORD not in json.dumps(dataclasses.asdict(analysis))


def test_the_template_still_parses_as_the_same_language() -> None:
    analysis = analyze_snippet((FIXTURES / "hardcoded.py").read_text())
    compile(analysis.template, "template.py", "exec")
    assert analysis.name == "export_orders"


def test_a_secret_in_a_default_value_never_reaches_the_signature() -> None:
    code = 'def connect(host="db.example.com", password="pa55-word-xyz"):\n    return host\n'
    analysis = analyze_snippet(code)
    assert "pa55-word-xyz" not in json.dumps(dataclasses.asdict(analysis))
    assert analysis.parameters[1].default == "'{{password}}'"
    assert analysis.parameters[0].default == "'{{host}}'"


def test_connection_string_is_split_into_user_password_and_host() -> None:
    template = parameterize('url = "postgresql://report:s3cr3t@10.1.2.3:5432/sales"\n', "python")
    assert template.text == 'url = "postgresql://{{user}}:{{password}}@{{host}}:5432/sales"\n'
    assert _by_name(template.parameters) == {
        "user": ("user", "report"),
        "password": ("credential", None),
        "host": ("host", "10.1.2.3"),
    }


def test_url_origin_is_lifted_and_the_api_path_kept() -> None:
    template = parameterize('requests.get("https://api.example.com/v1/items?page=2")\n', "python")
    assert template.text == 'requests.get("{{base_url}}/v1/items?page=2")\n'
    assert _by_name(template.parameters) == {"base_url": ("url", "https://api.example.com")}


@pytest.mark.parametrize(
    ("code", "language", "secret"),
    [
        ('headers = {"Authorization": "Bearer abcdef0123456789"}', "python", "abcdef0123456789"),
        ("export PGPASSWORD=topsecret42", "bash", "topsecret42"),
        ("mysql -u root -pS3cretPw -e 'select 1'", "bash", "S3cretPw"),
        ("deploy --token tk_live_998877 --env prod", "bash", "tk_live_998877"),
        ("db:\n  password: yaml-secret-1\n", "yaml", "yaml-secret-1"),
        ('{"api_key": "key-0000-1111"}', "json", "key-0000-1111"),
        ('const apiKey = "js-secret-77";', "javascript", "js-secret-77"),
        ('password := "go-secret-88"', "go", "go-secret-88"),
        ('String dbPassword = "java-secret-99";', "java", "java-secret-99"),
        (
            'curl -H "Authorization: token ghp_' + "a" * 36 + '" https://x.io',
            "bash",
            "ghp_" + "a" * 36,
        ),
    ],
)
def test_credentials_are_lifted_in_every_form(code: str, language: str, secret: str) -> None:
    template = parameterize(code, language)
    assert secret not in template.text
    assert any(p.kind == "credential" and p.example is None for p in template.parameters)
    assert secret not in without_secrets(code, language)


@pytest.mark.parametrize(
    "code",
    [
        'password = os.environ["DB_PASSWORD"]',
        "password = get_password()",
        'password = "${DB_PASSWORD}"',
        'token = "{{token}}"',
        "if password == 'x': pass",
        "max_tokens = 512",
    ],
)
def test_references_to_secrets_are_not_secrets(code: str) -> None:
    assert parameterize(code, "python").parameters == ()


def test_values_in_code_are_not_mistaken_for_places() -> None:
    code = (
        "import os.path\n"
        "ratio = total / count / 2\n"
        'name = "setup.py"\n'
        'route = "/api/v1/users"\n'
        'log = logging.getLogger("app.models")\n'
        'with open("/etc/os-release") as fh:\n'
        "    pass\n"
    )
    assert parameterize(code, "python").parameters == ()


def test_import_paths_are_not_hosts() -> None:
    code = 'import (\n\t"fmt"\n\t"github.com/pkg/errors"\n)\n'
    assert parameterize(code, "go").parameters == ()


def test_sql_tables_are_lifted_but_ctes_and_function_arguments_are_not() -> None:
    analysis = analyze_snippet((FIXTURES / "report.sql").read_text())
    assert _by_name(analysis.template_parameters) == {
        "table": ("table", "orders"),
        "table_2": ("table", "customers"),
    }
    assert "JOIN recent r" in analysis.template
    assert "EXTRACT(YEAR FROM c.created_at)" in analysis.template
    assert "'drop from list'" in analysis.template


def test_tables_in_sql_strings_of_other_languages() -> None:
    template = parameterize('cur.execute("DELETE FROM sessions WHERE expired")\n', "python")
    assert template.text == 'cur.execute("DELETE FROM {{table}} WHERE expired")\n'


def test_the_same_value_gets_one_name_and_names_never_clash() -> None:
    code = "scp /srv/data/a.csv backup.example.org:/srv/data/a.csv\ncp /srv/data/b.csv /srv/out/\n"
    template = parameterize(code, "bash")
    names = [p.name for p in template.parameters]
    assert len(names) == len(set(names))
    assert template.text.count("{{path}}") == 2
    assert {p.example for p in template.parameters if p.kind == "path"} == {
        "/srv/data/a.csv",
        "/srv/data/b.csv",
        "/srv/out/",
    }


def test_parameter_names_come_from_variables_keys_and_flags() -> None:
    template = parameterize(
        'OUTPUT_DIR = "/data/exports"\ncfg = {"cache_path": "/var/cache/app/x"}\n', "python"
    )
    assert {p.name for p in template.parameters} == {"output_dir", "cache_path"}
    flags = parameterize("pg_dump --file /srv/dumps/db.sql --host db.internal", "bash")
    assert {p.name: p.kind for p in flags.parameters} == {"file": "path", "host": "host"}


def test_the_shared_redactor_catches_what_lifting_misses() -> None:
    # "PASS" alone is not one of our secret names; the redactor knows it.
    analysis = analyze_snippet("export DB_PASS=hunter22\n", "bash")
    assert "hunter22" not in analysis.template
    assert "[REDACTED:" in analysis.template


def test_placeholders_survive_a_redactor_that_mistakes_them_for_secrets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def greedy(text: str) -> Redacted:
        # A stricter redactor: every bearer value is a secret, placeholders included.
        found = redact(text)
        return Redacted(re.sub(r"Bearer \S+", "Bearer [REDACTED:secret]", found.text), found.kinds)

    monkeypatch.setattr(parameterize_module, "redact", greedy)
    template = 'h = {"Authorization": "Bearer {{auth_token}}"}  # Bearer abc123\n'
    assert parameterize_module.redact_template(template) == (
        'h = {"Authorization": "Bearer {{auth_token}}"}  # Bearer [REDACTED:secret]\n'
    )


def test_container_paths_are_conventions_not_instance_details() -> None:
    template = parameterize(
        "WORKDIR /app/src\nCOPY . /app/src\nRUN cp x /srv/data/x\n", "dockerfile"
    )
    assert [p.example for p in template.parameters] == ["/srv/data/x"]
