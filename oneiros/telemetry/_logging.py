"""How oneiros's processes log: one line per phase start and end, as text or as JSON lines."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Mapping
from typing import Any

import msgspec

from oneiros.settings._runtime import LogSettings

__all__ = ["JsonFormatter", "configure_logging", "log_fields"]

_FIELDS = "oneiros_fields"


def log_fields(logger: logging.Logger, message: str, fields: Mapping[str, Any], level: int = logging.INFO) -> None:
    """Log ``message key=value ...``; the JSON format writes the fields as keys of their own."""
    text = " ".join(f"{k}={_plain(v)}" for k, v in fields.items())
    logger.log(level, "%s %s", message, text, extra={_FIELDS: (message, dict(fields))})


def _plain(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and the record's fields."""

    def format(self, record: logging.LogRecord) -> str:
        carried: tuple[str, dict[str, Any]] = getattr(record, _FIELDS, (record.getMessage(), {}))
        message, fields = carried
        out: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": message,
            **fields,
        }
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return msgspec.json.encode(out).decode()


class _NoRqTraceback(logging.Filter):
    """Drops RQ's report of a failed job: its traceback over many lines at ERROR, which broke the
    JSON lines. The worker's exception handler says the failure in one line (and the traceback at
    DEBUG); RQ keeps the traceback in the job's result."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (isinstance(record.msg, str) and "exception raised while executing" in record.msg)


def configure_logging(settings: LogSettings) -> None:
    """oneiros's loggers at ``settings.level`` on stderr, in UTC, and RQ's in the same format (its
    level is set by the worker, ``settings.rq_level``)."""
    formatter: logging.Formatter
    if settings.format == "json":
        formatter = JsonFormatter()
    else:
        formatter = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    formatter.converter = time.gmtime
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter)
    root = logging.getLogger("oneiros")
    root.handlers[:] = [handler]
    root.setLevel(settings.level)
    root.propagate = False
    # With a handler here RQ adds none of its own (plain text on stdout and stderr) to rq.worker.
    rq_handler = logging.StreamHandler(sys.stderr)
    rq_handler.setFormatter(formatter)
    rq_handler.addFilter(_NoRqTraceback())
    rq = logging.getLogger("rq")
    rq.handlers[:] = [rq_handler]
    rq.propagate = False
