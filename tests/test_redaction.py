"""Redaction: every planted secret disappears, references and ordinary text stay."""

from __future__ import annotations

import base64
import json
import re
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from metisgraph.ingest.records import EpisodeRecord, TaskRecord
from metisgraph.ingest.sanitize import (
    Redacted,
    marker,
    redact,
    redact_value,
    secret_kind_for_name,
)

ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"
UPPER_DIGITS = string.ascii_uppercase + string.digits

# --- examples, one per kind ---------------------------------------------------------------

EXAMPLES = [
    ("aws_access_key", "export AWS_ACCESS_KEY_ID=AKIAZ7VQ3EXAMPLE4KQD", "AKIAZ7VQ3EXAMPLE4KQD"),
    (
        "aws_secret_key",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    (
        "github_token",
        "git clone https://ghp_R2d2C3poBB8uKenobiLuke5kywalker00001@github.com/acme/x.git",
        "ghp_R2d2C3poBB8uKenobiLuke5kywalker00001",
    ),
    ("gitlab_token", "GITLAB_TOKEN=glpat-Xy9_abcDEF123-ghiJKL", "glpat-Xy9_abcDEF123-ghiJKL"),
    (
        "slack_token",
        "token: xoxb-1234567890-0987654321-AbCdEfGhIjKl",
        "xoxb-1234567890-0987654321-AbCdEfGhIjKl",
    ),
    (
        "stripe_key",
        "Stripe.api_key = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    ),
    (
        "openai_key",
        "OPENAI_API_KEY=sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z",
        "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z",
    ),
    (
        "google_api_key",
        "key=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY&q=Paris",
        "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
    ),
    (
        "npm_token",
        "//npm.example.com/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789",
        "npm_abcdefghijklmnopqrstuvwxyz0123456789",
    ),
    (
        "huggingface_token",
        "HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
        "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
    ),
    (
        "password_in_url",
        "psql postgres://admin:S3cr3t!pw@db.internal:5432/app",
        "S3cr3t!pw",
    ),
    ("password_in_url", "redis://:p@ss@word@cache-1:6379/0", "p@ss@word"),
    (
        "bearer_token",
        "curl -H 'Authorization: Bearer abc123def456ghi789' https://x",
        "abc123def456ghi789",
    ),
    ("basic_auth", "Authorization: Basic dXNlcjpodW50ZXIy", "dXNlcjpodW50ZXIy"),
    ("password", "curl -u admin:hunter2x https://api.example.com", "hunter2x"),
    ("password", "mysql -h db -u root -pTopSecret9 shop", "TopSecret9"),
    ("password", 'DB_PASSWORD="correct horse battery staple"', "correct horse battery staple"),
    ("password", "docker run -e POSTGRES_PASSWORD=pgS3cret postgres:16", "pgS3cret"),
    ("password", "java -jar tool.jar --password=Zx81Spectrum", "Zx81Spectrum"),
    ("password", "machine api.example.com login deploy password n3tRcPass", "n3tRcPass"),
    ("password", "<password>m4venDeploy</password>", "m4venDeploy"),
    ("password", "- name: DB_PASSWORD\n  value: k8sValue77", "k8sValue77"),
    ("password", "User{name=bob, password=hunter2}", "hunter2"),
    ("secret", "SECRET_KEY = 'django-insecure-0a9s8d7f6g5h'", "django-insecure-0a9s8d7f6g5h"),
    ("secret", "export API_TOKEN=tok_9f8e7d6c5b4a", "tok_9f8e7d6c5b4a"),
    ("secret", "./deploy --token tok_9f8e7d6c5b4a", "tok_9f8e7d6c5b4a"),
    ("api_key", '"x-api-key": "Ab12Cd34Ef56Gh78Ij90"', "Ab12Cd34Ef56Gh78Ij90"),
    (
        "jwt",
        "token=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ),
]


@pytest.mark.parametrize(("kind", "text", "secret"), EXAMPLES)
def test_each_kind_is_redacted_and_counted(kind: str, text: str, secret: str) -> None:
    result = redact(text)
    assert secret not in result.text
    assert marker(kind) in result.text
    assert result.kinds.get(kind, 0) >= 1


def test_the_text_around_a_secret_is_kept() -> None:
    result = redact("export GITHUB_TOKEN=ghp_R2d2C3poBB8uKenobiLuke5kywalker00001 && make deploy")
    assert result == Redacted(
        text="export GITHUB_TOKEN=[REDACTED:github_token] && make deploy",
        kinds={"github_token": 1},
    )


def test_a_pem_block_is_redacted_whole_and_the_text_after_it_stays() -> None:
    body = "MIIEowIBAAKCAQEA7bq\nZ29vZCBsdWNrIGZpbmRp\nbmcgdGhpcyBrZXk="
    text = f"before\n-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\nafter"
    result = redact(text)
    assert result.text == "before\n[REDACTED:private_key]\nafter"
    assert all(line not in result.text for line in body.splitlines())


def test_a_truncated_pem_block_is_still_redacted() -> None:
    result = redact("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\n")
    assert "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU" not in result.text
    assert result.kinds == {"private_key": 1}


@pytest.mark.parametrize(
    "text",
    [
        "password: ${DB_PASSWORD}",
        "export PGPASSWORD=$DB_PASSWORD",
        "token: ${{ secrets.DEPLOY_TOKEN }}",
        "password = os.environ['DB_PASSWORD']",
        "password = getpass()",
        "login(password=db_password)",
        "def login(user: str, password: str, token=None) -> bool:",
        "api_key: Optional[str] = None",
        "password: ********",
        "PASSWORD_FILE=/run/secrets/db_password",
        "token_url = https://auth.example.com/oauth/token",
        "primary_key=True, sort_key=lambda x: x, key=value",
        "max_tokens=4096 token_count=12345678 num_tokens: 7",
        "PASS: x == None",
        "options.closurePass = flags.process_closure_primitives;",
        "at com.acme.auth.PasswordPolicy.check(PasswordPolicy.java:57)",
        "raise AuthorizationException: user bob not allowed",
        "if token == JsDocToken.EOC:",
        "Authorization: Bearer [REDACTED:bearer_token]",
    ],
)
def test_references_and_ordinary_code_are_not_secrets(text: str) -> None:
    assert redact(text) == Redacted(text=text, kinds={})


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("DB_PASSWORD", "password"),
        ("PGPASSWORD", "password"),
        ("MYSQL_PASS", "password"),
        ("ftp-pass", "password"),
        ("passphrase", "password"),
        ("closurePass", None),
        ("PASS", None),
        ("client_secret", "secret"),
        ("GITHUB_TOKEN", "secret"),
        ("accessToken", "secret"),
        ("SecretAccessKey", "secret"),
        ("max_tokens", None),
        ("token_type", None),
        ("api_key", "api_key"),
        ("x-api-key", "api_key"),
        ("AccountKey", "api_key"),
        ("primary_key", None),
        ("key", None),
        ("PASSWORD_FILE", None),
        ("AuthorizationException", None),
        ("Password.java", None),
    ],
)
def test_secret_kind_for_name(name: str, kind: str | None) -> None:
    assert secret_kind_for_name(name) == kind


def test_redact_value_redacts_by_key_and_by_content() -> None:
    value = {
        "db_password": "hunter2",
        "api_key": 1234567890,
        "token": "${CI_TOKEN}",
        "debug": True,
        "nested": [{"secret": "s3kr1t-value"}, "export API_TOKEN=tok_9f8e7d6c5b4a"],
        "pair": ("AKIAZ7VQ3EXAMPLE4KQD", 3),
        "region": "eu-west-1",
    }
    assert redact_value(value) == {
        "db_password": "[REDACTED:password]",
        "api_key": "[REDACTED:api_key]",
        "token": "${CI_TOKEN}",
        "debug": True,
        "nested": [{"secret": "[REDACTED:secret]"}, "export API_TOKEN=[REDACTED:secret]"],
        "pair": ("[REDACTED:aws_access_key]", 3),
        "region": "eu-west-1",
    }


# --- properties ---------------------------------------------------------------------------

# No deadline: the suite also runs on busy shared machines, and speed is measured elsewhere.
PROPERTY = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _text(alphabet: str, min_size: int, max_size: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=min_size, max_size=max_size)


def _b64url(value: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


json_objects = st.dictionaries(
    st.text(alphabet=string.ascii_lowercase, min_size=1, max_size=8),
    st.one_of(st.integers(), st.text(alphabet=ALNUM, max_size=12)),
    min_size=1,
    max_size=4,
)
jwts = st.builds(
    lambda header, payload, signature: f"{_b64url(header)}.{_b64url(payload)}.{signature}",
    json_objects,
    json_objects,
    _text(URLSAFE, 0, 64),
)
# Real generated keys: random over their alphabet, so mixed in every character class.
random_keys = _text(ALNUM, 20, 64).filter(
    lambda s: (
        any(c.isdigit() for c in s) and any(c.isupper() for c in s) and any(c.islower() for c in s)
    )
)
aws_secret_keys = _text(B64, 40, 40)
# Passwords as people set them: at least one digit and one symbol; not starting like a
# variable reference ($X, %X%, {x}, <x>) or a path, which stay by design.
passwords = _text(ALNUM + "!#%*+^~@_.-", 6, 32).filter(
    lambda s: (
        any(c.isdigit() for c in s) and any(c in "!#%*+^~@" for c in s) and s[0] not in "$%{<(/.~-"
    )
)
url_passwords = _text(ALNUM + "!$*+,;=._~-", 1, 32)

TOKEN_FORMATS: dict[str, st.SearchStrategy[str]] = {
    "aws_access_key": st.builds(
        lambda p, s: p + s, st.sampled_from(["AKIA", "ASIA"]), _text(UPPER_DIGITS, 16, 16)
    ),
    "github_token": st.builds(
        lambda p, s: p + s,
        st.sampled_from(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]),
        _text(ALNUM, 36, 40),
    ),
    "gitlab_token": st.builds(lambda s: "glpat-" + s, _text(URLSAFE, 20, 40)),
    "slack_token": st.builds(
        lambda p, s: p + s, st.sampled_from(["xoxb-", "xoxp-", "xoxa-"]), _text(ALNUM + "-", 10, 60)
    ),
    "stripe_key": st.builds(
        lambda p, s: p + s,
        st.sampled_from(["sk_live_", "rk_live_", "sk_test_"]),
        _text(ALNUM, 16, 40),
    ),
    "google_api_key": st.builds(lambda s: "AIza" + s, _text(URLSAFE, 35, 35)),
    "npm_token": st.builds(lambda s: "npm_" + s, _text(ALNUM, 36, 36)),
    "openai_key": st.builds(lambda p, s: p + s, st.sampled_from(["sk-", "sk-proj-"]), random_keys),
    "jwt": jwts,
}


@PROPERTY
@given(
    data=st.data(),
    kind=st.sampled_from(sorted(TOKEN_FORMATS)),
    before=st.text(max_size=80),
    after=st.text(max_size=80),
    glue=st.sampled_from([" ", "\n", "=", ": ", '"', "'", "(", "\t"]),
)
def test_no_token_survives_in_arbitrary_text(
    data: st.DataObject, kind: str, before: str, after: str, glue: str
) -> None:
    secret = data.draw(TOKEN_FORMATS[kind])
    assume(secret not in before + after)  # the surroundings must not hold a copy of it
    text = f"{before}{glue}{secret}{glue}{after}"
    assert secret not in redact(text).text


CONTEXTS = {
    "password": [
        "export DB_PASSWORD={}",
        "password: {}",
        '"password": "{}"',
        "PGPASSWORD={} psql -h db",
        "--password {}",
        "--password={}",
        "mysql -u root -p{} shop",
        "<password>{}</password>",
        "curl -u admin:{} https://x",
    ],
    "secret": ["export API_TOKEN={}", "SECRET_KEY = '{}'", "client_secret: {}", "--token {}"],
    "api_key": ["X-Api-Key: {}", "api_key={}", '"apiKey": "{}"'],
    "bearer_token": ["Authorization: Bearer {}", "-H 'authorization: bearer {}'"],
}
CONTEXT_SECRETS = {
    "password": passwords,
    "secret": random_keys,
    "api_key": random_keys,
    "bearer_token": _text(ALNUM + "._~+/-", 16, 80),
}


@PROPERTY
@given(
    data=st.data(),
    kind=st.sampled_from(sorted(CONTEXTS)),
    before=st.text(max_size=80),
    after=st.text(max_size=80),
)
def test_no_assigned_secret_survives_in_arbitrary_text(
    data: st.DataObject, kind: str, before: str, after: str
) -> None:
    template = data.draw(st.sampled_from(CONTEXTS[kind]))
    secret = data.draw(CONTEXT_SECRETS[kind])
    assume(secret not in before + after)
    text = f"{before}\n{template.format(secret)}\n{after}"
    assert secret not in redact(text).text


@PROPERTY
@given(user=_text(ALNUM, 1, 12), password=url_passwords, before=st.text(max_size=60))
def test_no_url_password_survives(user: str, password: str, before: str) -> None:
    assume(not password.startswith(("$", "{")))  # templates like ${PW} are references
    # a mask (`...`, `***`, `xxx`: three or more of *xX•.#-) stands for a password already
    # and is kept (secrets.is_template); hypothesis found `postgres://0:...@db-1…`
    assume(not re.fullmatch(r"[*xX•.#-]{3,}", password))
    assume(f":{password}@" not in before)
    text = f"{before} postgres://{user}:{password}@db-1.internal:5432/app?sslmode=require"
    assert f":{password}@" not in redact(text).text


@PROPERTY
@given(secret=aws_secret_keys, before=st.text(max_size=60))
def test_aws_secret_keys_assigned_by_name_never_survive(secret: str, before: str) -> None:
    assume(secret not in before)
    text = f"{before}\naws_secret_access_key = {secret}\n"
    assert secret not in redact(text).text


@PROPERTY
@given(
    lines=st.lists(_text(B64, 16, 64), min_size=1, max_size=8),
    kind=st.sampled_from(["RSA ", "EC ", "OPENSSH ", ""]),
)
def test_no_private_key_line_survives(lines: list[str], kind: str) -> None:
    block = (
        f"-----BEGIN {kind}PRIVATE KEY-----\n"
        + "\n".join(lines)
        + f"\n-----END {kind}PRIVATE KEY-----"
    )
    result = redact(f"$ cat id\n{block}\n$ ls")
    assert all(line not in result.text for line in lines)
    assert result.text.endswith("\n$ ls")


CLEAN_WORDS = st.sampled_from(
    [
        "the", "service", "memory", "grows", "slowly", "after", "days", "KeyError:", "keys()",
        "TokenizerFast", "monkeypatch", "passes", "bypass", "password", "token", "secret",
        "org.apache.hadoop.fs.FileSystem", "Foo.java:57", "PasswordPolicy.java:88", "2.9.2",
        "3.11", "ORA-04031", "HTTP", "413", "exit", "137", "0xc0000005", "valgrind",
        "--leak-check=full",
        "max_tokens=4096", "primary_key=True", "api_key=None", "password", "str", "getpass()",
        "$DB_PASSWORD", "self.token", "PASS:", "FAIL:", "def", "return", "None", "(", ")", "[", "]",
    ]
)  # fmt: skip


@PROPERTY
@given(st.lists(CLEAN_WORDS, max_size=40), st.sampled_from([" ", "\n", " \n "]))
def test_text_with_nothing_to_redact_is_unchanged(words: list[str], sep: str) -> None:
    text = sep.join(words)
    assert redact(text) == Redacted(text=text, kinds={})


@PROPERTY
@given(st.text(max_size=300))
def test_redaction_is_idempotent(text: str) -> None:
    once = redact(text).text
    assert redact(once) == Redacted(text=once, kinds={})


# --- the planted-secrets fixture ----------------------------------------------------------


def _records(fixtures_dir: Path) -> list[dict[str, object]]:
    path = fixtures_dir / "text" / "planted_secrets.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _planted(fixtures_dir: Path) -> list[dict[str, str]]:
    sidecar = json.loads((fixtures_dir / "text" / "planted_secrets.json").read_text())
    secrets: list[dict[str, str]] = sidecar["secrets"]
    return secrets


def test_the_fixture_is_valid_input_and_really_holds_every_planted_secret(
    fixtures_dir: Path,
) -> None:
    records = _records(fixtures_dir)
    for record in records:
        model = TaskRecord if record["record_type"] == "task" else EpisodeRecord
        model.model_validate(record)
    raw = json.dumps(records)
    planted = _planted(fixtures_dir)
    assert len(planted) >= 30
    assert all(secret["value"] in raw for secret in planted)
    assert {s["record"] for s in planted} <= {str(r["id"]) for r in records}


def test_no_planted_secret_survives_redaction_of_the_records(fixtures_dir: Path) -> None:
    redacted = json.dumps(redact_value(_records(fixtures_dir)))
    survivors = [s for s in _planted(fixtures_dir) if s["value"] in redacted]
    assert survivors == []


def test_each_planted_secret_is_reported_with_its_kind(fixtures_dir: Path) -> None:
    records = {str(r["id"]): r for r in _records(fixtures_dir)}
    for secret in _planted(fixtures_dir):
        *path, key = secret["field"].split(".")
        holder: object = records[secret["record"]]
        for part in path:
            assert isinstance(holder, dict)
            holder = holder[part]
        assert isinstance(holder, dict)
        if path and path[-1] in {"facts", "parameters"}:
            # a bare value in structured data is known by the key it is stored under
            assert redact_value({key: holder[key]}) == {key: marker(secret["kind"])}, secret
        else:
            assert secret["kind"] in redact(holder[key]).kinds, secret


@pytest.mark.parametrize("side", ["head", "tail"])
@pytest.mark.parametrize("offset", [-3000, -40, 0, 17, 2500])
def test_a_secret_where_a_long_log_is_cut_is_gone_from_both_sides(side: str, offset: int) -> None:
    from metisgraph.ingest.prepare.episode import MAX_TEXT_CHARS, prepare_episode

    limit = MAX_TEXT_CHARS["observation"]
    lines = ["copied a block of the volume"] * 12_000
    lines[0], lines[-1] = "started the copy", "finished the copy"
    body = "\n".join(base64.b64encode(bytes([j, 7 * j % 256]) * 24).decode() for j in range(40))
    key = f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"
    log = "\n".join(lines)
    # Near where the head ends, or where the tail begins.
    near = limit * 2 // 3 if side == "head" else len(log) - limit // 3
    at = log.rfind("\n", 0, near + offset)
    observation = log[:at] + "\n" + key + log[at:]
    episode = prepare_episode(EpisodeRecord(project="p", summary="s", observation=observation))
    stored = episode.props["observation"]
    assert len(stored) <= limit + 100 and "characters cut" in stored
    assert all(line not in stored for line in body.splitlines())
    assert episode.cut == {"observation": len(observation)}
    assert stored.startswith("started the copy") and stored.endswith("finished the copy")


def test_text_under_the_limits_is_stored_whole_and_unmarked() -> None:
    from metisgraph.ingest.prepare.episode import MAX_TEXT_CHARS, prepare_episode

    observation = "x = 1\n" * (MAX_TEXT_CHARS["observation"] // 6)
    episode = prepare_episode(EpisodeRecord(project="p", summary="s", observation=observation))
    assert episode.props["observation"] == observation and "cut" not in episode.props
    assert episode.notes() == []
