"""The words the synthetic corpus is made of: domains, their problems, tools and code.

Each domain has a runtime, packages, tools and a set of problems. A problem has a symptom
(two phrasings: the one an agent writes down, the one a person later asks with), an error
family with instance details in its messages (numbers, paths, hosts, ids: what abstraction
must lift), root causes, a diagnosis tool and a fix. Components and code details are
combined from word lists, so tasks differ in meaning and in identifiers.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["COMPONENT_NOUNS", "COMPONENT_ROLES", "DETAIL_NOUNS", "DETAIL_VERBS", "DOMAINS"]


@dataclass(frozen=True)
class Problem:
    name: str
    written: tuple[str, ...]  # how the agent describes the symptom
    asked: tuple[str, ...]  # how someone asks about it later (other words)
    errors: tuple[str, ...]  # message templates: {detail} {n} {m} {host} {path} {pid} {uid}
    causes: tuple[str, ...]
    diagnosis: tuple[str, ...]  # commands, {component} {detail} {pid} {path}
    findings: tuple[str, ...]
    fixes: tuple[str, ...]
    patch: str  # a unified diff template, {detail} {file} {component}
    language: str


@dataclass(frozen=True)
class Domain:
    name: str
    os: tuple[str, ...]
    runtime: str
    versions: tuple[str, ...]
    packages: tuple[tuple[str, tuple[str, ...]], ...]
    tools: tuple[str, ...]
    extension: str
    problems: tuple[Problem, ...]


_PY_PATCH = """--- a/{file}
+++ b/{file}
@@ -{n},7 +{n},9 @@ def {detail}(self, batch):
-    rows = self.session.query(Row).filter_by(batch=batch).all()
-    return [self._convert(r) for r in rows]
+    # {cause}
+    query = self.session.query(Row).filter_by(batch=batch)
+    for chunk in query.yield_per({m}):
+        yield self._convert(chunk)
+    self.session.expunge_all()
"""

_JAVA_PATCH = """--- a/src/main/java/com/acme/{component_class}/{detail_class}.java
+++ b/src/main/java/com/acme/{component_class}/{detail_class}.java
@@ -{n},6 +{n},8 @@ public class {detail_class} {{
-        List<Record> buffer = new ArrayList<>();
-        buffer.addAll(source.fetchAll());
+        // {cause}
+        try (Stream<Record> stream = source.stream({m})) {{
+            stream.forEach(sink::write);
+        }}
"""

_GO_PATCH = """--- a/internal/{component_snake}/{detail}.go
+++ b/internal/{component_snake}/{detail}.go
@@ -{n},6 +{n},9 @@ func {detail_class}(ctx context.Context, in <-chan Item) error {{
-	for item := range in {{
-		go process(item)
+	// {cause}
+	sem := make(chan struct{{}}, {m})
+	for item := range in {{
+		sem <- struct{{}}{{}}
+		go func(it Item) {{ defer func() {{ <-sem }}(); process(ctx, it) }}(item)
"""

_SQL_PATCH = """-- {cause}
CREATE INDEX CONCURRENTLY IF NOT EXISTS idx_{detail}_created
    ON {detail} (tenant_id, created_at);
ALTER TABLE {detail} SET (autovacuum_vacuum_scale_factor = 0.0{m});
ANALYZE {detail};
"""

_C_PATCH = """--- a/src/{detail}.c
+++ b/src/{detail}.c
@@ -{n},6 +{n},7 @@ int {detail}(const char *in, size_t len) {{
     char *buf = malloc(len + 1);
     if (decode(in, buf, len) < 0) {{
+        free(buf);  /* {cause} */
         return -1;
     }}
"""

_K8S_PATCH = """--- a/deploy/{component}/deployment.yaml
+++ b/deploy/{component}/deployment.yaml
@@ -{n},6 +{n},9 @@ spec:
         resources:
           limits:
-            memory: 512Mi
+            memory: {m}Mi
+          requests:
+            memory: {m}Mi
+        # {cause}
"""

_RUST_PATCH = """--- a/src/{detail}.rs
+++ b/src/{detail}.rs
@@ -{n},5 +{n},7 @@ pub fn {detail}(input: &[u8]) -> Result<Frame, Error> {{
-    let header = input[..{m}].try_into().unwrap();
+    // {cause}
+    let header = input.get(..{m}).ok_or(Error::Truncated)?;
+    let header: [u8; {m}] = header.try_into().map_err(|_| Error::Truncated)?;
"""

PYTHON = Domain(
    name="python-web",
    os=("ubuntu 22.04", "debian 12", "alpine 3.19"),
    runtime="python",
    versions=("3.10.13", "3.11.9", "3.12.4"),
    packages=(
        ("django", ("4.2.11", "5.0.6")),
        ("sqlalchemy", ("1.4.52", "2.0.30")),
        ("celery", ("5.3.6", "5.4.0")),
        ("requests", ("2.31.0", "2.32.3")),
        ("pandas", ("2.1.4", "2.2.2")),
        ("redis", ("4.6.0", "5.0.4")),
    ),
    tools=("pytest", "py-spy", "pip", "tracemalloc", "gunicorn"),
    extension="py",
    problems=(
        Problem(
            "memory-growth",
            (
                "resident memory of {component} grows steadily until the container is OOM-killed",
                "{component} leaks memory while processing large batches",
            ),
            (
                "why does {component} use more and more RAM the longer it runs",
                "{component} keeps getting killed for running out of memory",
            ),
            (
                "MemoryError: unable to allocate {n} MiB for an array with shape ({m}, 384)",
                "Worker (pid:{pid}) was sent SIGKILL! Perhaps out of memory?",
            ),
            (
                "query results were materialised as a full list instead of streamed",
                "a module-level cache kept every parsed payload alive",
            ),
            ("py-spy dump --pid {pid}", "python -X tracemalloc=25 -m {component_snake}.main"),
            ("tracemalloc shows {n} MB allocated in {detail} and never released",),
            ("stream rows with yield_per in {detail} and clear the session between chunks",),
            _PY_PATCH,
            "diff",
        ),
        Problem(
            "db-pool-exhausted",
            (
                "requests to {component} hang and then fail because the database pool is empty",
                "{component} runs out of database connections under load",
            ),
            (
                "{component} times out waiting for a connection from the pool",
                "all db connections are used up in {component} during peak traffic",
            ),
            (
                "sqlalchemy.exc.TimeoutError: QueuePool limit of size {m} overflow 10 reached, "
                "connection timed out, timeout 30.00",
                "psycopg2.OperationalError: FATAL: remaining connection slots are reserved "
                "for non-replication superuser connections",
            ),
            (
                "sessions opened in {detail} were never closed on the error path",
                "a background thread held a connection for the whole job",
            ),
            ("psql -h {host} -c 'select state, count(*) from pg_stat_activity group by 1'",),
            ("pg_stat_activity shows {n} idle in transaction connections from {component}",),
            ("close the session in a finally block in {detail} and cap pool_size at {m}",),
            _PY_PATCH,
            "diff",
        ),
        Problem(
            "import-error",
            (
                "{component} fails at start-up with an import error after the dependency upgrade",
                "deploy of {component} crashes on import",
            ),
            (
                "{component} does not start any more after upgrading packages",
                "module not found when {component} boots",
            ),
            (
                "ModuleNotFoundError: No module named '{detail}'",
                "ImportError: cannot import name '{detail_class}' from '{component_snake}.core' "
                "({path})",
            ),
            (
                "the package was renamed in the new major version",
                "a circular import between {detail} and the settings module",
            ),
            ("pip install -r requirements.txt && python -c 'import {component_snake}'",),
            ("pip freeze shows the old wheel of {detail} still installed in the image",),
            ("pin the dependency and move the import of {detail} inside the function",),
            _PY_PATCH,
            "diff",
        ),
        Problem(
            "slow-endpoint",
            (
                "the /api/{detail} endpoint of {component} takes several seconds per request",
                "p95 latency of {component} jumped after the release",
            ),
            (
                "{component} answers very slowly on {detail}",
                "requests to {component} got much slower",
            ),
            (
                "WARNING slow request: GET /api/{detail} took {n} ms (threshold 500 ms)",
                "gunicorn[{pid}]: [CRITICAL] WORKER TIMEOUT (pid:{pid})",
            ),
            (
                "an N+1 query pattern in {detail} issued one query per row",
                "a missing index on the filter column forced a sequential scan",
            ),
            ("py-spy record -o profile.svg --pid {pid} --duration 30",),
            ("the profile shows {pct}% of the time in {detail} issuing queries in a loop",),
            ("prefetch the related rows in {detail} with selectinload",),
            _PY_PATCH,
            "diff",
        ),
        Problem(
            "flaky-test",
            (
                "test_{detail} in {component} fails intermittently on CI",
                "a flaky test blocks merges for {component}",
            ),
            (
                "{component} tests pass locally but fail randomly in the pipeline",
                "unstable unit test in {component}",
            ),
            (
                "FAILED tests/test_{detail}.py::test_{detail} - AssertionError: assert {n} == {m}",
                "E   TimeoutError: task {uid} did not finish within 5 seconds",
            ),
            (
                "the test depended on dictionary ordering from a previous test",
                "a shared temporary directory between parallel workers",
            ),
            ("pytest -p no:randomly -x tests/test_{detail}.py -n 4 --count 50",),
            ("failure reproduces {n} times out of 50 runs only with xdist",),
            ("isolate the fixture per worker and freeze time in test_{detail}",),
            _PY_PATCH,
            "diff",
        ),
    ),
)

JAVA = Domain(
    name="java-backend",
    os=("ubuntu 22.04", "rhel 9.3", "debian 12"),
    runtime="java",
    versions=("17.0.11", "21.0.3"),
    packages=(
        ("spring-boot", ("3.2.5", "3.3.1")),
        ("hibernate-core", ("6.4.4", "6.5.2")),
        ("jackson-databind", ("2.16.2", "2.17.1")),
        ("kafka-clients", ("3.6.1", "3.7.0")),
        ("netty", ("4.1.108", "4.1.111")),
    ),
    tools=("jstack", "jmap", "mvn", "gradle", "jcmd"),
    extension="java",
    problems=(
        Problem(
            "heap-exhausted",
            (
                "{component} dies with OutOfMemoryError during the nightly {detail} job",
                "heap of {component} fills up while exporting records",
            ),
            (
                "java service {component} runs out of heap at night",
                "{component} crashes with out of memory in the batch job",
            ),
            (
                "java.lang.OutOfMemoryError: Java heap space\n\tat com.acme.{component_class}."
                "{detail_class}.flush({detail_class}.java:{n})",
                "java.lang.OutOfMemoryError: GC overhead limit exceeded",
            ),
            (
                "the exporter buffered every record in an ArrayList before writing",
                "a static map in {detail_class} was used as an unbounded cache",
            ),
            (
                "jmap -dump:live,format=b,file=/tmp/heap.hprof {pid}",
                "jcmd {pid} GC.class_histogram",
            ),
            ("the heap dump shows {n} MB retained by {detail_class}.buffer",),
            ("stream records from the source in {detail_class} instead of collecting them",),
            _JAVA_PATCH,
            "diff",
        ),
        Problem(
            "deadlock",
            (
                "{component} stops processing messages; threads are blocked",
                "consumers of {component} hang forever after a rebalance",
            ),
            (
                "{component} freezes and does nothing while the queue grows",
                "threads stuck in {component}, nothing is consumed",
            ),
            (
                'Found one Java-level deadlock:\n"pool-{m}-thread-{n}": waiting to lock monitor '
                "0x00007f{uid} (object 0x000000{uid}, a com.acme.{detail_class})",
                "org.apache.kafka.clients.consumer.CommitFailedException: Commit cannot be "
                "completed since the group has already rebalanced",
            ),
            (
                "two locks in {detail_class} were taken in opposite orders",
                "message processing exceeded max.poll.interval.ms",
            ),
            ("jstack -l {pid} > threads.txt",),
            ("jstack shows {n} threads BLOCKED on {detail_class}.lock",),
            ("take the locks of {detail_class} in one global order",),
            _JAVA_PATCH,
            "diff",
        ),
        Problem(
            "serialization",
            (
                "{component} rejects payloads after the schema change of {detail}",
                "JSON mapping of {detail} fails in {component}",
            ),
            (
                "{component} cannot parse the new {detail} messages",
                "deserialization errors in {component} since the producer update",
            ),
            (
                "com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException: Unrecognized "
                'field "{detail}" (class com.acme.{detail_class}), not marked as ignorable',
                "com.fasterxml.jackson.databind.exc.InvalidDefinitionException: Cannot construct "
                "instance of `com.acme.{detail_class}`",
            ),
            (
                "the producer added a field the consumer did not know",
                "a record class without a default constructor",
            ),
            ("mvn -q -pl {component} test -Dtest={detail_class}Test",),
            ("the failing payload has {n} fields; {detail_class} maps {m}",),
            ("ignore unknown properties on {detail_class} and add the field",),
            _JAVA_PATCH,
            "diff",
        ),
    ),
)

POSTGRES = Domain(
    name="postgres",
    os=("ubuntu 22.04", "debian 12"),
    runtime="postgresql",
    versions=("14.12", "15.7", "16.3"),
    packages=(("pgbouncer", ("1.21.0", "1.22.1")), ("pg_partman", ("4.7.4", "5.1.0"))),
    tools=("psql", "pg_dump", "pgbench", "vacuumdb"),
    extension="sql",
    problems=(
        Problem(
            "bloat",
            (
                "table {detail} of {component} keeps growing although rows are deleted",
                "disk usage of the {component} database doubled in a week",
            ),
            (
                "why is the {detail} table so big in {component}",
                "{component} database disk fills up",
            ),
            (
                'ERROR: could not extend file "base/{n}/{m}": No space left on device',
                "WARNING: oldest xmin is far in the past",
            ),
            (
                "autovacuum could not keep up with the delete rate on {detail}",
                "a forgotten replication slot held back the xmin horizon",
            ),
            ('psql -c "select relname, n_dead_tup from pg_stat_user_tables order by 2 desc"',),
            ("{detail} has {n} dead tuples and the last autovacuum ran {m} days ago",),
            ("lower the autovacuum scale factor of {detail} and drop the stale slot",),
            _SQL_PATCH,
            "sql",
        ),
        Problem(
            "slow-query",
            (
                "the report query on {detail} in {component} takes minutes",
                "sequential scans on {detail} make {component} slow",
            ),
            (
                "{component} report is extremely slow to load",
                "query on {detail} never finishes in {component}",
            ),
            (
                "LOG: duration: {n}.{m} ms statement: SELECT * FROM {detail} WHERE tenant_id = $1",
                "ERROR: canceling statement due to statement timeout",
            ),
            (
                "no index matched the tenant_id, created_at filter on {detail}",
                "stale statistics after a bulk load into {detail}",
            ),
            ("psql -c 'EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM {detail} WHERE tenant_id = 42'",),
            ("EXPLAIN shows a Seq Scan on {detail} reading {n} pages",),
            ("create a composite index on {detail} (tenant_id, created_at) and analyze",),
            _SQL_PATCH,
            "sql",
        ),
        Problem(
            "lock-timeout",
            (
                "migrations of {component} fail waiting for a lock on {detail}",
                "deploy of {component} blocked by a lock on {detail}",
            ),
            (
                "{component} migration hangs on {detail}",
                "schema change in {component} cannot get its lock",
            ),
            (
                "ERROR: canceling statement due to lock timeout\nCONTEXT: while updating tuple "
                '({n},{m}) in relation "{detail}"',
                "ERROR: deadlock detected\nDETAIL: Process {pid} waits for ShareLock on "
                "transaction {n}",
            ),
            (
                "a long transaction from a batch job held the lock on {detail}",
                "ALTER TABLE took an ACCESS EXCLUSIVE lock on a busy table",
            ),
            (
                "psql -c 'select pid, wait_event, query from pg_stat_activity "
                "where wait_event_type = $$Lock$$'",
            ),
            ("pid {pid} has held a lock on {detail} for {n} seconds",),
            ("set lock_timeout for the migration and build the index concurrently",),
            _SQL_PATCH,
            "sql",
        ),
    ),
)

ORACLE = Domain(
    name="oracle",
    os=("oracle linux 8.9", "rhel 8.9"),
    runtime="oracle",
    versions=("19.21", "21.3"),
    packages=(("cx_oracle", ("8.3.0",)), ("ojdbc8", ("19.21.0.0", "21.9.0.0"))),
    tools=("sqlplus", "rman", "expdp", "tkprof"),
    extension="sql",
    problems=(
        Problem(
            "shared-pool",
            (
                "{component} fails with ORA-04031 under load",
                "the shared pool of the {component} database runs out",
            ),
            (
                "oracle says it cannot allocate shared memory for {component}",
                "{component} gets shared pool errors at peak time",
            ),
            (
                'ORA-04031: unable to allocate {n} bytes of shared memory ("shared pool",'
                '"SELECT * FROM {detail}...","sga heap(1,0)","kglsim object batch")',
            ),
            (
                "literal SQL from {component} filled the library cache",
                "the shared pool was sized for a smaller workload",
            ),
            ("sqlplus / as sysdba @sga_usage.sql",),
            ("v$sgastat shows {n} MB free in the shared pool",),
            ("use bind variables in {detail} queries and raise shared_pool_size",),
            _SQL_PATCH,
            "sql",
        ),
        Problem(
            "tablespace-full",
            (
                "inserts into {detail} of {component} fail: tablespace is full",
                "{component} load job stops with a tablespace error",
            ),
            (
                "{component} cannot insert rows any more",
                "oracle tablespace out of space for {component}",
            ),
            (
                "ORA-01653: unable to extend table APP.{detail_upper} by {n} in tablespace USERS",
                "ORA-01652: unable to extend temp segment by {m} in tablespace TEMP",
            ),
            ("the datafile was not autoextensible", "a runaway sort used the whole TEMP space"),
            ("sqlplus / as sysdba @tablespace_usage.sql",),
            ("tablespace USERS is {pct}% full with autoextend off",),
            ("add a datafile with autoextend on and purge old partitions of {detail}",),
            _SQL_PATCH,
            "sql",
        ),
    ),
)

GO = Domain(
    name="go-services",
    os=("ubuntu 22.04", "alpine 3.19", "distroless"),
    runtime="go",
    versions=("1.21.9", "1.22.4"),
    packages=(
        ("google.golang.org/grpc", ("1.62.1", "1.64.0")),
        ("github.com/jackc/pgx/v5", ("5.5.5", "5.6.0")),
        ("go.uber.org/zap", ("1.26.0", "1.27.0")),
    ),
    tools=("go", "pprof", "dlv", "golangci-lint"),
    extension="go",
    problems=(
        Problem(
            "goroutine-leak",
            (
                "goroutines of {component} pile up until it becomes unresponsive",
                "{component} spawns unbounded goroutines in {detail}",
            ),
            (
                "{component} gets slower and slower and uses lots of memory",
                "too many goroutines in {component}",
            ),
            (
                "runtime: goroutine stack exceeds 1000000000-byte limit\nfatal error: stack "
                "overflow",
                "fatal error: runtime: out of memory\ngoroutine {n} [running]:\n"
                "main.{detail_class}()",
            ),
            (
                "one goroutine per item with no bound on concurrency in {detail}",
                "a channel nobody read kept senders blocked forever",
            ),
            ("go tool pprof http://{host}:6060/debug/pprof/goroutine",),
            ("pprof shows {n} goroutines blocked in {detail}",),
            ("bound the workers of {detail} with a semaphore of {m}",),
            _GO_PATCH,
            "diff",
        ),
        Problem(
            "nil-pointer",
            (
                "{component} panics with a nil pointer dereference in {detail}",
                "crash loop of {component} after config change",
            ),
            ("{component} keeps crashing with a panic", "nil pointer panic in {component}"),
            (
                "panic: runtime error: invalid memory address or nil pointer dereference\n[signal "
                "SIGSEGV: segmentation violation code=0x1 addr=0x{m} pc=0x{uid}]",
            ),
            ("an optional config section was nil", "an error was ignored and the value used"),
            ("dlv debug ./cmd/{component} -- --config {path}",),
            ("the panic comes from {detail} reading cfg.Retry without a nil check",),
            ("check the error and default the missing section in {detail}",),
            _GO_PATCH,
            "diff",
        ),
        Problem(
            "grpc-deadline",
            (
                "calls from {component} to {detail} fail with deadline exceeded",
                "{component} gRPC requests time out",
            ),
            ("{component} requests to the backend time out", "rpc timeouts in {component}"),
            (
                "rpc error: code = DeadlineExceeded desc = context deadline exceeded",
                'rpc error: code = Unavailable desc = connection error: desc = "transport: '
                'Error while dialing dial tcp {host}:{n}: connect: connection refused"',
            ),
            (
                "the client reused an already expired context",
                "keepalive was disabled and the load balancer dropped idle connections",
            ),
            ("grpcurl -plaintext {host}:{n} list",),
            ("{pct}% of calls to {detail} exceed the {m} ms deadline",),
            ("derive a fresh context per call in {detail} and enable keepalive",),
            _GO_PATCH,
            "diff",
        ),
    ),
)

NATIVE = Domain(
    name="c-native",
    os=("ubuntu 22.04", "centos 7", "debian 12"),
    runtime="gcc",
    versions=("11.4.0", "12.2.0", "13.2.0"),
    packages=(("openssl", ("3.0.2", "3.0.13")), ("zlib", ("1.2.13", "1.3.1"))),
    tools=("gdb", "valgrind", "make", "cmake", "perf"),
    extension="c",
    problems=(
        Problem(
            "segfault",
            (
                "{component} crashes with SIGSEGV when parsing malformed input in {detail}",
                "segmentation fault in {component} on truncated packets",
            ),
            (
                "{component} dies with a segfault on some inputs",
                "core dumps from {component} in production",
            ),
            (
                "Program received signal SIGSEGV, Segmentation fault.\n0x0000{uid} in {detail} "
                "(in=0x0, len={n}) at src/{detail}.c:{m}",
                "{component}[{pid}]: segfault at 0 ip 0000{uid} sp 00007ffd{uid} error 4",
            ),
            ("a length field was trusted without a bounds check", "a NULL return was not checked"),
            ("gdb -batch -ex run -ex bt --args ./{component} --input {path}",),
            ("the backtrace ends in {detail} at line {m} reading past the buffer",),
            ("check the length before reading the header in {detail}",),
            _C_PATCH,
            "diff",
        ),
        Problem(
            "leak",
            (
                "{component} memory grows by a few MB per hour; valgrind reports lost blocks",
                "{component} leaks on the error path of {detail}",
            ),
            (
                "the native daemon {component} slowly eats memory",
                "{component} RSS grows over days",
            ),
            (
                "=={pid}== {n} bytes in {m} blocks are definitely lost in loss record 12 of 12\n"
                "=={pid}==    at 0x4C2FB0F: malloc (vg_replace_malloc.c:299)\n=={pid}==    by "
                "0x10A3F2: {detail} (src/{detail}.c:{m})",
            ),
            ("the buffer was not freed on the error branch", "a reference count never dropped"),
            ("valgrind --leak-check=full --show-leak-kinds=definite ./{component}",),
            ("valgrind finds {n} definitely lost bytes allocated in {detail}",),
            ("free the buffer on the error path of {detail}",),
            _C_PATCH,
            "diff",
        ),
    ),
)

KUBERNETES = Domain(
    name="kubernetes",
    os=("ubuntu 22.04", "bottlerocket 1.19"),
    runtime="kubernetes",
    versions=("1.28.9", "1.29.4", "1.30.1"),
    packages=(("helm", ("3.14.4", "3.15.1")), ("istio", ("1.21.2", "1.22.0"))),
    tools=("kubectl", "helm", "stern", "k9s"),
    extension="yaml",
    problems=(
        Problem(
            "oomkilled",
            (
                "pods of {component} restart with OOMKilled after the traffic increase",
                "{component} containers are killed by the kernel for memory",
            ),
            (
                "{component} pods keep restarting",
                "kubernetes kills {component} again and again",
            ),
            (
                "Last State: Terminated\n  Reason: OOMKilled\n  Exit Code: 137\n  Started: {n}",
                "Back-off restarting failed container {component} in pod {component}-{uid}",
            ),
            ("the memory limit was below the working set", "the JVM ignored the cgroup limit"),
            ("kubectl describe pod -n prod {component}-{uid}", "kubectl top pod -n prod"),
            ("the working set reaches {n} Mi against a 512Mi limit",),
            ("raise the limit to {m}Mi and set the request equal to it",),
            _K8S_PATCH,
            "diff",
        ),
        Problem(
            "crashloop",
            (
                "{component} is in CrashLoopBackOff after the config map change",
                "new rollout of {component} never becomes ready",
            ),
            (
                "{component} deployment does not come up",
                "pods of {component} fail their readiness probe",
            ),
            (
                'Readiness probe failed: Get "http://{host}:{n}/healthz": dial tcp: connect: '
                "connection refused",
                'Error from server (BadRequest): container "{component}" in pod is waiting to '
                "start: CreateContainerConfigError",
            ),
            (
                "a key missing from the config map crashed the start-up",
                "the probe hit the port before the app listened",
            ),
            ("kubectl logs -n prod deploy/{component} --previous",),
            ("the previous container logs show {detail} missing from the config map",),
            ("add the key to the config map and give the probe an initial delay",),
            _K8S_PATCH,
            "diff",
        ),
    ),
)

RUST = Domain(
    name="rust",
    os=("ubuntu 22.04", "debian 12", "macos 14.5"),
    runtime="rust",
    versions=("1.77.2", "1.78.0", "1.79.0"),
    packages=(("tokio", ("1.37.0", "1.38.0")), ("serde", ("1.0.200", "1.0.203"))),
    tools=("cargo", "clippy", "rust-gdb", "flamegraph"),
    extension="rs",
    problems=(
        Problem(
            "panic-index",
            (
                "{component} panics on short frames in {detail}",
                "decoder of {component} panics with index out of range",
            ),
            (
                "{component} crashes on some network messages",
                "rust panic in {component} when input is short",
            ),
            (
                "thread 'tokio-runtime-worker' panicked at src/{detail}.rs:{m}:{n}:\nrange end "
                "index {m} out of range for slice of length {n}",
            ),
            ("slicing without checking the length", "unwrap on a conversion of user input"),
            ("RUST_BACKTRACE=1 cargo test -p {component} {detail}",),
            ("the frame is {n} bytes, shorter than the {m} byte header",),
            ("return an error for truncated input in {detail} instead of slicing",),
            _RUST_PATCH,
            "diff",
        ),
        Problem(
            "borrow-error",
            (
                "{component} does not compile after refactoring {detail}",
                "borrow checker rejects the new {detail} in {component}",
            ),
            (
                "{component} build fails with a borrow error",
                "cannot borrow as mutable in {component}",
            ),
            (
                "error[E0502]: cannot borrow `self.{detail}` as mutable because it is also "
                "borrowed as immutable\n  --> src/{detail}.rs:{m}:{n}",
                "error[E0382]: borrow of moved value: `{detail}`",
            ),
            ("an iterator over the map was alive during the insert", "the value was moved twice"),
            ("cargo build -p {component} 2>&1 | head -40",),
            ("the immutable borrow from the iterator lives until line {m}",),
            ("collect the keys of {detail} first, then mutate",),
            _RUST_PATCH,
            "diff",
        ),
    ),
)

DOMAINS: tuple[Domain, ...] = (PYTHON, JAVA, POSTGRES, ORACLE, GO, NATIVE, KUBERNETES, RUST)

COMPONENT_NOUNS = (
    "ledger", "billing", "invoice", "catalog", "search", "auth", "session", "payment",
    "shipping", "inventory", "report", "notify", "media", "thumbnail", "geo", "pricing",
    "quota", "audit", "export", "import", "checkout", "profile", "feed", "recommend",
    "ingest", "telemetry", "metrics", "alerting", "scheduler", "booking", "loyalty",
    "coupon", "tax", "refund", "fraud", "kyc", "document", "archive", "backup", "gateway",
)  # fmt: skip
COMPONENT_ROLES = (
    "service", "worker", "api", "gateway", "indexer", "sync", "daemon", "consumer",
    "exporter", "proxy",
)  # fmt: skip
DETAIL_VERBS = (
    "parse", "flush", "load", "merge", "encode", "decode", "render", "resolve", "validate",
    "compact", "rotate", "dispatch", "collect", "reconcile", "enrich", "split", "batch",
    "stream", "retry", "snapshot",
)  # fmt: skip
DETAIL_NOUNS = (
    "orders", "events", "frames", "rows", "headers", "invoices", "tokens", "sessions",
    "records", "chunks", "payloads", "messages", "accounts", "users", "receipts", "items",
    "segments", "entries", "metrics", "images", "packets", "ledgers", "claims", "quotes",
)  # fmt: skip
