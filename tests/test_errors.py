"""Error signatures: log templates, every error family, own-code frames, stability, speed."""

from __future__ import annotations

import hashlib
import random
import re
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metisgraph.ingest.errors.logtemplate import DEFAULT_RULES, RULES, log_template, template_key
from metisgraph.ingest.errors.signatures import ErrorSignature, extract_errors, line_signature


@pytest.fixture(scope="module")
def errors_dir(fixtures_dir: Path) -> Path:
    return fixtures_dir / "errors"


def read(errors_dir: Path, name: str) -> list[ErrorSignature]:
    return extract_errors((errors_dir / name).read_text(encoding="utf-8"))


def kinds(errors: list[ErrorSignature]) -> list[str]:
    return [e.kind for e in errors]


def only(errors: list[ErrorSignature], kind: str) -> ErrorSignature:
    found = [e for e in errors if e.kind == kind]
    assert len(found) == 1, kinds(errors)
    return found[0]


# --- log templates ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "template"),
    [
        ("took 35 ms, retry -2, ratio 0.75", "took <DURATION>, retry <NUM>, ratio <NUM>"),
        ("size 16.0 B, free 2.4 GB, 3 hosts", "size <SIZE>, free <SIZE>, <NUM> hosts"),
        ("from 10.1.2.3:8080 and fe80::1ff:fe23:4567:890a", "from <HOST> and <HOST>"),
        ("rhost=host-7.dsl.example.net user=root", "rhost=<HOST> user=<USER>"),
        ("open /var/lib/app/data.db and C:\\Users\\ana\\x.txt", "open <PATH> and <PATH>"),
        ("see https://example.org/a?b=1 or mail ops@example.org", "see <URL> or mail <EMAIL>"),
        ("job 3f2a9c1e-1111-2222-3333-444455556666 at 2024-03-11T10:42:17Z", "job <UUID> at <TS>"),
        ("at Sun Jul 3 23:16:09 2005 from 00:1b:63:84:45:e6", "at <TS> from <MAC>"),
        (
            "block blk_-5704899712662113150 on core.1524 at 0x7ffd2c1e",
            "block <ID> on <ID> at <HEX>",
        ),
        ("commit 9fceb02d0ae598e95dc970b74767f19372d61af8", "commit <HEX>"),
        ("ready=true, muted=False", "ready=<BOOL>, muted=<BOOL>"),
        ("job com.apple.icloud.fmfd.heartbeat ran", "job <NAME> ran"),
        (
            "session opened for user root by (uid=0)",
            "session opened for user <USER> by (uid=<NUM>)",
        ),
        ("ws=null, name=admin", "ws=<USER>, name=<USER>"),
    ],
)
def test_log_template_types_the_variable_parts(line: str, template: str) -> None:
    assert log_template(line) == template


@pytest.mark.parametrize(
    "line", ["user created", "user logged in", "rpc.statd startup succeeded", "for user ana"]
)
def test_words_that_only_look_variable_are_kept(line: str) -> None:
    assert log_template(line) == line


@pytest.mark.parametrize(
    ("line", "rule", "with_rule", "without"),
    [
        ("link up on en0", "name-digit", "link up on en0", "link up on <ID>"),
        ("from 1.2.3.4 ()", "empty", "from <HOST> (<EMPTY>)", "from <HOST> ()"),
        ("for user ana", "user", "for user <USER>", "for user ana"),
        ("depth.........0", "dot-leader", "depth ... <NUM>", "<ID>"),
    ],
)
def test_rules_that_failed_the_ablation_apply_only_when_asked_for(
    line: str, rule: str, with_rule: str, without: str
) -> None:
    assert rule not in DEFAULT_RULES
    assert log_template(line) == without
    assert log_template(line, DEFAULT_RULES | {rule}) == with_rule


def test_an_unknown_rule_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown template rules: magic"):
        log_template("x", frozenset({"magic"}))


def test_every_rule_cites_a_source_or_the_systems_it_came_from() -> None:
    for rule in RULES.values():
        assert bool(rule.source) != bool(rule.provenance), rule.name


def test_qualified_names_are_masked_but_exception_classes_and_db_codes_are_kept() -> None:
    line = "class org.apache.hadoop.ipc.Client threw java.net.ConnectException and ORA-04031"
    assert log_template(line) == "class <NAME> threw java.net.ConnectException and ORA-04031"


def test_template_key_untypes_and_merges_adjacent_placeholders() -> None:
    assert template_key("rhost=<HOST> user=<USER>") == "rhost=<*> user=<*>"
    assert template_key(log_template("channels 1 2 3 36 40 44")) == "channels <*>"
    assert template_key("a  <NUM>:<NUM>  b") == "a <*> b"


def test_line_signature_groups_lines_of_one_template() -> None:
    assert line_signature("Invalid user admin from 10.0.0.7") == line_signature(
        "Invalid user 1234 from 2001:db8::7"
    )
    assert line_signature("rhost=10.0.0.7") == line_signature("rhost=dsl-1-2.example.net")
    assert line_signature("worker 3 started") != line_signature("worker 3 stopped")


@given(st.lists(st.integers(min_value=0, max_value=10**12), min_size=3, max_size=3))
def test_line_signature_ignores_the_numbers_in_a_line(numbers: list[int]) -> None:
    a, b, c = numbers
    line = f"request {a} from 10.0.{b % 256}.{c % 256} took {b} ms after {c} retries"
    assert line_signature(line) == "request <*> from <*> took <*> after <*> retries"


@settings(max_examples=200)
@given(st.text(max_size=300))
def test_templates_and_extraction_accept_any_text(text: str) -> None:
    assert isinstance(line_signature(text), str)
    errors = extract_errors(text)
    assert errors == extract_errors(text)


def test_line_signature_does_not_depend_on_lines_seen_before() -> None:
    lines = [f"user{i} logged in from 10.0.0.{i}" for i in range(30)] + ["disk 3 full", "x"]
    first = [line_signature(line) for line in lines]
    shuffled = list(range(len(lines)))
    random.Random(5).shuffle(shuffled)
    again = {i: line_signature(lines[i]) for i in shuffled}
    assert [again[i] for i in range(len(lines))] == first


# --- Python -----------------------------------------------------------------------


def test_python_cause_chain_keys_on_the_root_cause(errors_dir: Path) -> None:
    (error,) = read(errors_dir, "python_cause.txt")
    assert error.kind == "python:KeyError"
    assert error.category == "python"
    assert error.chain == ("python:billing.errors.InvoiceMissing", "python:KeyError")
    assert error.template == "'<ID>'"
    # innermost first, root-cause section first; the checkout root (/home/dana/work) is dropped
    assert error.frames == (
        "billing.store.fetch_invoice",
        "billing.invoices.total",
        "billing.run.main",
    )
    assert set(error.symbols) == {"billing.store", "billing.run", "billing.invoices"}
    assert error.signature.startswith("python:KeyError | '<*>' | billing.store.fetch_invoice")


def test_python_context_chain_drops_stdlib_and_site_packages_frames(errors_dir: Path) -> None:
    (error,) = read(errors_dir, "python_context.txt")
    assert error.chain == ("python:requests.exceptions.JSONDecodeError", "python:KeyError")
    assert error.frames == ("api.handlers.get_user",)
    assert "json" not in " ".join(error.symbols) and "requests" not in " ".join(error.symbols)


def test_python_syntax_error_without_traceback_line(errors_dir: Path) -> None:
    (error,) = read(errors_dir, "python_syntax.txt")
    assert error.kind == "python:SyntaxError"
    assert error.template == "'(' was never closed"
    assert error.frames == ("tools.report.<module>",)


def test_python_exception_on_its_own_line(errors_dir: Path) -> None:
    errors = read(errors_dir, "python_single.txt")
    assert kinds(errors) == ["log:error", "python:ModuleNotFoundError"]
    assert only(errors, "python:ModuleNotFoundError").template == "No module named 'pandas'"


def test_pytest_summary_names_the_failing_test(errors_dir: Path) -> None:
    errors = read(errors_dir, "pytest_summary.txt")
    assert kinds(errors) == [
        "python:AssertionError",
        "python:KeyError",
        "python:AssertionError",
        "python:BytesWarning",  # under -W error a warning fails the test
        "pytest:failed",  # no reason printed: no guess at one
    ]
    assert errors[0].frames == ("tests.test_prices.test_discount",)  # parameters dropped
    assert errors[1].frames == ("tests.test_prices.TestRounding.test_half_up",)
    assert errors[2].template == "assert <NUM> == <NUM>"
    assert errors[3].frames == ("tests.test_io.test_encode",)  # a parameter id with a space


def test_unittest_error_heading_is_not_a_second_error(errors_dir: Path) -> None:
    (error,) = read(errors_dir, "unittest_run.txt")
    assert error.kind == "python:ValueError"
    assert error.frames == ("client.session.post", "test_client.test_conflicting_params")


# --- JVM --------------------------------------------------------------------------


def test_java_caused_by_keys_on_the_root_and_keeps_the_chain(errors_dir: Path) -> None:
    errors = read(errors_dir, "java_caused_by.txt")
    assert kinds(errors) == ["java.sql.SQLRecoverableException", "ORA-04031"]
    java = errors[0]
    assert java.category == "java"
    assert java.chain == (
        "org.springframework.dao.DataAccessResourceFailureException",
        "java.sql.SQLRecoverableException",
    )
    # root-cause frames first; Spring, the Oracle driver, Hikari and java.* are not own code
    assert java.frames == (
        "com.acme.orders.OrderRepository.insert",
        "com.acme.orders.OrderService.place",
        "com.acme.orders.OrderController.create",
    )
    assert not any(
        s.startswith(("org.springframework", "oracle.", "com.zaxxer", "java."))
        for s in java.symbols
    )
    assert java.template.startswith("ORA-04031: unable to allocate <SIZE>")


def test_the_log_line_announcing_a_trace_is_not_a_second_error(errors_dir: Path) -> None:
    errors = read(errors_dir, "java_caused_by.txt")
    assert not any(e.kind.startswith("log:") for e in errors)


def test_kotlin_trace(errors_dir: Path) -> None:
    (error,) = read(errors_dir, "kotlin.txt")
    assert error.kind == "kotlin.UninitializedPropertyAccessException"
    assert error.category == "java"
    assert error.frames[0] == "com.example.inventory.StockService.getRepository"
    assert "com.example.inventory.MainKt" in error.symbols


def test_java_out_of_memory(errors_dir: Path) -> None:
    (error,) = read(errors_dir, "java_oom.txt")
    assert (error.kind, error.template) == ("java.lang.OutOfMemoryError", "Java heap space")
    assert error.frames == ("com.acme.ingest.BatchBuffer.add", "com.acme.ingest.Loader.run")


def test_a_java_exception_after_a_log_prefix_on_the_same_line() -> None:
    text = (
        "2024-03-11 10:42:17 ERROR [main] Net - java.io.IOException: Broken pipe\n"
        "\tat com.acme.net.Sender.send(Sender.java:12)\n"
        "\tat java.base/java.lang.Thread.run(Thread.java:833)\n"
    )
    (error,) = extract_errors(text)
    assert (error.kind, error.template, error.frames) == (
        "java.io.IOException",
        "Broken pipe",
        ("com.acme.net.Sender.send",),
    )


def test_a_library_is_own_code_in_a_trace_from_its_own_tests() -> None:
    pkg = "com.fasterxml.jackson.databind"
    trace = (
        f"{pkg}.JsonMappingException: no creator\n"
        f"\tat {pkg}.DeserializationContext.report(DeserializationContext.java:9)\n"
        f"\tat {pkg}.deser.BeanDeserializer.build(BeanDeserializer.java:7)\n"
        f"\tat {pkg}.creators.TestCreators.testSimple(TestCreators.java:40)\n"
        "\tat junit.framework.TestCase.runTest(TestCase.java:176)\n"
    )
    (error,) = extract_errors(trace)
    assert error.frames == (
        f"{pkg}.DeserializationContext.report",
        f"{pkg}.deser.BeanDeserializer.build",
        f"{pkg}.creators.TestCreators.testSimple",
    )
    # the same library under an application's test is someone else's code
    app = trace.replace(f"{pkg}.creators.TestCreators", "com.acme.OrderTest")
    assert extract_errors(app)[0].frames == ("com.acme.OrderTest.testSimple",)


def test_a_long_assertion_message_before_the_frames() -> None:
    diff = "\n".join(f"    line {i} of the expected tree" for i in range(60))
    text = (
        f"junit.framework.ComparisonFailure: trees differ\n{diff}\n"
        "\tat junit.framework.Assert.assertEquals(Assert.java:100)\n"
        "\tat com.acme.tree.PrinterTest.testIndent(PrinterTest.java:12)\n"
    )
    (error,) = extract_errors(text)
    assert (error.kind, error.frames) == (
        "junit.framework.ComparisonFailure",
        ("com.acme.tree.PrinterTest.testIndent",),
    )


# --- Go, Rust -----------------------------------------------------------------------


def test_go_panic_with_goroutine_trace(errors_dir: Path) -> None:
    errors = read(errors_dir, "go_panic.txt")
    assert kinds(errors) == ["go:panic", "exit 2"]
    panic = errors[0]
    assert panic.template == "runtime error: invalid memory address or nil pointer dereference"
    assert panic.frames == ("feed.Reader.Next", "feed.Consume")  # "created by" is not a frame
    assert panic.symbols == ("github.com/acme/importer/internal/feed",)


def test_go_fatal_error_skips_runtime_frames(errors_dir: Path) -> None:
    (error,) = read(errors_dir, "go_fatal.txt")
    assert (error.kind, error.category) == ("go:fatal", "go")
    assert error.frames == ("main.Cache.Put", "main.worker")


def test_rust_panic_without_backtrace_keys_on_its_file(errors_dir: Path) -> None:
    errors = read(errors_dir, "rust_panic.txt")
    assert kinds(errors) == ["rust:panic", "exit 101"]
    assert errors[0].frames == ("src/config.rs",)
    assert errors[0].template.startswith(
        "called `Result::unwrap()` on an `Err` value: Os { code: <NUM>"
    )


def test_rust_panic_backtrace_keeps_only_the_crate_frames(errors_dir: Path) -> None:
    (error,) = read(errors_dir, "rust_backtrace.txt")
    assert error.template == "index out of bounds: the len is <NUM> but the index is <NUM>"
    assert error.frames == (
        "ledger::ledger::entries::Journal::balance",
        "ledger::main::{{closure}}",
    )


# --- native and Windows ---------------------------------------------------------------


def test_segfault_with_gdb_backtrace(errors_dir: Path) -> None:
    (error,) = read(errors_dir, "native_gdb.txt")
    assert (error.kind, error.category) == ("SIGSEGV", "native")
    assert error.frames == ("png_row_copy", "decode_image", "main")


def test_address_sanitizer_report(errors_dir: Path) -> None:
    (error,) = read(errors_dir, "native_asan.txt")
    assert error.kind == "asan:heap-use-after-free"
    assert error.frames == ("queue_pop", "worker_loop")


def test_glibc_abort_is_one_error_and_cxx_terminate_names_its_type(errors_dir: Path) -> None:
    errors = read(errors_dir, "native_abort.txt")
    assert kinds(errors) == ["SIGABRT", "std::out_of_range"]
    assert errors[0].template == "free(): double free detected in tcache <NUM>"


def test_windows_status_codes(errors_dir: Path) -> None:
    errors = read(errors_dir, "windows_crash.txt")
    # -1073741571 is 0xC00000FD (stack overflow) as a signed exit code
    assert kinds(errors) == ["0xc0000005", "0xc00000fd"]
    assert {e.category for e in errors} == {"native"}


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("bash: line 1: 4242 Killed                  python train.py", "SIGKILL"),
        ("Program terminated with signal SIGBUS, Bus error.", "SIGBUS"),
        ("worker 3 died: received signal 11", "SIGSEGV"),
        ("Floating point exception (core dumped)", "SIGFPE"),
        ("*** stack smashing detected ***: terminated", "SIGABRT"),
    ],
)
def test_crash_lines(line: str, kind: str) -> None:
    assert kinds(extract_errors(line)) == [kind]


# --- databases ------------------------------------------------------------------------


def test_oracle_codes_without_the_plsql_backtrace(errors_dir: Path) -> None:
    errors = read(errors_dir, "oracle.txt")
    assert kinds(errors) == ["ORA-04031", "TNS-12541"]  # ORA-06512 lines are the call stack
    assert errors[0].category == "oracle"
    assert errors[0].template.startswith("unable to allocate <SIZE> of shared memory")


def test_postgres_messages_map_to_sqlstate(errors_dir: Path) -> None:
    errors = read(errors_dir, "postgres.txt")
    assert kinds(errors) == ["postgres:23505", "postgres:42P01", "postgres:57014", "postgres:28P01"]
    assert errors[0].template == 'duplicate key value violates unique constraint "orders_pkey"'
    # the account stays: the rule that masked it helped on no system but its own two
    assert errors[3].template == 'password authentication failed for user "report_reader"'


def test_mysql_errors(errors_dir: Path) -> None:
    errors = read(errors_dir, "mysql.txt")
    assert kinds(errors)[:3] == ["mysql:1062", "mysql:1146", "mysql:1205"]
    assert errors[0].template == "Duplicate entry '<EMAIL>' for key 'users.email'"
    assert "python:pymysql.err.OperationalError" in kinds(errors)


def test_a_driver_exception_also_yields_the_database_code(errors_dir: Path) -> None:
    errors = read(errors_dir, "python_context.txt") + extract_errors(
        'psycopg2.errors.UniqueViolation: duplicate key value violates unique constraint "u_email"'
    )
    assert "postgres:23505" in kinds(errors)
    assert "python:psycopg2.errors.UniqueViolation" in kinds(errors)


# --- HTTP, exit codes, OOM ------------------------------------------------------------


def test_http_statuses(errors_dir: Path) -> None:
    statuses = [e.kind for e in read(errors_dir, "http.txt") if e.category == "http"]
    assert statuses == ["HTTP 404", "HTTP 413", "HTTP 502", "HTTP 503", "HTTP 429"]


@pytest.mark.parametrize(
    "line",
    [
        "GET /health HTTP/1.1 200 OK",
        "there are 401 locked files",
        "raise HTTPException(status_code=404)",
        "    response = PlainTextResponse('Not Found', status_code=404)",
        "ERROR = 40",
        "    except requests.exceptions.HTTPError:",
        "        ValueError: If the value is negative.",
        "Process finished with exit code 0",
    ],
)
def test_things_that_are_not_errors(line: str) -> None:
    assert extract_errors(line) == []


def test_exit_codes(errors_dir: Path) -> None:
    errors = read(errors_dir, "exit_codes.txt")
    assert kinds(errors) == [
        "exit 2",
        "python:subprocess.CalledProcessError",
        "exit 1",
        "exit 1",
        "log:error",  # three npm ERR! lines are one failure
        "exit 137",
    ]


def test_oom_killer_keeps_the_process_name(errors_dir: Path) -> None:
    errors = read(errors_dir, "oom.txt")
    assert kinds(errors) == ["oom-killer", "oom-killer", "oom-killer", "exit 137"]
    assert "Killed process <NUM> (java)" in errors[1].template


# --- other runtimes, compilers, nothing --------------------------------------------------


def test_node_trace(errors_dir: Path) -> None:
    (error,) = read(errors_dir, "node.txt")
    assert (error.kind, error.category) == ("node:TypeError", "node")
    assert error.frames == ("totalOf", "index.<anonymous>")  # node:internal frames dropped


def test_dotnet_trace(errors_dir: Path) -> None:
    (error,) = read(errors_dir, "dotnet.txt")
    assert error.kind == "dotnet:System.InvalidOperationException"
    assert error.frames == ("Acme.Shop.Checkout.PickWarehouse", "Acme.Shop.Program.Main")


def test_compiler_diagnostics(errors_dir: Path) -> None:
    errors = read(errors_dir, "compilers.txt")
    kinds_found = ["rustc:E0382", "compile:error", "tsc:TS2322", "log:fatal"]
    assert kinds(errors) == [*kinds_found, "compile:error", "compile:error"]
    assert errors[1].symbols == ("main",)
    assert errors[4].template == "cannot find symbol"  # Maven's javac format
    assert errors[4].symbols == ("acme.Cart",)
    assert (errors[5].template, errors[5].symbols) == (
        "undefined: bufio.NewScanr",
        ("feed.reader",),
    )


def test_kubectl_and_shell_errors(errors_dir: Path) -> None:
    errors = read(errors_dir, "shell.txt")
    assert kinds(errors) == ["HTTP 404", "exit 127"]
    assert errors[1].template == "helmfile: command not found"


def test_an_error_heading_without_words_is_not_an_error() -> None:
    assert extract_errors("ERROR:\n[ERROR]\n") == []


def test_text_without_errors_gives_nothing(errors_dir: Path) -> None:
    assert read(errors_dir, "clean.txt") == []
    assert extract_errors("") == []


# --- the signature itself -----------------------------------------------------------


def test_key_is_a_short_hash_of_the_signature(errors_dir: Path) -> None:
    for error in read(errors_dir, "java_caused_by.txt") + read(errors_dir, "go_panic.txt"):
        assert re.fullmatch(r"[0-9a-f]{16}", error.key)
        assert error.key == hashlib.sha256(error.signature.encode()).hexdigest()[:16]
        assert len(error.frames) <= 3
        assert error.sample and len(error.sample) <= 2000


def test_errors_come_in_text_order_and_each_once(errors_dir: Path) -> None:
    text = (errors_dir / "oracle.txt").read_text() * 2 + (errors_dir / "kotlin.txt").read_text()
    assert kinds(extract_errors(text)) == [
        "ORA-04031",
        "TNS-12541",
        "kotlin.UninitializedPropertyAccessException",
    ]


PY_TRACE = """Traceback (most recent call last):
  File "{root}/shop/orders/views.py", line {a}, in checkout
    load(order_id)
  File "{root}/shop/orders/models.py", line {b}, in load
    return rows[key]
  File "{venv}/lib/python3.11/site-packages/sqlalchemy/engine/base.py", line {c}, in execute
    raise exc
KeyError: 'order-{order}'
"""


@pytest.mark.parametrize(
    "values",
    [
        {"root": "/home/ana/code", "venv": "/home/ana/.venv", "a": 10, "b": 20, "c": 1, "order": 7},
        {
            "root": "/srv/build/4412/src",
            "venv": "/opt/venv",
            "a": 11,
            "b": 42,
            "c": 99,
            "order": 912,
        },
        {
            "root": "C:\\Users\\bo\\proj",
            "venv": "C:\\Python311",
            "a": 3,
            "b": 4,
            "c": 5,
            "order": 1,
        },
    ],
)
def test_same_python_error_elsewhere_has_the_same_key(values: dict[str, object]) -> None:
    reference = extract_errors(PY_TRACE.format(root="/work", venv="/venv", a=1, b=2, c=3, order=1))[
        0
    ]
    text = PY_TRACE.format(**values)
    if "\\" in str(values["root"]):
        text = text.replace("/", "\\")
    (error,) = extract_errors(text)
    assert error.key == reference.key
    assert error.frames == ("orders.models.load", "orders.views.checkout")


JAVA_TRACE = """java.lang.IllegalStateException: order {order} is closed
\tat com.acme.shop.Cart.lambda$checkout${n}(Cart.java:{a})
\tat com.acme.shop.Cart$1.run(Cart.java:{b})
\tat java.base/java.util.concurrent.ThreadPoolExecutor.runWorker(ThreadPoolExecutor.java:1136)
"""


def test_same_java_error_with_other_lines_lambdas_and_ids_has_the_same_key() -> None:
    one = extract_errors(JAVA_TRACE.format(order=17, n=0, a=40, b=12))
    two = extract_errors(JAVA_TRACE.format(order=90210, n=3, a=44, b=13))
    assert one[0].key == two[0].key
    assert one[0].frames == (
        "com.acme.shop.Cart.lambda$checkout$<NUM>",
        "com.acme.shop.Cart$<NUM>.run",
    )


def test_same_go_panic_on_another_host_has_the_same_key(errors_dir: Path) -> None:
    text = (errors_dir / "go_panic.txt").read_text()
    moved = (
        text.replace("/home/ci/src", "/Users/eve/go/src")
        .replace("goroutine 42", "goroutine 7")
        .replace("0xc0001a2000", "0xc000456000")
        .replace("+0x2a", "+0x2b")
        .replace(":88", ":91")
    )
    assert [e.key for e in extract_errors(text)] == [e.key for e in extract_errors(moved)]


def test_same_segfault_at_other_addresses_has_the_same_key(errors_dir: Path) -> None:
    text = (errors_dir / "native_gdb.txt").read_text()
    moved = re.sub(r"0x[0-9a-f]+", lambda m: hex(int(m.group(), 16) + 4096), text)
    assert [e.key for e in extract_errors(text)] == [e.key for e in extract_errors(moved)]


def test_different_errors_get_different_keys() -> None:
    base = PY_TRACE.format(root="/w", venv="/v", a=1, b=2, c=3, order=1)
    other_kind = base.replace("KeyError: 'order-1'", "ValueError: 'order-1'")
    other_place = base.replace("in load", "in load_all")
    other_message = base.replace("KeyError: 'order-1'", "KeyError: 'customer_email'")
    same_but_id = base.replace("KeyError: 'order-1'", "KeyError: 'customer-2'")  # ids are masked
    keys = {extract_errors(t)[0].key for t in (base, other_kind, other_place, other_message)}
    assert len(keys) == 4
    assert extract_errors(same_but_id)[0].key == extract_errors(base)[0].key
    http = {
        e.key for e in extract_errors("HTTP/1.1 404 Not Found\nHTTP/1.1 500 Internal Server Error")
    }
    assert len(http) == 2


def test_abstracted_text_gives_the_same_keys(errors_dir: Path) -> None:
    """The ingest pipeline extracts errors after abstraction (<HOME>, <ADDR>, <SHA> …)."""
    from metisgraph.ingest.sanitize.abstraction import sanitize

    for name in ("python_cause.txt", "go_panic.txt", "rust_backtrace.txt", "native_gdb.txt"):
        raw = (errors_dir / name).read_text()
        assert [e.key for e in extract_errors(sanitize(raw).text)] == [
            e.key for e in extract_errors(raw)
        ], name


def test_extraction_does_not_depend_on_what_was_read_before(errors_dir: Path) -> None:
    texts = [p.read_text() for p in sorted(errors_dir.glob("*.txt"))]
    first = [extract_errors(t) for t in texts]
    order = list(range(len(texts)))
    random.Random(11).shuffle(order)
    again = {i: extract_errors(texts[i]) for i in order}
    assert [again[i] for i in range(len(texts))] == first


# --- cost on hostile input ---------------------------------------------------------------
# Throughput is measured by `make bench` (bench/extract_bench.py). Here only the shape of the
# cost: eight times the input may cost about eight times the CPU, never the 64 times of a
# scan that backtracks over what it read. CPU time of this thread (the suite's servers and
# drivers run threads of their own in this process), the best of a few runs, so other work
# does not count.


def _cpu_seconds(text: str, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.thread_time()
        extract_errors(text)
        line_signature(text[: len(text) // 10])
        best = min(best, time.thread_time() - start)
    return best


@pytest.mark.slow
@pytest.mark.parametrize(
    "text",
    [
        "a" * 1_000_000,
        "a." * 500_000,
        '  File "x.py", line 1\n' * 40_000,
        "Exception: x\n" + "    at f (x.js:1:1)\n" * 40_000,
        "ERROR boom\n" * 40_000,
        "#0 0x1 in f () at x.c:1\n" * 40_000,
    ],
    ids=["long-line", "dots", "file-lines", "at-lines", "error-lines", "gdb-lines"],
)
def test_hostile_input_costs_linear_time(text: str) -> None:
    small = _cpu_seconds(text[: len(text) // 8], runs=3)
    large = _cpu_seconds(text, runs=2)
    # Below 10 ms the clock's grain and the interpreter's warm-up dominate; a quadratic
    # scan of a megabyte takes far longer than 8 x 10 ms x 24.
    ratio = large / max(small, 0.01)
    assert ratio < 24, f"x8 input cost x{ratio:.1f} CPU ({small:.3f} s -> {large:.3f} s)"


def test_build_tool_advice_at_the_error_level_is_not_an_error() -> None:
    # What Maven and npm print after every failure would link every failed build to every other.
    maven = """[INFO] BUILD FAILURE
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.2.5:test \
(default-test) on project core: There are test failures. -> [Help 1]
[ERROR]
[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.
[ERROR] Re-run Maven using the -X switch to enable full debug logging.
[ERROR]
[ERROR] For more information about the errors and possible solutions, please read the \
following articles:
[ERROR] [Help 1] http://cwiki.apache.org/confluence/display/MAVEN/MojoFailureException
[ERROR]
[ERROR] After correcting the problems, you can resume the build with the command
[ERROR]   mvn <args> -rf :core
"""
    errors = extract_errors(maven)
    assert len(errors) == 1 and "There are test failures" in errors[0].template
    npm = """npm ERR! code ELIFECYCLE
npm ERR! Failed at the app@1.0.0 build script.
npm ERR! This is probably not a problem with npm. There is likely additional logging output above.
npm ERR! A complete log of this run can be found in:
npm ERR!     /root/.npm/_logs/2026-11-30T10_00_00_000Z-debug.log
"""
    templates = [e.template for e in extract_errors(npm)]
    assert not any("probably not a problem" in t or "complete log" in t for t in templates)
    assert templates and "ELIFECYCLE" in templates[0]
