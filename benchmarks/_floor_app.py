"""The least a Python HTTP server can do to record an episode: a raw ASGI app on uvicorn that reads
the body, decodes it with msgspec, appends through ``Golems.record_episodes`` on a worker thread
(the event loop must not wait on the database) and answers the position. No authentication, no
routing, no follower, no consistency: the floor ``benchmarks/server.py`` sets beside the server's
write latency, in the same run. Run as ``uvicorn benchmarks._floor_app:app`` with the store in
``FLOOR_STORE``."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import msgspec

from oneiros.events._types import Episode
from oneiros.fsm._service import Golems
from oneiros.store._store import open_store


class _Body(msgspec.Struct):
    episodes: list[Episode]


_decoder = msgspec.json.Decoder(_Body)
_golems = Golems(open_store(os.environ["FLOOR_STORE"]))


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            await send({"type": message["type"] + ".complete"})
            if message["type"] == "lifespan.shutdown":
                return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    golem_id = scope["path"].split("/")[4]  # /api/v1/golems/{id}/episodes
    records = await asyncio.to_thread(_golems.record_episodes, golem_id, _decoder.decode(body).episodes)
    answer = msgspec.json.encode({"position": records[-1].position})
    await send({"type": "http.response.start", "status": 201, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": answer})
