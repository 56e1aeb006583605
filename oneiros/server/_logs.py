"""The server's own log: one line per refused or failed request, at the level it deserves, written
by a thread of its own.

A handler writes on the thread that logs, which for a request is the event loop: a traceback
formatted and written there (to a pipe a supervisor drains slowly, say) stalls every other request
meanwhile. Records go through a queue instead (the standard library's QueueHandler and
QueueListener), and are formatted and written by the listener's thread.
"""

from __future__ import annotations

import logging
import queue
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from logging.handlers import QueueHandler, QueueListener
from typing import Any

__all__ = ["log_answer", "queued_log", "server_log"]

server_log = logging.getLogger("oneiros.server")


class _Deferred(QueueHandler):
    def prepare(self, record: logging.LogRecord) -> logging.LogRecord:
        # QueueHandler formats here, on the caller's thread (a traceback included) so that a record
        # can cross a process; this queue stays in the process, so the listener formats it.
        return record


@contextmanager
def queued_log() -> Iterator[None]:
    """While the server runs: ``oneiros.server``'s records written to stderr by a thread of their own."""
    records: queue.SimpleQueue[Any] = queue.SimpleQueue()
    target = logging.StreamHandler(sys.stderr)
    target.setFormatter(logging.Formatter("%(levelname)s:  %(name)s: %(message)s"))
    listener = QueueListener(records, target)
    handler = _Deferred(records)
    server_log.addHandler(handler)
    propagated, server_log.propagate = server_log.propagate, False
    listener.start()
    try:
        yield
    finally:
        server_log.removeHandler(handler)
        server_log.propagate = propagated
        listener.stop()


def _level(status: int) -> int:
    if status >= 500:
        return logging.ERROR
    # A token refused or lacking a scope is what an operator watches for; the rest are a client's
    # own mistakes, which it hears in the answer.
    return logging.WARNING if status in (401, 403) else logging.INFO


def log_answer(method: str, path: str, status: int, body: dict[str, Any]) -> None:
    """One line for an error answer: the request, its status, the error's type and message."""
    error = body.get("error", {})
    # %r quotes whatever the client put in the path: a newline there cannot start a forged line.
    server_log.log(_level(status), "%s %r %d %s: %s", method, path, status, error.get("type"), error.get("message"))
