"""Stack frames: normalised names, and whether a frame is the project's own code.

"Own code" is decided by general rules: the standard library and runtime of each
language, packages installed by a package manager (site-packages, the Go module
cache, the cargo registry, node_modules, system libraries), and a short list of
frameworks so common that they are never the project under study (test runners,
build tools, dependency-injection and web frameworks).
"""

from __future__ import annotations

import re

from metisgraph.ingest.errors.sightings import Frame

__all__ = [
    "claim_project_frames",
    "dotnet_frame",
    "go_frame",
    "jvm_frame",
    "jvm_library",
    "native_frame",
    "node_frame",
    "python_frame",
    "python_module",
    "rust_frame",
    "rust_location",
]

# --- Python -----------------------------------------------------------------

_PY_LIBRARY = re.compile(
    r"[\\/](?:site|dist)-packages[\\/]|[\\/]__pypackages__[\\/]"
    r"|[\\/]lib[\\/]python\d+(?:\.\d+)?[\\/]|[\\/]Lib[\\/]|^<frozen "
)
# Folders that hold a checkout rather than name a Python package.
_CONTAINER_DIRS = frozenset(
    {"", "src", "lib", "code", "work", "workspace", "repo", "project", "tmp", "temp"}
    | {"home", "root", "usr", "opt", "srv", "var", "mnt", "users", "builds", "scripts"}
)
_PY_IDENT = re.compile(r"[a-z_][a-z0-9_]*")


def python_module(path: str) -> str:
    """A stable module name for a file: ``pkg/mod.py`` → ``pkg.mod``, whatever the checkout root."""
    if re.fullmatch(r"<[^<>]*>", path):
        return re.sub(r"[-\d]+", "", path)  # <ipython-input-3-1a2b> and <stdin>
    parts = [p for p in re.split(r"[\\/]", path) if p]
    if not parts:
        return path
    stem = re.sub(r"\.pyw?$", "", parts[-1])
    folders = parts[:-1]
    if stem == "__init__" and folders:
        stem, folders = folders[-1], folders[:-1]
    if not folders:
        return stem
    parent = folders[-1]
    home = len(folders) >= 2 and folders[-2].lower() in {"home", "users"}
    if home or parent.lower() in _CONTAINER_DIRS or not _PY_IDENT.fullmatch(parent):
        return stem
    return f"{parent}.{stem}"


def python_frame(path: str, func: str) -> Frame:
    """A Python frame from a traceback's ``File "path", line N, in func``."""
    module = python_module(path)
    own = not _PY_LIBRARY.search(path)
    return Frame(name=f"{module}.{func}", symbol=module, own=own)


# --- JVM (Java, Kotlin, Scala) ----------------------------------------------

# The runtime, test runners and build tools: never the project under study.
_JVM_RUNTIME = re.compile(
    r"^(?:java|javax|jakarta|sun|com\.sun|jdk|junit|org\.junit|org\.testng|org\.opentest4j"
    r"|kotlin|kotlinx|scala|groovy|org\.codehaus\.groovy|org\.gradle|org\.apache\.maven"
    r"|org\.apache\.tools\.ant|org\.eclipse\.jdt\.internal\.junit|com\.intellij\.rt"
    r"|android|androidx|dalvik|com\.android\.internal|libcore)\."
)
# Libraries so common that they are usually someone else's code — unless the trace's own
# tests live in them (a trace from Mockito's or Jackson's own test suite).
_JVM_WELL_KNOWN = re.compile(
    r"^(?:org\.springframework|org\.hibernate|io\.netty|org\.eclipse\.jetty|org\.apache\.tomcat"
    r"|org\.apache\.catalina|org\.apache\.coyote|org\.mockito|net\.bytebuddy|org\.aspectj"
    r"|reactor|io\.reactivex|com\.google\.common|com\.google\.inject|com\.fasterxml\.jackson"
    r"|org\.slf4j|ch\.qos\.logback|org\.apache\.logging\.log4j|okhttp3|retrofit2|io\.grpc"
    r"|com\.google\.protobuf|org\.apache\.http|okio|oracle\.jdbc|com\.mysql|org\.postgresql"
    r"|org\.mariadb|org\.h2|org\.hsqldb|org\.sqlite|com\.microsoft\.sqlserver|com\.zaxxer\.hikari)\."
)
# Generated classes (proxies, lambdas, accessors) are runtime machinery, never own code.
_JVM_GENERATED = re.compile(r"\$\$|\$Proxy|^jdk\.proxy|GeneratedMethodAccessor|CGLIB")
_JVM_TEST = re.compile(r"(?:Test|Tests|TestCase|IT|Spec)(?:\$[\w<>]+)*\.\w+$|\.test\w*$")


def jvm_library(qualified: str) -> bool:
    """True for runtime, test-framework and well-known library classes."""
    return bool(
        _JVM_RUNTIME.match(qualified)
        or _JVM_WELL_KNOWN.match(qualified)
        or _JVM_GENERATED.search(qualified)
    )


def _package_root(name: str) -> str:
    return ".".join(name.split(".")[:2])


def claim_project_frames(frames: list[Frame]) -> list[Frame]:
    """Frames of a well-known library are own code when the trace's tests live in it too."""
    roots = {_package_root(f.name) for f in frames if _JVM_TEST.search(f.name)}
    claimed = [
        Frame(f.name, f.symbol, own=True)
        if not f.own
        and _package_root(f.name) in roots
        and _JVM_WELL_KNOWN.match(f.name)
        and not _JVM_GENERATED.search(f.name)
        else f
        for f in frames
    ]
    return claimed


def jvm_frame(method: str) -> Frame:
    """A JVM frame from ``at pkg.Class.method(File.java:12)`` (``method`` is the dotted part)."""
    method = method.rsplit("/", 1)[-1]  # java.base/… module and app// loader prefixes
    # Anonymous classes and lambdas are numbered in source order; edits renumber them.
    name = re.sub(r"\$\d+", "$<NUM>", method)
    klass = name.rsplit(".", 1)[0] if "." in name else name
    return Frame(name=name, symbol=klass, own=not jvm_library(method))


# --- .NET -------------------------------------------------------------------

_DOTNET_LIBRARY = re.compile(r"^(?:System|Microsoft|Xunit|NUnit|Castle|Newtonsoft|Moq)\.")


def dotnet_frame(method: str) -> Frame:
    """A .NET frame from ``at Namespace.Class.Method(args) in file:line N``."""
    name = re.sub(r"`\d+|\[[^\]]*\]", "", method)  # generic arity and type arguments
    klass = name.rsplit(".", 1)[0] if "." in name else name
    return Frame(name=name, symbol=klass, own=not _DOTNET_LIBRARY.match(name))


# --- Go ---------------------------------------------------------------------

_GO_THIRD_PARTY_FILE = re.compile(r"/pkg/mod/|/vendor/|/usr/local/go/|/usr/lib/go")
_GO_WELL_KNOWN = re.compile(r"^(?:golang\.org/x/|google\.golang\.org/|gopkg\.in/)")


def go_frame(func: str, file: str | None) -> Frame:
    """A Go frame from a goroutine trace: ``pkg/path.(*T).Method(args)`` and its file."""
    func = re.sub(r"\[[^\]]*\]", "", func)  # generic type arguments
    slash = func.rfind("/")
    dot = func.find(".", slash + 1)
    package = func[:dot] if dot > 0 else func
    rest = func[dot + 1 :] if dot > 0 else ""
    short = package.rsplit("/", 1)[-1]
    rest = re.sub(r"\(\*?([\w]+)\)", r"\1", rest)
    first = package.split("/", 1)[0]
    # Module paths start with a domain (maybe abstracted to <HOST>); the standard library's don't.
    stdlib = "." not in first and not first.startswith("<") and package != "main"
    third_party = bool(
        (file and _GO_THIRD_PARTY_FILE.search(file)) or _GO_WELL_KNOWN.match(package)
    )
    return Frame(
        name=f"{short}.{rest}" if rest else short, symbol=package, own=not (stdlib or third_party)
    )


# --- Rust -------------------------------------------------------------------

_RUST_RUNTIME = re.compile(
    r"^(?:<?(?:std|core|alloc|backtrace|test|panic_unwind|panic_abort)::|rust_begin_unwind"
    r"|__rust|_start$|main$|__libc_start|__scrt_)"
)
_RUST_THIRD_PARTY_FILE = re.compile(
    r"/rustc/|[\\/]\.cargo[\\/](?:registry|git)[\\/]|[\\/]library[\\/](?:std|core|alloc)[\\/]"
)


def rust_frame(func: str, file: str | None) -> Frame:
    """A Rust frame from a backtrace line ``N: crate::module::func``."""
    name = re.sub(r"::h[0-9a-f]{16}$", "", func.strip())
    crate_path = name.lstrip("<").split(" as ", 1)[0]
    symbol = crate_path.rsplit("::", 1)[0] if "::" in crate_path else crate_path
    third_party = bool(file and _RUST_THIRD_PARTY_FILE.search(file))
    return Frame(name=name, symbol=symbol, own=not (_RUST_RUNTIME.match(name) or third_party))


def rust_location(path: str) -> Frame:
    """The file a Rust panic names when no backtrace was printed: ``src/parser.rs``."""
    path = path.replace("\\", "/")
    at = path.rfind("src/")
    short = path[at:] if at >= 0 else path.rsplit("/", 1)[-1]
    return Frame(name=short, symbol=short, own=not _RUST_THIRD_PARTY_FILE.search(path))


# --- Native (C, C++) ----------------------------------------------------------

_NATIVE_RUNTIME = re.compile(
    r"^(?:__libc|__GI_|_start$|__interceptor_|__asan|__sanitizer|__cxa_|__gnu_cxx::|std::"
    r"|abort$|raise$|_int_|__pthread|pthread_|start_thread$|clone3?$|__clone|_dl_|__restore_rt"
    r"|__assert_fail|__assert_fail_base|__GI_abort|__fortify_fail|__stack_chk_fail|__chk_fail"
    r"|malloc_printerr|_IO_|\?\?$)"
)
_NATIVE_SYSTEM_FILE = re.compile(
    r"^/(?:usr/)?lib(?:32|64)?/|/usr/include/|sysdeps/|libc\.so|libc-|libstdc\+\+|ld-linux"
    r"|libasan|libubsan|libtsan|libpthread|libgcc|ntdll\.dll|kernel32\.dll|KERNELBASE\.dll|ucrtbase"
)


def native_frame(func: str, where: str | None) -> Frame:
    """A native frame from gdb (``#1 0x… in f (…) at x.c:9``) or a sanitizer report."""
    name = re.sub(r"\(.*$", "", func).strip()
    symbol = name.rsplit("::", 1)[0] if "::" in name else name
    system = bool(where and _NATIVE_SYSTEM_FILE.search(where))
    return Frame(name=name, symbol=symbol, own=not (_NATIVE_RUNTIME.match(name) or system))


# --- Node.js ------------------------------------------------------------------

_NODE_LIBRARY = re.compile(r"^node:|^internal/|[\\/]node_modules[\\/]|^<anonymous>$|^native$")


def node_frame(func: str | None, location: str) -> Frame:
    """A Node.js frame from ``at fn (file:line:col)`` or ``at file:line:col``."""
    location = re.sub(r"^file://", "", location)
    file = re.sub(r":\d+(?::\d+)?$", "", location)
    stem = re.sub(r"\.[cm]?[jt]sx?$", "", re.split(r"[\\/]", file)[-1])
    func = (func or "").removeprefix("async ").removeprefix("new ").strip()
    if not func or func.endswith("<anonymous>"):
        func = f"{stem}.<anonymous>"
    symbol = func.rsplit(".", 1)[0] if "." in func else stem
    return Frame(name=func, symbol=symbol, own=not _NODE_LIBRARY.search(file))
