"""RQ's command channel (``rq`` shutdown, kill-horse, stop-job) on a listener thread that stops within a bound.

RQ listens on a worker's channel with redis-py's ``PubSubWorkerThread``, which waits up to 60 s at a
time, and stops it at teardown with UNSUBSCRIBE, then ``stop()``, then a join. Since redis-py 8,
``stop()`` itself joins with no timeout. When the thread read the reply to the UNSUBSCRIBE before
``stop()`` cleared its running flag (a race the thread wins now and then), it went round its loop
once more and waited 60 s for a subscription that would never come, and ``stop()`` waited with it:
an idle ``oneiros worker`` given SIGTERM stayed up 40 s and more in about one run in eight (rq
issues 1613 and 2201 are the same wait). This listener waits at most :data:`WAIT_SECONDS` on the
socket and looks at a stop event of its own between waits, so nothing on the way out waits on
redis-py's thread or on a reply from Redis.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from redis import Redis
from redis.client import PubSub
from redis.exceptions import RedisError

__all__ = ["JOIN_SECONDS", "WAIT_SECONDS", "CommandListener"]

_log = logging.getLogger("oneiros.workers")

WAIT_SECONDS = 0.5
"""The longest the listener waits on the channel before it looks whether it is stopping: the time a
worker's stop may wait for it. Commands arrive at once whatever this is; a short wait costs a wakeup
of an idle thread twice a second (RQ polled five times a second before it waited 60 s)."""

JOIN_SECONDS = 2.0
"""How long a stop waits for the listener, in case a command's handler is still running (a
kill-horse waiting on its work-horse); past it the daemon thread is left to end with the process."""

_RETRY_SECONDS = 2.0
"""The pause before listening again after Redis could not be read (RQ's own listener waits as long)."""


class CommandListener:
    """A subscription to one worker's command channel, read by a daemon thread until :meth:`stop`."""

    def __init__(self, connection: Redis, channel: str, handler: Callable[[dict[str, Any]], None]) -> None:
        self.pubsub: PubSub = connection.pubsub()
        self.pubsub.subscribe(**{channel: handler})
        self.channel = channel
        self._stopping = threading.Event()
        self.thread = threading.Thread(target=self._listen, name=f"oneiros-commands-{channel}", daemon=True)

    def start(self) -> CommandListener:
        self.thread.start()
        return self

    def _listen(self) -> None:
        while not self._stopping.is_set():
            try:
                # A message is handed to the handler inside this call; the timeout bounds only the wait.
                self.pubsub.get_message(ignore_subscribe_messages=True, timeout=WAIT_SECONDS)
            except RedisError as exc:
                # Redis restarted or went away: redis-py subscribes again when it reconnects. The work
                # loop says so in the log already; here it is a debug line, once per attempt.
                _log.debug("command channel %s unreadable (%r); listening again", self.channel, exc)
                self._stopping.wait(_RETRY_SECONDS)
            except Exception:  # a bad command payload must not end the listening (RQ's thread died on it)
                _log.exception("worker command on %s could not be handled", self.channel)

    def stop(self, timeout: float = JOIN_SECONDS) -> bool:
        """Stop listening; True when the thread ended within ``timeout`` and the connection was closed.

        Sends no UNSUBSCRIBE: closing the connection ends the subscription on the server, and waiting
        for a reply is what could hang. A thread still in a handler keeps its connection open, since
        closing it under a reader would hand the reader a half-read socket."""
        self._stopping.set()
        if self.thread.is_alive() and threading.current_thread() is not self.thread:
            self.thread.join(timeout)
        if self.thread.is_alive():
            return False
        self.pubsub.close()
        return True
