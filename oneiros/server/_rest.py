"""The REST routes under ``/api/v1``, declared once: Starlette routes and the OpenAPI document are
both made from the same table."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from oneiros._errors import InputError
from oneiros.server._auth import Principal, Scope
from oneiros.server._insight import dream_lineage, golem_health
from oneiros.server._inspect import cycle_entry, dream_history, machine, should_dream_now, whoami
from oneiros.server._models import (
    ActivityIn,
    CycleIn,
    EpisodesIn,
    FeedbackIn,
    GolemIn,
    RecallIn,
    checked_id,
    checked_statuses,
)
from oneiros.server._service import Service, dream_row
from oneiros.validation._review import OutcomeInput

__all__ = [
    "MAX_POSITION",
    "PREFIX",
    "Op",
    "Query",
    "json_response",
    "operations",
    "principal_of",
    "query_number",
    "routes",
]

PREFIX = "/api/v1"

MAX_POSITION = 2**63 - 1
"""The largest log position, cursor or count a query takes: what the stores keep in a signed 64-bit
integer (past it the database driver fails)."""


def query_number(name: str, raw: str | None, default: int | None, lo: int = 0, hi: int = MAX_POSITION) -> int | None:
    """``raw`` as an integer within ``lo``-``hi``; ``default`` when absent; else InputError naming it."""
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InputError(f"query parameter {name}={raw!r} must be an integer") from None
    if not lo <= value <= hi:
        raise InputError(f"query parameter {name}={value} must be {lo}-{hi}")
    return value


class Query(NamedTuple):
    name: str
    kind: type
    description: str
    many: bool = False


class Call(NamedTuple):
    service: Service
    who: Principal
    request: Request
    body: Any

    def path(self, name: str) -> str:
        return checked_id(name, str(self.request.path_params[name]))

    def number(self, name: str, default: int | None = None, lo: int = 0, hi: int = MAX_POSITION) -> int | None:
        return query_number(name, self.request.query_params.get(name), default, lo, hi)

    def limit(self) -> int:
        settings = self.service.settings
        value = self.number("limit", settings.page_size, 1, settings.max_page_size)
        assert value is not None
        return value

    def cursor(self) -> str | None:
        return self.request.query_params.get("cursor") or None

    def golem(self) -> str:
        """The ``golem`` query parameter, else the token's one golem, else the config's golem."""
        named = self.request.query_params.get("golem")
        if named:
            return checked_id("golem", named)
        return self.who.golems[0] if len(self.who.golems) == 1 else self.service.config.golem

    def flag(self, name: str) -> bool:
        """A true/false query parameter (absent: false)."""
        raw = self.request.query_params.get(name, "false").lower()
        if raw not in ("true", "false", "1", "0", ""):
            raise InputError(f"query parameter {name}={raw!r} must be true or false")
        return raw in ("true", "1")

    def statuses(self) -> tuple[str, ...]:
        return checked_statuses(self.request.query_params.getlist("status"), "query parameter status")


class Op(NamedTuple):
    method: str
    path: str
    summary: str
    scope: Scope
    run: Callable[[Call], Any]
    body: type[msgspec.Struct] | None = None
    query: tuple[Query, ...] = ()
    status: int = 200
    media: str = "application/json"


_PAGE = (Query("limit", int, "Items per page."), Query("cursor", str, "The next_cursor of the previous page."))
_GOLEM = Query("golem", str, "Golem id (default: the token's one golem, else the config's golem).")
_STATUS = Query("status", str, "Only these statuses (repeatable or comma-separated).", many=True)


def _sink(which: str) -> Callable[[Call], Any]:
    return lambda c: c.service.sink(c.who, c.path("golem_id"), which, c.limit(), c.cursor())


def _journal(c: Call) -> Any:
    if c.request.query_params.get("format") == "markdown":
        return c.service.journal_markdown(c.who, c.path("golem_id"))
    return c.service.journal(c.who, c.path("golem_id"), c.limit(), c.cursor())


def _diff(c: Call) -> str:
    old, new = c.number("from", None, 1), c.number("to", None, 1)
    if old is None or new is None:
        raise InputError("a MEMORY.md diff needs ?from=<version>&to=<version>")
    return c.service.memory_diff(c.who, c.path("golem_id"), old, new)


def _created(records: list[Any]) -> dict[str, Any]:
    return {"appended": len(records), "positions": [r.position for r in records]}


OPS: tuple[Op, ...] = (
    Op("GET", "/dreaming/status", "Effective config, latest run and pending count (Dense-Mem).", "read",
       lambda c: c.service.status(c.who, c.golem()), query=(_GOLEM,)),
    Op("GET", "/dreaming/runs", "Recent cycles, newest first (Dense-Mem).", "read",
       lambda c: c.service.runs(c.who, c.golem(), c.limit(), c.cursor()), query=(_GOLEM, *_PAGE)),
    Op("GET", "/dreams", "Dreams (staged hypotheses), newest first, by status (Dense-Mem).", "read",
       lambda c: c.service.dreams(c.who, c.golem(), c.statuses(), c.limit(), c.cursor()),
       query=(_GOLEM, _STATUS, *_PAGE)),
    Op("GET", "/dreams/{dream_id}", "One dream (Dense-Mem).", "read",
       lambda c: dream_row(c.service.dream(c.who, c.path("dream_id")))),
    Op("POST", "/dreams/{dream_id}/feedback", "Resolve feedback: reinforce, stale, reject, promote_candidate, revoke.",
       "write", lambda c: dream_row(c.service.feedback(c.who, c.path("dream_id"), c.body.decision, c.body.feedback)),
       body=FeedbackIn),
    Op("GET", "/golems", "Golems this token sees, with mode and phase.", "read",
       lambda c: c.service.golems(c.who, c.limit(), c.cursor()), query=_PAGE),
    Op("POST", "/golems", "Create a golem.", "write",
       lambda c: c.service.create_golem(c.who, c.body.golem_id, c.body.name).summary(), body=GolemIn, status=201),
    Op("GET", "/golems/{golem_id}", "A golem's state, at the head or as of a log position.", "read",
       lambda c: c.service.golem_state(c.who, c.path("golem_id"), c.number("at", None, 0)).summary(),
       query=(Query("at", int, "Log position to rebuild the state as of."),)),
    Op("POST", "/golems/{golem_id}/episodes", "Record waking episodes.", "write",
       lambda c: _created(c.service.record_episodes(c.who, c.path("golem_id"), c.body)), body=EpisodesIn, status=201),
    Op("POST", "/golems/{golem_id}/activity", "Record activity (a message, an action, a turn).", "write",
       lambda c: _created(c.service.record_activity(c.who, c.path("golem_id"), c.body.kind, c.body.detail)),
       body=ActivityIn, status=201),
    Op("POST", "/golems/{golem_id}/outcomes", "Record a waking outcome; returns the dreams it moved (and why).",
       "write", lambda c: c.service.record_outcome(c.who, c.path("golem_id"), c.body, explain=c.flag("explain")),
       body=OutcomeInput, status=201, query=(Query("explain", bool, "Also say why each dream moved or not."),)),
    Op("POST", "/golems/{golem_id}/cycles", "Start a dream cycle now (Dense-Mem's run_dreaming_cycle).", "write",
       lambda c: c.service.start_cycle(c.who, c.path("golem_id"), c.body), body=CycleIn, status=202),
    Op("POST", "/golems/{golem_id}/recall", "Recall memory; related dreams come apart from results.", "read",
       lambda c: msgspec.to_builtins(c.service.recall(c.who, c.path("golem_id"), c.body.query, c.body.limit)),
       body=RecallIn),
    Op("GET", "/golems/{golem_id}/journal", "The dream journal, newest first (?format=markdown for journal.md).",
       "read", _journal, query=(Query("format", str, "json (default) or markdown."), *_PAGE)),
    Op("GET", "/golems/{golem_id}/staging", "The staging buffer.", "read",
       lambda c: c.service.staging(c.who, c.path("golem_id"), c.statuses(), c.limit(), c.cursor()),
       query=(_STATUS, *_PAGE)),
    Op("GET", "/golems/{golem_id}/beliefs", "Dream beliefs (Bumblebee).", "read", _sink("beliefs"), query=_PAGE),
    Op("GET", "/golems/{golem_id}/noise", "[dream] noise fragments (Bumblebee).", "read", _sink("noise"), query=_PAGE),
    Op("GET", "/golems/{golem_id}/observations", "Observations with RED/YLW/GRN priority (OpenSeed).", "read",
       _sink("observations"), query=_PAGE),
    Op("GET", "/golems/{golem_id}/memory", "The newest MEMORY.md (Ethos); null before any promotion.", "read",
       lambda c: {"memory": c.service.memory(c.who, c.path("golem_id"), None)}),
    Op("GET", "/golems/{golem_id}/memory/versions", "Every MEMORY.md version, newest first.", "read",
       lambda c: c.service.memory_versions(c.who, c.path("golem_id"), c.limit(), c.cursor()), query=_PAGE),
    Op("GET", "/golems/{golem_id}/memory/versions/{version:int}", "One MEMORY.md version.", "read",
       lambda c: c.service.memory(c.who, c.path("golem_id"), int(c.path("version")))),
    Op("GET", "/golems/{golem_id}/memory/diff", "Unified diff of two MEMORY.md versions.", "read", _diff,
       query=(Query("from", int, "Older version."), Query("to", int, "Newer version.")), media="text/plain"),
    Op("GET", "/golems/{golem_id}/cycles/{cycle_id}/events", "A cycle's events in log order.", "read",
       lambda c: c.service.cycle_events(
           c.who, c.path("golem_id"), c.path("cycle_id"), c.number("cursor", 0) or 0, c.limit()),
       query=_PAGE),
    Op("GET", "/golems/{golem_id}/cycles/{cycle_id}/report", "A cycle's DreamReport and wake-up summary.", "read",
       lambda c: c.service.cycle_report(c.who, c.path("golem_id"), c.path("cycle_id"))),
    Op("GET", "/golems/{golem_id}/cycles/{cycle_id}/budget", "What a cycle spent, by phase and against its caps.",
       "read", lambda c: c.service.cycle_budget(c.who, c.path("golem_id"), c.path("cycle_id"))),
    Op("GET", "/golems/{golem_id}/cycles/{cycle_id}/trace", "A cycle's OpenTelemetry spans, across workers.",
       "read", lambda c: c.service.cycle_trace(c.who, c.path("golem_id"), c.path("cycle_id"))),
    # What the web inspector reads besides (docs/inspector.md).
    Op("GET", "/machine", "The GolemMode/DreamPhase machine's own declaration: states and transitions.", "read",
       lambda c: machine()),
    Op("GET", "/whoami", "The token's name, scopes and golems.", "read", lambda c: whoami(c.who)),
    Op("GET", "/golems/{golem_id}/should-dream", "Whether the golem would dream now: every gate and trigger.",
       "read", lambda c: should_dream_now(c.service, c.who, c.path("golem_id"))),
    Op("GET", "/golems/{golem_id}/cycles/{cycle_id}", "One cycle's journal entry (fragments, thread, phases).",
       "read", lambda c: cycle_entry(c.service, c.who, c.path("golem_id"), c.path("cycle_id"))),
    Op("GET", "/dreams/{dream_id}/history", "A dream's events; each confidence step names its outcome.", "read",
       lambda c: dream_history(c.service, c.who, c.path("dream_id"))),
    # Insight (docs/insight.md).
    Op("GET", "/golems/{golem_id}/health", "Dreaming-health alarms raised now, and every one raised and cleared.",
       "read", lambda c: golem_health(c.service, c.who, c.path("golem_id"))),
    Op("GET", "/dreams/{dream_id}/lineage", "Where a dream came from: episodes, generator call, prompt, moves.",
       "read", lambda c: dream_lineage(c.service, c.who, c.path("dream_id"))),
)  # fmt: skip


def operations() -> tuple[Op, ...]:
    return OPS


def principal_of(request: Request) -> Principal:
    who: Principal = request.scope["oneiros.principal"]
    return who


_encoder = msgspec.json.Encoder()
_HEADERS = {"Cache-Control": "no-store"}  # nosniff is added to every answer by the guard


def json_response(value: Any, status: int = 200) -> Response:
    # Dream text is data: served as JSON or plain text (nosniff from the guard), never as HTML.
    return Response(_encoder.encode(value), status_code=status, media_type="application/json", headers=_HEADERS)


def _endpoint(op: Op, service: Service) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        who = principal_of(request)
        who.require(op.scope)
        body = None
        if op.body is not None:
            raw = await request.body()
            try:
                body = msgspec.json.decode(raw or b"{}", type=op.body)
            except (msgspec.ValidationError, msgspec.DecodeError) as exc:
                raise InputError(f"request body: {exc}") from None
        result = await run_in_threadpool(op.run, Call(service, who, request, body))
        if isinstance(result, str):
            media = "text/markdown" if op.media == "application/json" else op.media
            return Response(result, status_code=op.status, media_type=f"{media}; charset=utf-8", headers=_HEADERS)
        return json_response(result, op.status)

    return endpoint


def routes(service: Service) -> list[Route]:
    return [Route(PREFIX + op.path, _endpoint(op, service), methods=[op.method]) for op in OPS]
