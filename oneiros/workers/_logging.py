"""How oneiros's processes log: one line per phase start and end, as text or as JSON lines."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Mapping
from typing import Any

import msgspec

from oneiros.settings import LogSettings

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


def configure_logging(settings: LogSettings) -> None:
    """oneiros's loggers at ``settings.level`` on stderr, in UTC (RQ's own logger is set up by the
    worker, at ``settings.rq_level``)."""
    handler = logging.StreamHandler(sys.stderr)
    formatter: logging.Formatter
    if settings.format == "json":
        formatter = JsonFormatter()
    else:
        formatter = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    formatter.converter = time.gmtime
    handler.setFormatter(formatter)
    root = logging.getLogger("oneiros")
    root.handlers[:] = [handler]
    root.setLevel(settings.level)
    root.propagate = False
