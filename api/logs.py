"""Logs as one JSON object a line, each with the id of the request it belongs to.

What a line may hold is decided where it is written: the access log (``api/http/observed.py``)
writes the method, the route without its query string, the status, the time taken and the
operation's root fields, never a variable, a header or a body. Internal errors are logged
by type and frames, without their message (``api/graphql/errors.py``). The Neo4j driver's
lines are held to the same rule here (``_driver_lines``): none below INFO (its DEBUG lines
quote every statement with its parameters), and an error it names is named by its class
and code, not its message (a Neo4j message can quote a value).
"""

from __future__ import annotations

import contextvars
import json
import logging
from datetime import UTC, datetime
from typing import Any, Literal

__all__ = ["REQUEST_ID", "JsonFormatter", "configure_logging"]

REQUEST_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "metisgraph_request_id", default=None
)

# The attributes every LogRecord has; anything else was passed with ``extra=`` and is kept.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, request id, the extra fields."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = REQUEST_ID.get()
        if request_id is not None:
            line["request_id"] = request_id
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                line[key] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False)


def _named(value: object) -> object:
    """An exception as its class and code (a Neo4j message can quote the request's values);
    anything else as it is."""
    if isinstance(value, BaseException):
        code = getattr(value, "code", None)
        return type(value).__name__ + (f" ({code})" if isinstance(code, str) and code else "")
    return value


def _driver_lines(record: logging.LogRecord) -> bool:
    """The Neo4j driver's lines without query parameters or values: below INFO dropped
    (``C: RUN <statement> <parameters>``), errors in their arguments named, not quoted
    ("Transaction failed and will be retried in 1.0s (<the error>)")."""
    if record.name != "neo4j" and not record.name.startswith("neo4j."):
        return True
    if record.levelno < logging.INFO:
        return False
    if isinstance(record.args, tuple):
        record.args = tuple(_named(arg) for arg in record.args)
    record.exc_info = None  # its traceback's message: the same text
    record.exc_text = None
    return True


def configure_logging(style: Literal["json", "text"], level: str = "INFO") -> None:
    """The process's one log handler, on the root logger (uvicorn's loggers included)."""
    handler = logging.StreamHandler()
    handler.addFilter(_driver_lines)
    if style == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # Not even at METISGRAPH_LOG_LEVEL=DEBUG: the driver would format every statement and
    # its parameters for the filter to drop.
    logging.getLogger("neo4j").setLevel(max(logging.INFO, root.level))
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
