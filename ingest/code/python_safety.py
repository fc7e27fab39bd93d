"""Safety rules for Python read from the syntax tree, so aliases and keyword arguments count."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from metisgraph.ingest.code.python_analysis import ResolvedCall, resolved_calls

__all__ = ["Hit", "python_findings"]


@dataclass(frozen=True)
class Hit:
    """A rule that fired on a line; `severity` overrides the rule's, `target` is a path written."""

    rule: str
    line: int
    severity: str | None = None
    target: str | None = None


_SHELL_ALWAYS = {
    "subprocess.getoutput",
    "subprocess.getstatusoutput",
    "commands.getoutput",
    "commands.getstatusoutput",
    "asyncio.create_subprocess_shell",
}
_OS_SHELL = {"os.system", "os.popen", "os.popen2", "os.popen3", "os.popen4"}
_DESERIALISE = {
    "pickle.load",
    "pickle.loads",
    "cPickle.load",
    "cPickle.loads",
    "_pickle.load",
    "_pickle.loads",
    "dill.load",
    "dill.loads",
    "joblib.load",
    "shelve.open",
    "marshal.load",
    "marshal.loads",
    "jsonpickle.decode",
    "pandas.read_pickle",
    "yaml.unsafe_load",
    "yaml.unsafe_load_all",
}
_SAFE_YAML_LOADERS = {"SafeLoader", "CSafeLoader", "BaseLoader", "CBaseLoader"}
_NETWORK_PREFIXES = (
    "requests.",
    "httpx.",
    "urllib.request.",
    "urllib3.",
    "http.client.",
    "socket.",
    "aiohttp.",
    "ftplib.",
    "smtplib.",
    "paramiko.",
    "websocket.",
    "websockets.",
    "grpc.",
    "telnetlib.",
)
_WRITE_METHODS = {"write_text", "write_bytes"}


def python_findings(tree: ast.Module) -> Iterator[Hit]:
    """Every dangerous call in a parsed module."""
    for call in resolved_calls(tree):
        for check in _CHECKS:
            hit = check(call)
            if hit is not None:
                yield hit


def _shell(call: ResolvedCall) -> Hit | None:
    if call.name in _OS_SHELL:
        return Hit("os-system", call.node.lineno)
    if call.name in _SHELL_ALWAYS:
        return Hit("subprocess-shell", call.node.lineno)
    if call.name.startswith("subprocess.") and _keyword_true(call.node, "shell"):
        return Hit("subprocess-shell", call.node.lineno)
    return None


def _eval(call: ResolvedCall) -> Hit | None:
    if call.name in {"eval", "exec", "builtins.eval", "builtins.exec"}:
        return Hit("eval-exec", call.node.lineno)
    return None


def _deserialise(call: ResolvedCall) -> Hit | None:
    name = call.name
    if name in _DESERIALISE:
        return Hit("unsafe-deserialization", call.node.lineno)
    if name in {"yaml.load", "yaml.load_all"} and not _safe_yaml(call.node):
        return Hit("unsafe-deserialization", call.node.lineno)
    if name == "numpy.load" and _keyword_true(call.node, "allow_pickle"):
        return Hit("unsafe-deserialization", call.node.lineno)
    if name == "torch.load" and not _keyword_true(call.node, "weights_only"):
        return Hit("unsafe-deserialization", call.node.lineno, "medium")
    return None


def _delete(call: ResolvedCall) -> Hit | None:
    return Hit("recursive-delete", call.node.lineno) if call.name == "shutil.rmtree" else None


def _network(call: ResolvedCall) -> Hit | None:
    if call.name.startswith(_NETWORK_PREFIXES) or call.name == "urllib.request.urlopen":
        return Hit("network-call", call.node.lineno)
    return None


def _write(call: ResolvedCall) -> Hit | None:
    """open('/etc/x', 'w') or Path('/etc/x').write_text(…): a write to an absolute path."""
    node = call.node
    target: ast.expr | None = None
    if call.name in {"open", "io.open", "os.open"} and node.args and _writes(node):
        target = node.args[0]
    elif isinstance(node.func, ast.Attribute) and node.func.attr in _WRITE_METHODS:
        inner = node.func.value
        target = inner.args[0] if isinstance(inner, ast.Call) and inner.args else None
    elif (
        call.name in {"shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.move"}
        and len(node.args) > 1
    ):
        target = node.args[1]
    if isinstance(target, ast.Constant) and isinstance(target.value, str):
        return Hit("write-outside-workdir", node.lineno, target=target.value)
    return None


def _writes(node: ast.Call) -> bool:
    mode = (
        node.args[1]
        if len(node.args) > 1
        else next((k.value for k in node.keywords if k.arg == "mode"), None)
    )
    return (
        isinstance(mode, ast.Constant)
        and isinstance(mode.value, str)
        and any(c in mode.value for c in "wax+")
    )


def _keyword_true(node: ast.Call, name: str) -> bool:
    for keyword in node.keywords:
        if keyword.arg == name:
            return not (isinstance(keyword.value, ast.Constant) and not keyword.value.value)
    return False


def _safe_yaml(node: ast.Call) -> bool:
    loader = (
        node.args[1]
        if len(node.args) > 1
        else next((k.value for k in node.keywords if k.arg == "Loader"), None)
    )
    if loader is None:
        return False
    name = loader.attr if isinstance(loader, ast.Attribute) else getattr(loader, "id", "")
    return name in _SAFE_YAML_LOADERS


_CHECKS: tuple[Callable[[ResolvedCall], Hit | None], ...] = (
    _shell,
    _eval,
    _deserialise,
    _delete,
    _network,
    _write,
)
