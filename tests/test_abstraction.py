"""Abstraction: instance details become placeholders; what makes text findable stays."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from metisgraph.ingest.sanitize.abstraction import Abstracted, abstract, sanitize

PROPERTY = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_the_seed_lesson_generalises_host_and_commit() -> None:
    one = abstract("valgrind on server-01 at commit a1b2c3d found a leak")
    other = abstract("valgrind on web-07 at commit 9f8e7d6 found a leak")
    assert one.text == other.text == "valgrind on <HOST> at commit <SHA> found a leak"
    assert one.details == {"HOST": ["server-01"], "SHA": ["a1b2c3d"]}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "curl http://api.internal.example.com:8080/v1/items",
            "curl http://<HOST>:<PORT>/v1/items",
        ),
        ("GET https://10.1.2.3/health", "GET https://<IP>/health"),
        ("jdbc:postgresql://[fe80::1]:5432/db", "jdbc:postgresql://<IP>:<PORT>/db"),
        ("open http://localhost:9998/ now", "open http://localhost:<PORT>/ now"),
        ("root@a1b2c3d4e5f6:/testbed# pytest", "root@<HOST>:/testbed# pytest"),
        ("git@github.com:acme/repo.git", "git@<HOST>:acme/repo.git"),
        ("mail jane.doe@example.com today", "mail <EMAIL> today"),
        ("DB_HOST=db01.prod.internal", "DB_HOST=<HOST>"),
        ("hostname: web-3", "hostname: <HOST>"),
        ("--host build-7 --port 8443", "--host <HOST> --port <PORT>"),
        ("Host: api.example.com", "Host: <HOST>"),
        ("ssh deploy@10.0.0.12 uptime", "ssh deploy@<IP> uptime"),
        ("$ ssh bastion-2.corp.example.com", "$ ssh <HOST>"),
        ("scp app.tgz deploy@server-02:/opt/", "scp app.tgz deploy@<HOST>:/opt/"),
        ("ping -c 3 db-7.lan", "ping -c 3 <HOST>"),
        (
            "Linux ip-10-0-1-23 5.15.0-91-generic #101-Ubuntu",
            "Linux <HOST> 5.15.0-91-generic #101-Ubuntu",
        ),
        ("runner ci-runner-04 failed", "runner <HOST> failed"),
        ("see docs.python.org for details", "see <HOST> for details"),
        ("listening on 0.0.0.0:8000", "listening on <IP>:<PORT>"),
        ("peer fe80::1%eth0 and ::1", "peer <IP> and <IP>"),
        ("addr 2001:db8::ff00:42:8329", "addr <IP>"),
        ("link 00:1a:2b:3c:4d:5e up", "link <MAC> up"),
        ("request 550e8400-e29b-41d4-a716-446655440000 failed", "request <UUID> failed"),
        (
            "Apache Maven 3.9.0 (9b58d2bad23a66be161c4664ef21ce219c2c8584)",
            "Apache Maven 3.9.0 (<SHA>)",
        ),
        ("git diff a1b2c3d..e4f5a6b", "git diff <SHA>..<SHA>"),
        ("read 1234567 bytes", "read <NUM> bytes"),
        ("segfault ip 0x00007f3a2c001000", "segfault ip <ADDR>"),
    ],
)
def test_instance_details_become_typed_placeholders(text: str, expected: str) -> None:
    assert abstract(text).text == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('File "/home/jdoe/project/src/x.py", line 12', 'File "<HOME>/project/src/x.py", line 12'),
        ("/Users/alice/work/main.go:17", "<HOME>/work/main.go:17"),
        ("cd /root/.m2 && ls", "cd <HOME>/.m2 && ls"),
        (r"C:\Users\bob\src\app.cs", r"<HOME>\src\app.cs"),
        ("file:///home/jdoe/notes.txt", "file://<HOME>/notes.txt"),
        ("ls /home && cat /home/run.sh", "ls /home && cat /home/run.sh"),
        ("/tmp/tmpab12cd34/project/out.log", "<TMP>/project/out.log"),
        ("/tmp/pytest-of-root/pytest-3/test_foo0/x.txt", "<TMP>/test_foo0/x.txt"),
        ("/var/folders/7x/abcd_1234efgh/T/tmpxyz12345/foo.log", "<TMP>/foo.log"),
        ("cd /tmp && make", "cd <TMP> && make"),
        ("/tmp/build.log", "<TMP>/build.log"),
        (r"C:\Users\bob\AppData\Local\Temp\tmp1a2b3c4d\x.txt", r"<TMP>\x.txt"),
        ("/opt/data/home/x stays", "/opt/data/home/x stays"),
    ],
)
def test_home_and_temporary_paths_keep_their_stable_tail(text: str, expected: str) -> None:
    assert abstract(text).text == expected


@pytest.mark.parametrize(
    "stamp",
    [
        "2024-01-15T10:23:45.123Z",
        "2024-01-15T10:23:45+02:00",
        "2015-10-18 18:01:47,978",
        "2024/01/15 10:23:45",
        "2024-01-15",
        "15/Jan/2024:10:23:45 +0000",
        "Jan 15 10:23:45",
        "Mon Jan 15 10:23:45 UTC 2024",
        "Sun Dec 04 04:47:44 2005",
        "Mon, 15 Jan 2024 10:23:45 GMT",
        "Jan 24, 2026 12:46:23 AM",
        "17/06/09 20:10:40",
        "10:23:45.123",
    ],
)
def test_timestamps_in_common_formats(stamp: str) -> None:
    result = abstract(f"[{stamp}] ERROR boom")
    assert result.text == "[<TIMESTAMP>] ERROR boom"
    assert result.details == {"TIMESTAMP": [stamp]}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("pid 4242 killed", "pid <PID> killed"),
        ("[pid=4242]", "[pid=<PID>]"),
        ("kill -9 31337", "kill -9 <PID>"),
        ("pmap -x 4242 | tail -1", "pmap -x <PID> | tail -1"),
        ("strace -f -p 4242", "strace -f -p <PID>"),
        ("jstack 4242 > dump.txt", "jstack <PID> > dump.txt"),
        ("cat /proc/4242/status", "cat /proc/<PID>/status"),
        (
            "  PID TTY  TIME CMD\n 4242 ?    00:00:01 java",
            "  PID TTY  TIME CMD\n <PID> ?    <TIMESTAMP> java",
        ),
        ("line 4242 of the file", "line 4242 of the file"),
    ],
)
def test_pids_are_abstracted_only_where_the_context_says_pid(text: str, expected: str) -> None:
    assert abstract(text).text == expected


FINDABLE = [
    "org.apache.hadoop.fs.FileSystem",
    "at org.jfree.chart.renderer.AbstractRenderer.test2947660(AbstractRenderer.java:409)",
    "java.io.File java.net.URL com.example.App io.netty.channel.Channel",
    "Foo.java:57",
    "src/main.rs:10:5",
    "version 2.9.2 and python 3.11 and numpy==1.26.4 and v1.2.3.4 and version 1.2.3.4",
    "ORA-04031 HTTP 413 exit 137 exit code 3221225477 0xc0000005 c0000005 SIGSEGV",
    "HADOOP-123456 and #123456 and -Xmx1024m and 1e100000",
    "self.net model.app os.path.join README.md setup.py MANIFEST.in libfoo.so",
    "python -m pytest tests/test_cache.py::test_evict -x",
    "KeyError: 'user' in dict.get",
    "new file mode 100644",
    "utf-8 x86-64 sha-256 on python-3",
    "ping it dequeued before timing out",
    "Mar 31  2025 README.md",
    "ssh into the box",
    "std::vector<int> and a::b",
]


@pytest.mark.parametrize("text", FINDABLE)
def test_what_makes_text_findable_is_left_alone(text: str) -> None:
    assert abstract(text) == Abstracted(text=text, details={})


def test_details_keep_originals_in_order_without_repeats() -> None:
    result = abstract("10.0.0.2 then 10.0.0.1 then 10.0.0.2 on host web-2 at 2024-01-15")
    assert result.details == {
        "IP": ["10.0.0.2", "10.0.0.1"],
        "HOST": ["web-2"],
        "TIMESTAMP": ["2024-01-15"],
    }


def test_sanitize_redacts_before_abstracting_and_reports_both() -> None:
    result = sanitize(
        "psql postgres://admin:S3cr3t!pw@db-prod-3.internal:5432/app as jdoe@example.com"
    )
    assert (
        result.text
        == "psql postgres://admin:[REDACTED:password_in_url]@<HOST>:<PORT>/app as <EMAIL>"
    )
    assert result.redactions == {"password_in_url": 1}
    assert result.details == {
        "HOST": ["db-prod-3.internal"],
        "PORT": ["5432"],
        "EMAIL": ["jdoe@example.com"],
    }
    assert "S3cr3t!pw" not in json.dumps(result.details)


def test_the_same_lesson_on_other_machines_reads_the_same(fixtures_dir: Path) -> None:
    lines = (fixtures_dir / "text" / "same_lesson.jsonl").read_text().splitlines()
    pairs = [json.loads(line) for line in lines if line.strip()]
    assert len(pairs) >= 5
    for pair in pairs:
        one, other = sanitize(pair["a"]), sanitize(pair["b"])
        assert pair["a"] != pair["b"]
        assert one.text == other.text, pair["about"]
        assert one.details != other.details


# --- properties ---------------------------------------------------------------------------

ipv4s = st.ip_addresses(v=4).map(str)
# Without a digit ("::", "a::b") an address reads as C++ or Haskell, and stays by design.
ipv6s = st.ip_addresses(v=6).map(str).filter(lambda s: any(c.isdigit() for c in s))
uuids = st.uuids().map(str)
shas = st.text(alphabet="0123456789abcdef", min_size=7, max_size=40).filter(
    lambda s: (
        re.search("[a-f]", s) is not None
        and re.search("[0-9]", s) is not None
        and "0000" not in s  # runs of zeros mark flags (c0000005), which stay on purpose
        and re.fullmatch(r"\d+e\d+", s) is None
    )
)
DETAILS = {"IP": ipv4s, "IPv6": ipv6s, "UUID": uuids, "SHA": shas}
SEPARATORS = [" ", "\n", "(", ")", ",", "'", '"', "\t"]
LEFT_GLUE = {
    "IP": [*SEPARATORS, "host=", "@", "//", "="],
    "IPv6": [*SEPARATORS, "["],
    "UUID": [*SEPARATORS, "=", ":", "/"],
    "SHA": [*SEPARATORS, "=", ": ", "/", "@sha256:"],
}
RIGHT_GLUE = {
    "IP": [*SEPARATORS, ":8080", "/24", "]"],
    "IPv6": [*SEPARATORS, "]"],
    "UUID": [*SEPARATORS, ":", "/"],
    "SHA": [*SEPARATORS, "..", ":", "/"],
}


@PROPERTY
@given(
    data=st.data(),
    kind=st.sampled_from(sorted(DETAILS)),
    before=st.text(max_size=60),
    after=st.text(max_size=60),
)
def test_no_generated_ip_uuid_or_sha_survives(
    data: st.DataObject, kind: str, before: str, after: str
) -> None:
    value = data.draw(DETAILS[kind])
    left = data.draw(st.sampled_from(LEFT_GLUE[kind]))
    right = data.draw(st.sampled_from(RIGHT_GLUE[kind]))
    assume(value not in before + after)
    # "version 1.2.3.4" is a version and "pkg==1.2.3.4", "pkg<=1.2.3.4" pins, by design
    assume(re.search(r"(?i)\b(?:version|release|ver|v)\W*$|[=<>~!]=$", before + left) is None)
    text = f"{before}{left}{value}{right}{after}"
    assert value not in abstract(text).text


FINDABLE_WORDS = st.sampled_from(
    [
        "the", "cache", "grows", "after", "days", "KeyError", "ValueError:", "Traceback",
        "org.apache.hadoop.fs.FileSystem", "java.io.IOException", "Foo.java:57", "line", "57",
        "2.9.2", "3.11.7", "numpy==1.26.4", "ORA-04031", "HTTP", "413", "exit", "137",
        "0xc0000005", "SIGSEGV", "valgrind", "--leak-check=full", "python", "-m", "pytest",
        "tests/test_x.py::test_y", "README.md", "os.path.join", "self.net", "x86_64", "utf-8",
        "HADOOP-12345", "#1234567", "(", ")", "[", "]", ",", ":", "->", "=", "on", "at", "node",
    ]
)  # fmt: skip


@PROPERTY
@given(st.lists(FINDABLE_WORDS, max_size=40), st.sampled_from([" ", "\n", "  "]))
def test_text_with_nothing_to_abstract_is_unchanged(words: list[str], sep: str) -> None:
    text = sep.join(words)
    assert abstract(text) == Abstracted(text=text, details={})


def _detail_texts() -> st.SearchStrategy[str]:
    pieces = st.one_of(
        st.text(max_size=20),
        FINDABLE_WORDS,
        ipv4s,
        ipv6s,
        uuids,
        shas,
        st.sampled_from(
            [
                "on server-01",
                "ssh deploy@web-3",
                "http://api.example.com:8080/x",
                "/home/bob/x.py",
                "/tmp/tmpab12cd34/out",
                "2024-01-15T10:23:45Z",
                "pid 4242",
                "1234567",
                "password=hunter2!9",
                "AKIAZ7VQ3EXAMPLE4KQD",
                "Authorization: Bearer abc123def456ghi",
                "root@box-1:~#",
                "jane@example.com",
                "port 5432",
                "Jan 15 10:23:45",
            ]
        ),
    )
    return st.lists(pieces, max_size=12).map(
        lambda parts: "".join(
            p + s for p, s in zip(parts, [" ", "\n", "=", ":", ""] * 3, strict=False)
        )
    )


@PROPERTY
@given(_detail_texts())
def test_sanitize_is_idempotent(text: str) -> None:
    once = sanitize(text).text
    assert sanitize(once).text == once


@PROPERTY
@given(st.text(max_size=200))
def test_abstraction_is_idempotent_on_any_text(text: str) -> None:
    once = abstract(text).text
    assert abstract(once).text == once


# --- real trajectories ------------------------------------------------------------------

PY_FRAME = re.compile(r'File "[^"\n]+", line \d+, in \w+')
JAVA_FRAME = re.compile(r"at [\w$.<>]+\([\w$]+\.java:\d+\)")


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


@pytest.mark.shared
def test_real_observations_keep_frames_and_stay_idempotent(shared_dir: Path) -> None:
    texts: list[str] = []
    for path in sorted((shared_dir / "trajectories").rglob("*.traj.json"))[:6]:
        texts += _strings(json.loads(path.read_text()))
    corpus = shared_dir / "eval" / "trace2fix-defects4j" / "corpus.jsonl"
    for line in corpus.read_text().splitlines()[:150]:
        texts += _strings(json.loads(line))
    frames = 0
    for text in texts:
        clean = sanitize(text).text
        assert sanitize(clean).text == clean
        for frame in JAVA_FRAME.findall(text):
            frames += 1
            assert frame in clean
        for frame in PY_FRAME.findall(text):
            frames += 1
            tail = frame.split('", ', 1)[1]  # the path may lose its home; the line stays
            assert tail in clean
    assert frames > 100
