"""The REST routes under ``/api/v1``, declared once: Starlette routes and the OpenAPI document are
both made from the same table."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from oneiros._errors import InputError
from oneiros._input import DECODE_ERRORS, read_error
from oneiros.app._memory_block import MemoryBlock
from oneiros.app._oneiros import Oneiros
from oneiros.app._shapes import (
    Appended,
    Belief,
    Budget,
    CycleRun,
    DreamingStatus,
    Entry,
    EntryHistory,
    EntryLineage,
    Golem,
    Health,
    JournalEntry,
    LogEvent,
    Machine,
    Memory,
    MemoryVersion,
    NoiseFragment,
    Observation,
    OutcomeMoved,
    Page,
    RecallResult,
    Report,
    Run,
    ShouldDream,
)
from oneiros.projections._profile import ProfileItem
from oneiros.server._auth import Principal, Scope
from oneiros.server._consistency import POSITION_HEADER, floor_of
from oneiros.server._models import (
    ActivityIn,
    CycleIn,
    EpisodesIn,
    FeedbackIn,
    GolemIn,
    MemoryBlockIn,
    RecallIn,
    WhoAmI,
    checked_id,
    checked_statuses,
)
from oneiros.server._service import Service
from oneiros.telemetry._spanfile import SpanRecord
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

    @property
    def app(self) -> Oneiros:
        return self.service.app

    def path(self, name: str) -> str:
        return checked_id(name, str(self.request.path_params[name]))

    def number(self, name: str, default: int | None = None, lo: int = 0, hi: int = MAX_POSITION) -> int | None:
        return query_number(name, self.request.query_params.get(name), default, lo, hi)

    def flag(self, name: str) -> bool:
        """A true/false query parameter (absent: false)."""
        raw = self.request.query_params.get(name, "false").lower()
        if raw not in ("true", "false", "1", "0", ""):
            raise InputError(f"query parameter {name}={raw!r} must be true or false")
        return raw in ("true", "1")

    def limit(self) -> int:
        settings = self.service.settings
        value = self.number("limit", settings.page_size, 1, settings.max_page_size)
        assert value is not None
        return value

    def cursor(self) -> str | None:
        return self.request.query_params.get("cursor") or None

    def golem(self, scope: Scope = "read") -> str:
        """The ``golem`` query parameter, else the token's one golem, else the config's golem."""
        named = self.request.query_params.get("golem")
        return self.service.golem(self.who, scope, checked_id("golem", named) if named else None)

    def golem_path(self, scope: Scope = "read") -> str:
        """The path's golem, once the token may use ``scope`` on it."""
        golem_id = self.path("golem_id")
        self.who.require(scope, golem_id)
        return golem_id

    def entry(self, scope: Scope = "read") -> Entry:
        """The path's staged entry, once the token may use ``scope`` on its golem."""
        return self.service.entry(self.who, self.path("entry_id"), scope)

    def statuses(self) -> tuple[str, ...]:
        return checked_statuses(self.request.query_params.getlist("status"), "query parameter status")

    @property
    def key(self) -> str | None:
        """The request's ``Idempotency-Key`` header, if it has one."""
        return self.request.headers.get("idempotency-key")


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
    returns: Any = None
    """The Struct (or list of Structs) a success answers with: its schema is the OpenAPI response's."""


_PAGE = (Query("limit", int, "Items per page."), Query("cursor", str, "The next_cursor of the previous page."))
_GOLEM = Query("golem", str, "Golem id (default: the token's one golem, else the config's golem).")
_STATUS = Query("status", str, "Only these statuses (repeatable or comma-separated).", many=True)


def _journal(c: Call) -> str | Page[JournalEntry]:
    if c.request.query_params.get("format") == "markdown":
        return c.app.journal_markdown(c.golem_path())
    return c.app.journal(c.golem_path(), limit=c.limit(), cursor=c.cursor())


def _diff(c: Call) -> str:
    old, new = c.number("from", None, 1), c.number("to", None, 1)
    if old is None or new is None:
        raise InputError("a MEMORY.md diff needs ?from=<version>&to=<version>")
    return c.app.memory_diff(c.golem_path(), old, new)


def _review(c: Call) -> Entry:
    body: FeedbackIn = c.body
    entry_id = c.entry("write").entry_id
    return c.app.review(entry_id, body.decision, who=c.who.name, why=body.feedback, idempotency_key=c.key)


def _created(c: Call) -> Golem:
    body: GolemIn = c.body
    c.who.require("write", body.golem_id)
    return c.app.create_golem(body.golem_id, body.name, idempotency_key=c.key)


def _lineage(c: Call) -> EntryLineage:
    entry = c.entry()
    return c.app.lineage(entry.entry_id, entry.golem_id)


def _whoami(who: Principal) -> WhoAmI:
    return WhoAmI(name=who.name, scopes=list(who.scopes), golems=list(who.golems), write=who.has("write"))


OPS: tuple[Op, ...] = (
    Op("GET", "/dreaming/status", "Effective config, latest run and pending count (Dense-Mem).", "read",
       lambda c: c.app.status(c.golem()), query=(_GOLEM,), returns=DreamingStatus),
    Op("GET", "/dreaming/runs", "Recent cycles, newest first (Dense-Mem).", "read",
       lambda c: c.app.runs(c.golem(), c.limit(), c.cursor()), query=(_GOLEM, *_PAGE), returns=Page[Run]),
    Op("GET", "/dreams", "Dreams (staged entries), newest first, by status (Dense-Mem).", "read",
       lambda c: c.app.entries(c.golem(), c.statuses(), limit=c.limit(), cursor=c.cursor(), newest_first=True),
       query=(_GOLEM, _STATUS, *_PAGE), returns=Page[Entry]),
    Op("GET", "/dreams/{entry_id}", "One dream (a staged entry; Dense-Mem).", "read", lambda c: c.entry(),
       returns=Entry),
    Op("POST", "/dreams/{entry_id}/feedback", "Resolve feedback: reinforce, stale, reject, promote_candidate, revoke.",
       "write", _review, body=FeedbackIn, returns=Entry),
    Op("GET", "/golems", "Golems this token sees, with mode and phase.", "read",
       lambda c: c.app.golems(c.limit(), c.cursor(), within=c.who.golems), query=_PAGE, returns=Page[Golem]),
    Op("POST", "/golems", "Create a golem.", "write", _created, body=GolemIn, status=201, returns=Golem),
    Op("GET", "/golems/{golem_id}", "A golem's state, at the head or as of a log position.", "read",
       lambda c: c.app.golem(c.golem_path(), c.number("at", None, 0)),
       query=(Query("at", int, "Log position to rebuild the state as of."),), returns=Golem),
    Op("POST", "/golems/{golem_id}/episodes", "Record waking episodes.", "write",
       lambda c: c.app.record_episodes(c.golem_path("write"), c.body.episodes, idempotency_key=c.key),
       body=EpisodesIn, status=201,
       returns=Appended),
    Op("POST", "/golems/{golem_id}/activity", "Record activity (a message, an action, a turn).", "write",
       lambda c: c.app.record_activity(c.golem_path("write"), c.body.kind, c.body.detail, idempotency_key=c.key),
       body=ActivityIn,
       status=201, returns=Appended),
    Op("POST", "/golems/{golem_id}/outcomes", "Record a waking outcome; returns the entries it moved (and why).",
       "write", lambda c: c.app.record_outcome(
           c.golem_path("write"), c.body, explain=c.flag("explain"), idempotency_key=c.key),
       body=OutcomeInput, status=201, returns=OutcomeMoved,
       query=(Query("explain", bool, "Also say why each entry moved, and why the nearest others did not."),)),
    Op("POST", "/golems/{golem_id}/cycles", "Start a dream cycle now (Dense-Mem's run_dreaming_cycle).", "write",
       lambda c: c.service.dream(c.who, c.path("golem_id"), c.body, c.key), body=CycleIn, status=202,
       returns=CycleRun),
    Op("POST", "/golems/{golem_id}/recall", "Recall memory; related dreams come apart from results.", "read",
       lambda c: c.app.recall(
           c.golem_path(), c.body.query, c.body.limit, record=c.who.has("write"), idempotency_key=c.key),
       body=RecallIn, returns=RecallResult),
    Op("POST", "/golems/{golem_id}/memory-block", "Recall as a prompt section within a token budget; records nothing.",
       "read", lambda c: c.app.memory_block(c.golem_path(), c.body.query, budget_tokens=c.body.budget_tokens),
       body=MemoryBlockIn, returns=MemoryBlock),
    Op("GET", "/golems/{golem_id}/journal", "The dream journal, newest first (?format=markdown for journal.md).",
       "read", _journal, query=(Query("format", str, "json (default) or markdown."), *_PAGE),
       returns=Page[JournalEntry]),
    Op("GET", "/golems/{golem_id}/staging", "The staging buffer.", "read",
       lambda c: c.app.entries(c.golem_path(), c.statuses(), limit=c.limit(), cursor=c.cursor()),
       query=(_STATUS, *_PAGE), returns=Page[Entry]),
    Op("GET", "/golems/{golem_id}/beliefs", "Dream beliefs (Bumblebee).", "read",
       lambda c: c.app.beliefs(c.golem_path(), c.limit(), c.cursor()), query=_PAGE, returns=Page[Belief]),
    Op("GET", "/golems/{golem_id}/noise", "[dream] noise fragments (Bumblebee).", "read",
       lambda c: c.app.noise(c.golem_path(), c.limit(), c.cursor()), query=_PAGE, returns=Page[NoiseFragment]),
    Op("GET", "/golems/{golem_id}/observations", "Observations with RED/YLW/GRN priority (OpenSeed).", "read",
       lambda c: c.app.observations(c.golem_path(), c.limit(), c.cursor()), query=_PAGE,
       returns=Page[Observation]),
    Op("GET", "/golems/{golem_id}/profile", "The user's profile (core memory): standing instructions, preferences, "
       "facts about themselves, each naming its turns (?history=true: the replaced entries too).", "read",
       lambda c: c.app.profile(c.golem_path(), history=c.flag("history")),
       query=(Query("history", bool, "Include the entries later ones replaced."),), returns=list[ProfileItem]),
    Op("GET", "/golems/{golem_id}/memory", "The newest MEMORY.md (Ethos); null before any promotion.", "read",
       lambda c: Memory(memory=c.app.memory(c.golem_path())), returns=Memory),
    Op("GET", "/golems/{golem_id}/memory/versions", "Every MEMORY.md version, newest first.", "read",
       lambda c: c.app.memory_versions(c.golem_path(), c.limit(), c.cursor()), query=_PAGE,
       returns=Page[MemoryVersion]),
    Op("GET", "/golems/{golem_id}/memory/versions/{version:int}", "One MEMORY.md version.", "read",
       lambda c: c.app.memory(c.golem_path(), int(c.path("version"))), returns=MemoryVersion),
    Op("GET", "/golems/{golem_id}/memory/diff", "Unified diff of two MEMORY.md versions.", "read", _diff,
       query=(Query("from", int, "Older version."), Query("to", int, "Newer version.")), media="text/plain",
       returns=str),
    Op("GET", "/golems/{golem_id}/cycles/{cycle_id}/events", "A cycle's events in log order.", "read",
       lambda c: c.app.cycle_events(
           c.golem_path(), c.path("cycle_id"), after=c.number("cursor", 0) or 0, limit=c.limit()),
       query=_PAGE, returns=Page[LogEvent]),
    Op("GET", "/golems/{golem_id}/cycles/{cycle_id}/report", "A cycle's DreamReport and wake-up summary.", "read",
       lambda c: c.app.report(c.golem_path(), c.path("cycle_id")), returns=Report),
    Op("GET", "/golems/{golem_id}/cycles/{cycle_id}/budget", "What a cycle spent, by phase and against its caps.",
       "read", lambda c: c.app.budget(c.golem_path(), c.path("cycle_id")), returns=Budget),
    Op("GET", "/golems/{golem_id}/cycles/{cycle_id}/trace", "A cycle's OpenTelemetry spans, across workers.",
       "read", lambda c: c.app.trace(c.golem_path(), c.path("cycle_id")), returns=list[SpanRecord]),
    # What the web inspector reads besides (docs/inspector.md).
    Op("GET", "/machine", "The GolemMode/DreamPhase machine's own declaration: states and transitions.", "read",
       lambda c: c.app.machine(), returns=Machine),
    Op("GET", "/whoami", "The token's name, scopes and golems.", "read", lambda c: _whoami(c.who), returns=WhoAmI),
    Op("GET", "/golems/{golem_id}/should-dream", "Whether the golem would dream now: every gate and trigger.",
       "read", lambda c: c.app.should_dream(c.golem_path()), returns=ShouldDream),
    Op("GET", "/golems/{golem_id}/cycles/{cycle_id}", "One cycle's journal entry (fragments, thread, phases).",
       "read", lambda c: c.app.cycle(c.golem_path(), c.path("cycle_id")), returns=JournalEntry),
    Op("GET", "/dreams/{entry_id}/history", "A dream's events; each confidence step names its outcome.", "read",
       lambda c: c.app.entry_history(c.entry().entry_id), returns=EntryHistory),
    # Insight (docs/insight.md).
    Op("GET", "/golems/{golem_id}/health", "Dreaming-health alarms raised now, and every one raised and cleared.",
       "read", lambda c: c.app.health(c.golem_path(), metrics=False)[0], returns=Health),
    Op("GET", "/dreams/{entry_id}/lineage", "Where a dream came from: episodes, generator call, prompt, moves.",
       "read", _lineage, returns=EntryLineage),
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


async def _authorised(service: Service, who: Principal, scope: Scope, params: dict[str, Any]) -> None:
    """Forbidden (or EntryNotFound) unless ``who`` may use ``scope`` on the path's golem or dream."""
    if "golem_id" in params:
        who.require(scope, checked_id("golem_id", str(params["golem_id"])))
    if "entry_id" in params:
        await run_in_threadpool(service.entry, who, checked_id("entry_id", str(params["entry_id"])), scope)


def _endpoint(op: Op, service: Service) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        who = principal_of(request)
        who.require(op.scope)
        body = None
        if op.body is not None:
            # Who may act on what the path names is settled before the body is read: a token bound to
            # another golem hears 403 (or, for a dream, 404 as if absent), whatever it sent.
            await _authorised(service, who, op.scope, request.path_params)
            raw = await request.body()
            try:
                body = msgspec.json.decode(raw or b"{}", type=op.body)
            except DECODE_ERRORS as exc:
                raise read_error(exc, raw, "request body") from None
        call = Call(service, who, request, body)
        floor = floor_of(request.headers, request.query_params)
        result, written = await run_in_threadpool(service.call, functools.partial(op.run, call), floor)
        if isinstance(result, str):
            media = "text/markdown" if op.media == "application/json" else op.media
            response = Response(result, status_code=op.status, media_type=f"{media}; charset=utf-8", headers=_HEADERS)
        else:
            response = json_response(result, op.status)
        if written:
            response.headers[POSITION_HEADER] = str(written)
        return response

    return endpoint


def routes(service: Service) -> list[Route]:
    return [Route(PREFIX + op.path, _endpoint(op, service), methods=[op.method]) for op in OPS]
