"""The worker's command listener (``oneiros/workers/_commands.py``) against a redis-server of the
test's own: commands reach their handler, and a stop is bounded whatever the listener is doing."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from redis import Redis

from oneiros.workers._commands import WAIT_SECONDS, CommandListener
from tests.workers.conftest import RedisServer

pytestmark = pytest.mark.redis

CHANNEL = "rq:pubsub:test-worker"


def _subscribers(connection: Redis) -> int:
    return sum(count for _, count in connection.pubsub_numsub(CHANNEL))


def _wait_for_subscriber(connection: Redis, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while _subscribers(connection) < 1:
        assert time.monotonic() < deadline, f"no subscriber on {CHANNEL} within {timeout} s"
        time.sleep(0.05)


def test_an_idle_listener_hands_on_commands_and_stops_within_its_wait(redis_url: str) -> None:
    """A published command reaches the handler; stopping an idle listener takes no longer than one
    wait on the channel, ends its thread and its subscription on the server."""
    connection = Redis.from_url(redis_url)
    got: list[Any] = []
    arrived = threading.Event()

    def handler(message: dict[str, Any]) -> None:
        got.append(message["data"])
        arrived.set()

    listener = CommandListener(connection, CHANNEL, handler).start()
    _wait_for_subscriber(connection)
    connection.publish(CHANNEL, b'{"command": "shutdown"}')
    assert arrived.wait(5)
    assert [b'{"command": "shutdown"}'] == got
    for _ in range(5):  # whenever in its wait the stop lands
        started = time.monotonic()
        assert listener.stop()
        assert time.monotonic() - started < WAIT_SECONDS + 0.5
        assert not listener.thread.is_alive()
        listener = CommandListener(connection, CHANNEL, handler).start()
        time.sleep(WAIT_SECONDS * 0.37)
    listener.stop()
    deadline = time.monotonic() + 5
    while _subscribers(connection) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert 0 == _subscribers(connection)


def test_a_listener_stuck_in_a_handler_is_left_after_the_join_bound(redis_url: str) -> None:
    """A handler that does not return (a kill-horse waiting on its work-horse) holds a stop no
    longer than the join bound: stop says False at once after it, and the thread is left running."""
    connection = Redis.from_url(redis_url)
    release = threading.Event()
    entered = threading.Event()

    def handler(_message: dict[str, Any]) -> None:
        entered.set()
        release.wait(30)

    listener = CommandListener(connection, CHANNEL, handler).start()
    _wait_for_subscriber(connection)
    connection.publish(CHANNEL, b"stuck")
    assert entered.wait(5)
    started = time.monotonic()
    assert not listener.stop(timeout=0.5)
    assert time.monotonic() - started < 1.5
    assert listener.thread.is_alive()
    release.set()
    listener.thread.join(5)
    assert not listener.thread.is_alive()  # it saw the stop once its handler returned


def test_a_bad_command_and_a_redis_restart_do_not_end_the_listening(redis_server: RedisServer) -> None:
    """A handler that raises costs a log line, not the listener; after Redis restarts the listener
    subscribes again and the next command arrives (RQ's own thread died on either)."""
    connection = Redis.from_url(redis_server.url)
    got: list[Any] = []
    arrived = threading.Event()

    def handler(message: dict[str, Any]) -> None:
        if message["data"] == b"bad":
            raise ValueError("not a command")
        got.append(message["data"])
        arrived.set()

    listener = CommandListener(connection, CHANNEL, handler).start()
    try:
        _wait_for_subscriber(connection)
        connection.publish(CHANNEL, b"bad")
        redis_server.kill()
        time.sleep(1)
        redis_server.start()
        _wait_for_subscriber(connection, timeout=20)
        connection.publish(CHANNEL, b"after")
        assert arrived.wait(5)
        assert [b"after"] == got
    finally:
        started = time.monotonic()
        assert listener.stop()
        assert time.monotonic() - started < WAIT_SECONDS + 0.5
